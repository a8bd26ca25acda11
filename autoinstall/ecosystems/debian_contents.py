"""Which Debian package ships a file, from Debian's own Contents index (what `apt-file` reads).

The hand-kept maps in debian_names.py are the fast path; this answers for everything else: any header,
pkg-config module, CMake package config, shared library or executable in the suite the base image runs.
The index is fetched once per suite from the host's Debian mirror (trusted, host side: no repository code is
involved), filtered to the paths a build can miss, and cached under $AUTOINSTALL_HOME/debian/.

    index = ContentsIndex.for_suite("trixie")
    index.package("missing_header", "zlib.h")  # -> "zlib1g-dev"
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import threading
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path

from envs.hostfacts import host_mirror
from envs.home import autoinstall_home

ARCHES = ("amd64", "all")
"""Contents files read, in order: the machine's architecture, then architecture-independent packages."""
KEPT = re.compile(
    r"^(?:usr/include/.+"
    r"|.*/pkgconfig/[^/]+\.pc"
    r"|usr/(?:lib|share)/.*cmake/.*(?:Config|-config)\.cmake"
    r"|usr/(?:lib|share)/.*[Cc]make[^/]*/(?:Modules/)?Find[^/]+\.cmake"
    r"|usr/lib/(?:x86_64-linux-gnu/)?lib[^/]+\.(?:so|a)"
    r"|(?:usr/)?s?bin/[^/]+)$"
)
"""The paths a failed build can be missing; everything else in the index is dropped when it is cached."""
_AVOID = re.compile(r"(?:-cross|mingw|musl|-dbg|-dbgsym|^lib32|^libx32|^lib64|dietlibc|klibc)")
TIMEOUT_S = 60.0


class ContentsIndex:
    """Path -> packages for one Debian suite; empty (answers None) when the mirror could not be read."""

    _loaded: dict[str, ContentsIndex] = {}
    _lock = threading.Lock()

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        self.by_name: dict[str, list[tuple[str, str]]] = {}
        """Basename -> [(path, package)]: every lookup is by a file's name, then checked on its path."""
        for path, package in entries:
            self.by_name.setdefault(path.rsplit("/", 1)[-1], []).append((path, package))

    @classmethod
    def for_suite(cls, suite: str, *, mirror: str | None = None, cache: Path | None = None) -> ContentsIndex:
        """The suite's index: from the cache, else fetched (once per process); empty if unreachable."""
        with cls._lock:
            if suite not in cls._loaded:
                cls._loaded[suite] = cls(_cached_entries(suite, mirror or host_mirror(), cache))
            return cls._loaded[suite]

    def package(self, kind: str, name: str) -> str | None:
        """The package that provides what a diagnosis says is missing: kind is missing_header (a header path
        as #included), missing_library (a pkg-config module or a -l library), missing_cmake (a CMake package
        name) or missing_tool (an executable)."""
        name = name.strip()
        if not name or "\0" in name:
            return None
        if kind == "missing_header":
            return self._best(f"/{name.lstrip('/')}", name.rsplit("/", 1)[-1], dev=True)
        if kind == "missing_library":
            stem = name.removeprefix("lib") if name.startswith("lib") and "." not in name else name
            return (self._best("/pkgconfig/" + f"{name}.pc", f"{name}.pc", dev=True)
                    or self._best(f"/lib{stem}.so", f"lib{stem}.so", dev=True)
                    or self._best(f"/lib{stem}.a", f"lib{stem}.a", dev=True))
        if kind == "missing_cmake":  # its config file, a Find module a -dev package ships (CMake's own say
            # how to look for a library, not where it comes from), its pkg-config module or library
            return (self._best(f"/{name}Config.cmake", f"{name}Config.cmake", dev=True)
                    or self._best(f"/{name.lower()}-config.cmake", f"{name.lower()}-config.cmake", dev=True)
                    or self._best(f"/Find{name}.cmake", f"Find{name}.cmake", dev=True, only_dev=True)
                    or self.package("missing_library", name.lower()))
        if kind == "missing_tool":
            return self._best(f"bin/{name}", name, dev=False)
        return None

    def _best(self, suffix: str, basename: str, *, dev: bool, only_dev: bool = False) -> str | None:
        candidates = [pkg for path, pkg in self.by_name.get(basename, ())
                      if ("/" + path).endswith(suffix) and (pkg.endswith("-dev") or not only_dev)]
        packages = sorted({p for p in candidates if not _AVOID.search(p)} or set(candidates),
                          key=lambda p: (dev and not p.endswith("-dev"), len(p), p))
        return packages[0] if packages else None


