"""Interpreters Debian does not ship, from the host's own CPython builds (pyenv's `versions/X.Y.Z` folders).

A host build is copied (trimmed: no test suite, no tkinter, no site-packages) into an image on the host's own
Debian suite under /opt/python/X.Y, with the Debian packages of the libraries it links against (found with
ldd and dpkg on the host) and `python3`/`pythonX.Y` in /usr/local/bin, as python:X.Y-slim has them. That
image is the base envs/baseimage.py's recipe builds on, so pip, venv and uv are set up as for every image.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from envs import docker as engine
from envs.base import LABEL
from envs.errors import ImageBuildError
from envs.hostfacts import host_suite, host_versions

PREFIX = "/opt/python"
LAYER_REPO = "autoinstall-rootfs"
SKIP_DIRS = {"test", "tests", "idlelib", "tkinter", "turtledemo", "__phello__"}
"""Standard-library folders no project's tests import (the test suite alone is 130 MB)."""
KEEP_TEST = {"__init__.py", "support", "libregrtest"}
"""What of the `test` package stays (its helpers, not the suite)."""
Log = Callable[[str], None]
_LAYER = """\
# An interpreter layer rendered by envs/pyenv_python.py: a host CPython build on its own Debian suite.
FROM {rootfs}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \\
 && apt-get install -y --no-install-recommends {packages} \\
 && apt-get clean && rm -rf /var/lib/apt/lists/*
ADD python.tar {home}/
RUN echo {home}/lib > /etc/ld.so.conf.d/autoinstall-python{xy}.conf && ldconfig \\
 && ln -s {home}/bin/python{xy} /usr/local/bin/python{xy} \\
 && ln -s python{xy} /usr/local/bin/python3 && ln -s python3 /usr/local/bin/python \\
 && python{xy} -c "import ssl, sqlite3, ctypes, zlib, bz2, lzma, ensurepip"
"""

LAYER_DIGEST = hashlib.sha256(_LAYER.encode()).hexdigest()[:12]


class HostPython(BaseModel):
    """One CPython build on this host that a base image can carry."""

    version: str
    """X.Y"""
    full: str
    """X.Y.Z, from the folder name."""
    prefix: str
    """Its install prefix on the host."""
    digest: str
    """Hash of its executable, libpython and extension modules: another build of the same X.Y.Z differs."""
    suite: str
    """The Debian suite it was built on (the host's), which the image uses."""

    @property
    def home(self) -> str:
        """Where the image keeps it."""
        return f"{PREFIX}/{self.version}"

    @property
    def source(self) -> str:
        """Its identity in recipes and labels: version, build digest, suite."""
        return f"host-python:{self.full}+{self.digest}@{self.suite}"


def host_python(version: str) -> HostPython | None:
    """The host build of X.Y with its identity (full version, digest of its compiled files), or None."""
    prefix = host_versions().get(version)
    suite = host_suite()
    if prefix is None or suite is None:
        return None
    stat = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in _elf_files(prefix, version))
    return HostPython(version=version, full=prefix.name, prefix=str(prefix), digest=_build_digest(stat, str(prefix)),
                      suite=suite)


@lru_cache(maxsize=32)
def _build_digest(files: tuple[tuple[str, int, int], ...], prefix: str) -> str:
    """sha256 over the build's compiled files (cached by path, size and mtime: one hash per process)."""
    h = hashlib.sha256()
    for path, _, _ in files:
        h.update(os.path.relpath(path, prefix).encode())
        h.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return h.hexdigest()[:12]


def _elf_files(prefix: Path, xy: str) -> list[Path]:
    """The executable, libpython and the extension modules the image keeps, sorted."""
    lib = prefix / "lib"
    files = [prefix / "bin" / f"python{xy}", *lib.glob(f"libpython{xy}*.so*")]
    files += [p for p in (lib / f"python{xy}" / "lib-dynload").glob("*.so") if not p.name.startswith("_tkinter")]
    return sorted(p for p in files if p.is_file() and not p.is_symlink())


def _keep(build: HostPython, rel: str) -> bool:
    """Whether a file or folder of the prefix goes into the image."""
    parts = Path(rel).parts
    if parts[:2] != ("lib", f"python{build.version}") or len(parts) == 2:
        return True
    inner = parts[2:]
    if inner[0] == "site-packages":  # the host's own packages (and whatever hooks it installed) stay out
        return inner[1:] in ((), ("README.txt",))
    if inner[0] == "test":  # test.support is imported by some projects' tests, as Debian's stdlib keeps it
        return len(inner) == 1 or inner[1] in KEEP_TEST
    if inner[0].startswith("config-") and inner[-1].endswith(".a"):
        return False  # the static libpython: only for embedding, and half the build's size
    if inner[0] == "lib-dynload" and inner[-1].startswith("_tkinter"):
        return False
    return not any(p in SKIP_DIRS for p in inner)


