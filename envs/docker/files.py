"""Files in and out of a DockerSandbox's container, through the engine's archive API (tar streams)."""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import docker
import docker.errors

from envs._io import move_into, root_owned


class FilesMixin:
    """put/get/read_file/write_file for DockerSandbox: it provides `_api`, `_cid`, `_path` and `_engine`."""

    _cid: str | None
    _api: docker.APIClient
    _path: Callable[[str], str]
    _engine: Callable[[str], AbstractContextManager[None]]

    def put(self, src: Path, dest: str) -> None:
        """Copy a host file or directory to `dest` (parents created, files owned by root)."""
        with tempfile.TemporaryFile() as f:
            with tarfile.open(fileobj=f, mode="w") as tar:
                tar.add(src, arcname=self._path(dest).lstrip("/"), filter=root_owned)
            f.seek(0)
            with self._engine("put"):
                self._api.put_archive(self._cid, "/", f)

    def write_file(self, path: str, data: bytes) -> None:
        """Write bytes to `path`, creating parent directories."""
        info = tarfile.TarInfo(self._path(path).lstrip("/"))
        info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
        with tempfile.TemporaryFile() as f:
            with tarfile.open(fileobj=f, mode="w") as tar:
                tar.addfile(info, io.BytesIO(data))
            f.seek(0)
            with self._engine("write_file"):
                self._api.put_archive(self._cid, "/", f)

    def _archive(self, path: str, f: Any) -> None:
        with self._engine("copy out"):
            try:
                chunks, _ = self._api.get_archive(self._cid, self._path(path))
            except docker.errors.NotFound as e:
                if "no such container" in str(e.explanation).lower():
                    raise
                msg = f"No such file or directory in the sandbox: {self._path(path)}"
                raise FileNotFoundError(msg) from e
            for chunk in chunks:
                f.write(chunk)
        f.seek(0)

    def read_file(self, path: str) -> bytes:
        """Read a file; FileNotFoundError when absent, IsADirectoryError for a directory."""
        with tempfile.TemporaryFile() as f:
            self._archive(path, f)
            with tarfile.open(fileobj=f) as tar:
                member = tar.next()
                if member is None or member.isdir():
                    raise IsADirectoryError(self._path(path))
                reader = tar.extractfile(member)
                if reader is None:
                    msg = f"Not a regular file in the sandbox: {self._path(path)}"
                    raise FileNotFoundError(msg)
                return reader.read()

    def copy_tree_to(self, src: str, target: FilesMixin, dest: str, keep: Callable[[tarfile.TarInfo], bool],
                     cap_bytes: int) -> tuple[int, list[str]]:
        """Copy the tree at `src` into `target`'s container under `dest` (which must exist), engine to engine:
        the archive is only ever parsed here, never extracted on this host. Members `keep` refuses are left
        out; only regular files, folders and links are carried. Returns (bytes carried, notes).

        Raises:
            FileNotFoundError: `src` does not exist.
            ValueError: the kept members pass `cap_bytes`.
        """
        notes: list[str] = []
        total = 0
        with tempfile.TemporaryFile() as raw, tempfile.TemporaryFile() as out:
            self._archive(src, raw)
            with tarfile.open(fileobj=raw, mode="r|") as tar, tarfile.open(fileobj=out, mode="w") as kept:
                for member in tar:
                    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                        notes.append(f"{member.name}: not a file, folder or link: left out")
                        continue
                    if not keep(member):
                        continue
                    total += member.size if member.isfile() else 0
                    if total > cap_bytes:
                        msg = f"{src} holds more than {cap_bytes // (1024 * 1024)} MiB to carry over"
                        raise ValueError(msg)
                    kept.addfile(member, tar.extractfile(member) if member.isfile() else None)
            out.seek(0)
            with target._engine("put"):
                target._api.put_archive(target._cid, target._path(dest), out)
        return total, notes

    def get(self, src: str, dest: Path) -> None:
        """Copy a file or directory out to `dest` (merged into an existing directory)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as f, tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            self._archive(src, f)
            with tarfile.open(fileobj=f) as tar:
                tar.extractall(tmp, filter="tar")
                top = Path(tmp) / tar.getnames()[0].split("/")[0]
            move_into(top, dest)