def _cached_entries(suite: str, mirror: str, cache: Path | None) -> list[tuple[str, str]]:
    folder = cache or autoinstall_home() / "debian"
    kept = hashlib.sha256(KEPT.pattern.encode()).hexdigest()[:8]  # a cache filtered otherwise is another file
    file = folder / f"contents-{re.sub(r'[^a-z0-9]+', '-', suite.lower())}-{kept}.tsv.gz"
    if file.is_file():
        with gzip.open(file, "rt", encoding="utf-8") as f:
            return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]  # type: ignore[misc]
    try:
        entries = [e for arch in ARCHES for e in _fetch(mirror, suite, arch)]
    except (OSError, ValueError, EOFError):  # unreachable mirror or a cut download: the maps still answer
        return []
    folder.mkdir(parents=True, exist_ok=True)
    partial = file.with_suffix(f".{os.getpid()}.part")
    with gzip.open(partial, "wt", encoding="utf-8") as f:
        f.writelines(f"{path}\t{package}\n" for path, package in entries)
    partial.replace(file)
    return entries


def _fetch(mirror: str, suite: str, arch: str) -> Iterator[tuple[str, str]]:
    url = f"{mirror.rstrip('/')}/dists/{suite}/main/Contents-{arch}.gz"
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:  # noqa: S310 (the host's own mirror)
        data = response.read()
    lines = candidates(gzip.GzipFile(fileobj=io.BytesIO(data)))
    yield from parse(line.decode("utf-8", errors="replace") for line in lines)


_STARTS = re.compile(rb"\n(?:usr/(?:include/|s?bin/|lib/(?:x86_64-linux-gnu/)?lib)|s?bin/)[^\n]*")
"""Lines whose path starts as a KEPT one can, found at C speed (a Contents file has millions of lines)."""
_INSIDE = (b"/pkgconfig/", b".cmake")
"""What the other KEPT paths (pkg-config modules, CMake files) have somewhere in them."""


def candidates(stream: io.BufferedIOBase, chunk: int = 1 << 24) -> Iterator[bytes]:
    """The lines of a Contents file that KEPT can match (more, never fewer), in order: what `parse` then reads
    in a fraction of the time it takes over every line (4 s, not 20, for bookworm on a loaded machine)."""
    rest = b"\n"  # each block starts with the newline before its first line
    while data := stream.read(chunk):
        block = rest + data
        cut = block.rfind(b"\n")
        rest = block[cut:]
        yield from _candidates_in(block[:cut])
    yield from _candidates_in(rest)


def _candidates_in(block: bytes) -> list[bytes]:
    found = {m.start() + 1: m.group()[1:] for m in _STARTS.finditer(block)}
    for needle in _INSIDE:
        at = block.find(needle)
        while at != -1:
            start, end = block.rfind(b"\n", 0, at) + 1, block.find(b"\n", at)
            end = len(block) if end == -1 else end
            found[start] = block[start:end]
            at = block.find(needle, end)
    return [found[start] for start in sorted(found)]


def parse(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(path, package) for the kept paths of a Contents file (`path   section/pkg,section/pkg2`)."""
    for line in lines:
        path, _, where = line.rstrip("\n").rpartition(" ")
        path = path.rstrip()
        if not path or not KEPT.match(path):
            continue
        for item in where.split(","):
            yield path, item.rsplit("/", 1)[-1]
