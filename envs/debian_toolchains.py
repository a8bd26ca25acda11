"""Compilers newer than the base image's, from Debian itself: a versioned package of the base suite that its
images do not install (trixie carries openjdk-25 beside its default 21), or a newer suite's (testing, unstable:
rustc 1.97, golang-1.27-go, openjdk-27), which envs/debian_layer.py installs with that suite pinned low so that
only the toolchain's packages, and what they need that the base suite lacks, come from there.

What a suite carries is read from its Packages index on the mirror the base images come from (the host's apt
mirror: envs/baseimage.py `host_mirror`), once a day (cached under ~/.cache/autoinstall/debian-index). A
candidate whose compiler needs a newer C library than the base suite's is refused here (its libc6 would replace
the image's); envs/debian_layer.py refuses the rest of that class at build time, from apt's own plan.

AUTOINSTALL_DEBIAN_SUITES names the newer suites looked in ("testing unstable" by default; "off": none, not even
the base suite's other versions).
"""
from __future__ import annotations

import json
import lzma
import os
import platform
import re
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from envs.toolchain_record import ToolchainRecord

SUITES_ENV = "AUTOINSTALL_DEBIAN_SUITES"
DEFAULT_SUITES = ("testing", "unstable")
"""Newer suites in the order they are preferred: testing's packages have aged ten days in unstable."""
INDEX_TTL_S = 24 * 3600
FETCH_TIMEOUT_S = 30
_UNREADABLE: set[tuple[str, str]] = set()
"""(suite, mirror) whose index could not be read in this process: not asked again (a mirror out of reach costs
one timeout per suite, not one per build)."""
C_RUNTIME = ("libc6", "libgcc-s1", "libstdc++6")
"""What every binary of the image links: never replaced by a newer suite's (with the Essential and required
packages, envs/debian_layer.py)."""
_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
_OFF = ("off", "0", "no", "false", "none", "")
_PRE = re.compile(r"~|ea\b|rc\d|beta|alpha", re.I)


@dataclass(frozen=True)
class _Kind:
    """How a kind of toolchain is packaged: the package carrying the compiler (its feature release, if any, in
    group 1), the packages installed beside it at the same version, where it lives and what its layer sets."""

    top: re.Pattern[str]
    beside: tuple[str, ...]
    home: Callable[[str, str], str]
    """(feature release from the package name, architecture) -> its folder (its bin/ leads PATH)."""
    env: str
    check: str


def arch() -> str:
    return _ARCH.get(platform.machine(), platform.machine())


KINDS = {
    "java": _Kind(re.compile(r"openjdk-(\d+)-jdk-headless"), (), lambda n, a: f"/usr/lib/jvm/java-{n}-openjdk-{a}",
                  env="JAVA_HOME={home} PATH={home}/bin:$PATH", check="java -version && javac -version"),
    # the installed release is the one to use; a module needing newer says so (the GOTOOLCHAIN repair)
    "go": _Kind(re.compile(r"golang-(1\.\d+)-go"), (), lambda n, a: f"/usr/lib/go-{n}",
                env="PATH={home}/bin:$PATH GOTOOLCHAIN=local", check="go version"),
    "rust": _Kind(re.compile(r"rustc"), ("cargo",), lambda n, a: "/usr", env="",
                  check="rustc --version && cargo --version"),
}


class DebPackage(BaseModel):
    """One stanza of a suite's Packages index, the fields a choice reads."""

    name: str
    version: str
    depends: str = ""


class SuiteIndex(BaseModel):
    """What a suite carries of the toolchains' packages, and of the C runtime."""

    suite: str
    codename: str = ""
    date: str = ""
    """The suite's Release date: a mirror frozen in time shows it here."""
    packages: list[DebPackage]


class DebianToolchain(BaseModel):
    """A toolchain a Debian suite carries, as a base image's layer can install it."""

    name: str
    version: str
    """Upstream's: "25.0.5" of "25.0.5+8-1~deb13u1"."""
    suite: str
    """Where it comes from: the base suite itself ("trixie") or a newer one ("testing")."""
    base_suite: str
    codename: str = ""
    date: str = ""
    packages: dict[str, str]
    """The packages asked for, at their exact Debian versions."""
    home: str

    @property
    def key(self) -> str:
        """How plans and recipes name it: "go-1.26.10@testing"."""
        return f"{self.name}-{self.version}@{self.suite}"

    @property
    def release(self) -> bool:
        return True

    @property
    def prefix(self) -> str:
        """Where it comes from, as notes say it."""
        return f"Debian {self.suite}'s {' '.join(f'{p}={v}' for p, v in self.packages.items())}"

    def record(self, came_along: dict[str, str] | None = None) -> ToolchainRecord:
        dated = ", ".join(x for x in (self.codename, self.date) if x)
        return ToolchainRecord(name=self.name, version=self.version, origin="debian", suite=self.suite,
                               source=f"debian:{self.suite}{f' ({dated})' if dated else ''}",
                               packages={**self.packages, **(came_along or {})}, home=self.home)


def is_debian_key(key: str) -> bool:
    return "@" in key


def parse_key(key: str) -> tuple[str, str, str]:
    """"go-1.26.10@testing" -> ("go", "1.26.10", "testing")."""
    named, _, suite = key.partition("@")
    name, _, version = named.partition("-")
    return name, version, suite


def newer_suites() -> tuple[str, ...]:
    """The newer suites looked in; () when turned off."""
    value = os.environ.get(SUITES_ENV)
    if value is None:
        return DEFAULT_SUITES
    if not enabled():
        return ()
    return tuple(s for s in re.split(r"[\s,]+", value) if re.fullmatch(r"[a-z][a-z0-9-]*", s))


def enabled() -> bool:
    return os.environ.get(SUITES_ENV, "on").strip().lower() not in _OFF


