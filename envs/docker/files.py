"""Files in and out of a DockerSandbox's container, through the engine's archive API (tar streams)."""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO

import docker
import docker.errors

from envs._io import move_into, root_owned
from envs.base import REPORT_CAP_BYTES

_CHUNK = 64 * 1024
"""Bytes pulled from the engine's archive stream at a time: what a read holds past its limit."""


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

    @contextmanager
    def _archive(self, path: str) -> Iterator[_ArchiveStream]:
        """The engine's tar stream of `path`, pulled chunk by chunk as it is read and closed on leaving: what
        the caller does not read is never fetched, nor spooled on this host."""
        api = self._api
        with self._engine("copy out"):
            # get_archive's request, with the response kept: it hands back only a generator over it, and a read
            # that stops early must close the response, or the engine keeps the rest of a 600 MB stream open.
            url = api._url("/containers/{0}/archive", self._cid)
            response = api._get(url, params={"path": self._path(path)}, stream=True,
                                headers={"Accept-Encoding": "identity"})
            try:
                api._raise_for_status(response)
            except docker.errors.NotFound as e:
                response.close()
                if "no such container" in str(e.explanation).lower():
                    raise
                msg = f"No such file or directory in the sandbox: {self._path(path)}"
                raise FileNotFoundError(msg) from e
            except BaseException:
                response.close()
                raise
        try:
            yield _ArchiveStream(response.iter_content(_CHUNK), lambda: self._engine("copy out"))
        finally:
            response.close()

    def read_file(self, path: str, *, limit: int = REPORT_CAP_BYTES) -> bytes:
        """The first `limit` bytes of a regular file (all of a shorter one): only about that much of the
        archive is fetched. FileNotFoundError when absent or not a regular file, IsADirectoryError for a
        directory."""
        with self._archive(path) as stream, tarfile.open(fileobj=stream, mode="r|", bufsize=_CHUNK) as tar:
            member = tar.next()
            if member is None or member.isdir():
                raise IsADirectoryError(self._path(path))
            reader = tar.extractfile(member) if member.isfile() else None
            if reader is None:
                msg = f"Not a regular file in the sandbox: {self._path(path)}"
                raise FileNotFoundError(msg)
            return _read_at_most(reader, limit)

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
        with tempfile.TemporaryFile() as out:
            with (self._archive(src) as raw, tarfile.open(fileobj=raw, mode="r|", bufsize=_CHUNK) as tar,
                  tarfile.open(fileobj=out, mode="w") as kept):
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
        """Copy a file or directory out to `dest` (merged into an existing directory). What the sandbox's code
        could have planted is left out: links that leave `dest`, FIFOs and devices (`_confined`)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            with self._archive(src) as raw, tarfile.open(fileobj=raw, mode="r|", bufsize=_CHUNK) as tar:
                tar.extractall(tmp, filter=_confined)
                top = Path(tmp) / tar.getnames()[0].split("/")[0]
            move_into(top, dest)


def _confined(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Extraction filter for a sandbox's files on this host: tarfile's `data` filter (no absolute or `..` names,
    no link whose target leaves `dest`, no FIFO or device, no setuid bits), a refused member left out rather
    than ending the copy. A link to `/etc/shadow` or a FIFO would be read, or block, when the host reads it."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


class _ArchiveStream:
    """A file that tarfile's stream mode reads from: the next chunk of the engine's response, pulled only when
    asked for (under `guard`, which turns engine failures into EnvError)."""

    def __init__(self, chunks: Iterator[bytes], guard: Callable[[], AbstractContextManager[None]]) -> None:
        self._chunks = chunks
        self._guard = guard
        self._left = b""

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (fewer at a chunk's end); b"" at the end of the archive."""
        if not self._left:
            with self._guard():
                self._left = next(self._chunks, b"")
        if size < 0:
            size = len(self._left)
        out, self._left = self._left[:size], self._left[size:]
        return out


def _read_at_most(reader: IO[bytes], limit: int) -> bytes:
    pieces: list[bytes] = []
    left = limit
    while left > 0 and (piece := reader.read(min(left, _CHUNK))):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)