def write_tarball(build: HostPython, dest: Path) -> int:
    """The trimmed prefix as a tar (owned by root); returns its size in bytes."""
    prefix = Path(build.prefix)

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        rel = os.path.normpath(info.name)
        if rel != "." and not _keep(build, rel):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(dest, "w") as tar:
        tar.add(prefix, arcname=".", filter=keep)
    return dest.stat().st_size


def runtime_packages(build: HostPython) -> list[str]:
    """The Debian packages that own the libraries the build's kept binaries link against (ldd, then dpkg -S).

    Raises:
        ImageBuildError: a library no Debian package owns (built against /usr/local, say), or no ldd/dpkg.
    """
    libs: set[str] = set()
    for path in _elf_files(Path(build.prefix), build.version):
        out = _run(["ldd", str(path)])
        libs |= {m[1] for m in re.finditer(r"=>\s+(/\S+)\s+\(", out) if not m[1].startswith(build.prefix)}
    owners: dict[str, str] = {}
    candidates = {lib: _dpkg_paths(lib) for lib in sorted(libs)}
    found = _run(["dpkg", "-S", *sorted({p for ps in candidates.values() for p in ps})], check=False)
    for line in found.splitlines():
        if ": /" in line:
            package, _, path = line.partition(": ")
            for pkg in package.split(", "):
                owners.setdefault(path.strip(), pkg.split(":")[0])
    packages, orphans = set(), []
    for lib, paths in candidates.items():
        owner = next((owners[p] for p in paths if p in owners), None)
        if owner:
            packages.add(owner)
        else:
            orphans.append(lib)
    if orphans:
        msg = (f"Python {build.full} in {build.prefix} links against libraries no Debian package owns: "
               f"{', '.join(orphans)}. Rebuild it against Debian's -dev packages, or use a Debian interpreter.")
        raise ImageBuildError(msg)
    return sorted(packages)


def _dpkg_paths(lib: str) -> list[str]:
    """Where dpkg may have registered a library: as ldd names it, its real path, and both across merged /usr."""
    paths = [lib, os.path.realpath(lib)]
    paths += ["/usr" + p for p in paths if p.startswith("/lib")]
    paths += [p.removeprefix("/usr") for p in paths if p.startswith("/usr/lib")]
    return list(dict.fromkeys(paths))


def _run(argv: list[str], *, check: bool = True) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        msg = f"{argv[0]} cannot run here ({e}); host Python builds need ldd and dpkg (a Debian host)."
        raise ImageBuildError(msg) from e
    if check and done.returncode != 0:
        msg = f"{' '.join(argv[:2])} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}"
        raise ImageBuildError(msg)
    return done.stdout


def layer_tag(build: HostPython, rootfs: str) -> str:
    recipe = hashlib.sha256(f"{LAYER_DIGEST}\n{rootfs}\n{build.source}".encode()).hexdigest()[:12]
    return f"{LAYER_REPO}:{build.suite}-python{build.full}-{recipe}"


def ensure_interpreter_layer(build: HostPython, rootfs: str, say: Log) -> str:
    """The rootfs image plus the build under /opt/python/X.Y and its libraries; built once per recipe."""
    tag = layer_tag(build, rootfs)
    if engine.image_labels(tag) is not None:
        return tag
    packages = runtime_packages(build)
    say(f"copying Python {build.full} from {build.prefix} (Debian libraries: {' '.join(packages)})")
    with tempfile.TemporaryDirectory(prefix="autoinstall-python-") as ctx:
        size = write_tarball(build, Path(ctx) / "python.tar")
        say(f"python.tar: {size // 2**20} MiB")
        dockerfile = _LAYER.format(rootfs=rootfs, packages=" ".join(packages), home=build.home, xy=build.version)
        (Path(ctx) / "Dockerfile").write_text(dockerfile)
        labels = {LABEL: "1", engine.KIND_LABEL: "rootfs", f"{LABEL}.python": build.version,
                  f"{LABEL}.source": build.source}
        buildargs = {k: os.environ[k] for k in engine.PROXY_VARS if k in os.environ}
        engine.build_image(Path(ctx), tag, labels=labels, buildargs=buildargs, log=say)
    return tag


__all__ = ["HostPython", "ensure_interpreter_layer", "host_python"]