def _bare(version: str) -> str:
    """No epoch, no Debian revision: "1:1.97.1+dfsg1-1" -> "1.97.1+dfsg1"."""
    bare = version.partition(":")[2] if re.match(r"\d+:", version) else version
    return bare.rpartition("-")[0] or bare


def upstream(version: str) -> str:
    """Upstream's version of a Debian one, no epoch, no revision, no repack: "1:1.97.1+dfsg1-1" -> "1.97.1"."""
    return _bare(version).split("+")[0]


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", upstream(version))[:4])


def parse_packages(text: str, wanted: Callable[[str], bool]) -> list[DebPackage]:
    """The stanzas of a Packages index whose package `wanted` accepts."""
    out = []
    for stanza in text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", stanza, re.M))
        if "Package" in fields and "Version" in fields and wanted(fields["Package"]):
            out.append(DebPackage(name=fields["Package"], version=fields["Version"], depends=fields.get("Depends", "")))
    return out


def _wanted(name: str) -> bool:
    return name in C_RUNTIME or any(k.top.fullmatch(name) or name in k.beside for k in KINDS.values())


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "autoinstall" / "debian-index"


def _fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as reply:  # noqa: S310 - the Debian mirror's http(s)
        return reply.read()


def _cache(suite: str, mirror: str) -> Path:
    return _cache_dir() / f"{re.sub(r'[^A-Za-z0-9.-]', '_', mirror)}-{suite}-{arch()}.json"


def forget(suite: str, mirror: str) -> None:
    """Drop the cached index of `suite`: the next choice reads it again (the suite moved on since)."""
    _cache(suite, mirror).unlink(missing_ok=True)


def suite_index(suite: str, mirror: str) -> SuiteIndex | None:
    """What `suite` on `mirror` carries of the toolchains (cached a day); None when its index cannot be read."""
    cache = _cache(suite, mirror)
    if cache.is_file() and time.time() - cache.stat().st_mtime < INDEX_TTL_S:
        return SuiteIndex.model_validate_json(cache.read_text())
    if (suite, mirror) in _UNREADABLE:
        return None
    try:
        release = _fetch(f"{mirror}/dists/{suite}/Release").decode(errors="replace")
        text = lzma.decompress(_fetch(f"{mirror}/dists/{suite}/main/binary-{arch()}/Packages.xz")).decode(
            errors="replace")
    except (OSError, lzma.LZMAError):
        _UNREADABLE.add((suite, mirror))
        return None
    head = dict(re.findall(r"^(Codename|Date): (.*)$", release, re.M))
    index = SuiteIndex(suite=suite, codename=head.get("Codename", ""), date=head.get("Date", ""),
                       packages=parse_packages(text, _wanted))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(index.model_dump_json())
    return index


def c_runtime_refusal(package: DebPackage, base: SuiteIndex | None) -> str | None:
    """Why `package` cannot join the base suite: it needs a newer C runtime than the base suite's (None: it can)."""
    have = {p.name: p.version for p in base.packages} if base else {}
    for dep in package.depends.split(","):
        found = re.match(r"\s*([a-z0-9+.-]+)(?::\w+)?\s*\(>=\s*([^)]+)\)", dep)
        if found and found[1] in C_RUNTIME and found[1] in have and _numbers(found[2]) > _numbers(have[found[1]]):
            return f"{package.name} {package.version} needs {found[1]} >= {found[2]}, the base suite has {have[found[1]]}"
    return None


def candidates(name: str, indexes: list[SuiteIndex], base_suite: str) -> tuple[list[DebianToolchain], list[str]]:
    """Every release of `name` the suites carry (the first suite carrying a version keeps it; pre-releases
    left out), and the refusals, each saying why."""
    kind = KINDS[name]
    base = next((i for i in indexes if i.suite == base_suite), None)
    found: dict[str, DebianToolchain] = {}
    refused: list[str] = []
    for index in indexes:
        versions = {p.name: p.version for p in index.packages}
        for package in index.packages:
            matched = kind.top.fullmatch(package.name)
            version = upstream(package.version)
            if (not matched or _PRE.search(_bare(package.version)) or version in found
                    or not re.fullmatch(r"\d+(?:\.\d+)*", version)):  # Java 8's "8u504-ga" numbers no release
                continue
            if index.suite != base_suite and (why := c_runtime_refusal(package, base)):
                refused.append(f"Debian {index.suite}'s {why}")
                continue
            beside = {b: versions[b] for b in kind.beside if versions.get(b) == package.version}
            if len(beside) < len(kind.beside):
                continue
            release = matched[1] if matched.groups() else ""
            found[version] = DebianToolchain(
                name=name, version=version, suite=index.suite, base_suite=base_suite, codename=index.codename,
                date=index.date, packages={package.name: package.version, **beside}, home=kind.home(release, arch()))
    return sorted(found.values(), key=lambda t: _numbers(t.version)), refused


def debian_toolchains(name: str, base_suite: str, mirror: str) -> tuple[list[DebianToolchain], list[str]]:
    """What the base suite and the newer suites carry of `name` ("rust", "go", "java"), oldest first, and what was
    refused or could not be read; nothing when turned off."""
    if name not in KINDS or not enabled():
        return [], []
    indexes, unread = [], []
    for suite in dict.fromkeys((base_suite, *newer_suites())):
        index = suite_index(suite, mirror)
        if index is None:
            unread.append(f"Debian {suite}'s index at {mirror} could not be read")
        else:
            indexes.append(index)
    found, refused = candidates(name, indexes, base_suite)
    return found, refused + unread


__all__ = ["DebianToolchain", "SuiteIndex", "candidates", "debian_toolchains", "is_debian_key", "parse_key",
           "upstream"]
