"""What this host offers base images, known without Docker: the Debian mirror, the Python versions an image
can have (Debian's suites' own, then the host's CPython builds, pyenv's `versions/X.Y.Z` folders).

Kept apart from envs/baseimage.py and envs/pyenv_python.py, which build images (and so load the docker SDK):
surveys, plans and `import cli` ask these questions and must stay fast.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SUITES = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
"""Python versions Debian itself provides, by the suite that ships them."""
DEBIAN_PATCH = {"3.9": "3.9.2", "3.11": "3.11.2", "3.13": "3.13.5"}
"""The patch release each suite ships."""
PREFERRED = ("3.11", "3.13", "3.9")
"""Debian's interpreters in the order a plan prefers them (the first is the default)."""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
MIRROR_ENV = "AUTOINSTALL_DEBIAN_MIRROR"
BUILDS_ENV = "AUTOINSTALL_PYTHON_BUILDS"
"""A folder of CPython install prefixes named X.Y.Z (default: $PYENV_ROOT/versions, else ~/.pyenv/versions)."""
MIN_VERSION = (3, 8)
"""uv, which every base image installs with the interpreter's pip, requires Python 3.8 or newer."""
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def host_mirror() -> str:
    """The Debian mirror: $AUTOINSTALL_DEBIAN_MIRROR, else the host apt's first non-security source."""
    if os.environ.get(MIRROR_ENV):
        return os.environ[MIRROR_ENV].rstrip("/")
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    uris = re.findall(r"^URIs:\s*(\S+)", sources.read_text(), re.M) if sources.is_file() else []
    legacy = Path("/etc/apt/sources.list")
    if legacy.is_file():
        uris += re.findall(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)", legacy.read_text(), re.M)
    return next((u.rstrip("/") for u in uris if "security" not in u), DEFAULT_MIRROR)


def builds_dir() -> Path:
    """Where host builds are looked for: $AUTOINSTALL_PYTHON_BUILDS, $PYENV_ROOT/versions, ~/.pyenv/versions."""
    if os.environ.get(BUILDS_ENV):
        return Path(os.environ[BUILDS_ENV])
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"


def host_suite() -> str | None:
    """The host's Debian codename (the libraries its builds link against), or None off Debian."""
    release = Path("/etc/os-release")
    text = release.read_text() if release.is_file() else ""
    if not re.search(r"^ID=\"?debian\"?$", text, re.MULTILINE):
        return None
    found = re.search(r"^VERSION_CODENAME=\"?(\w+)\"?$", text, re.MULTILINE)
    return found[1] if found else None


def host_versions() -> dict[str, Path]:
    """Host build prefixes by X.Y (the newest X.Y.Z of each), from 3.8 on; empty off Debian or without builds."""
    root = builds_dir()
    if host_suite() is None or not root.is_dir():
        return {}
    found: dict[str, tuple[tuple[int, ...], Path]] = {}
    for prefix in root.iterdir():
        m = _VERSION.fullmatch(prefix.name)
        if not m or tuple(map(int, m.groups()[:2])) < MIN_VERSION:
            continue
        xy, key = f"{m[1]}.{m[2]}", tuple(map(int, m.groups()))
        complete = (prefix / "bin" / f"python{xy}").is_file() and (prefix / "lib" / f"python{xy}" / "os.py").is_file()
        if complete and (xy not in found or key > found[xy][0]):
            found[xy] = (key, prefix)
    return {xy: prefix for xy, (_, prefix) in sorted(found.items(), key=lambda i: i[1][0])}


def describe_builds(builds: dict[str, Path]) -> str:
    """One phrase for error messages: which X.Y the host's builds give, and where they were looked for."""
    where = builds_dir()
    if not builds:
        return f"no host Python builds (none in {where}, or the host is not Debian; {BUILDS_ENV} points elsewhere)"
    names = ", ".join(sorted(builds, key=version_key))
    return f"the host's Python builds in {where} give {names}"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def buildable_pythons(*, ordered: bool = False) -> list[str]:
    """The X.Y a base image can be built for without a registry: Debian's (PREFERRED order), then the host
    builds Debian lacks (newest first); with `ordered`, all of them by version."""
    builds = sorted((v for v in host_versions() if v not in SUITES), key=version_key)
    found = [*PREFERRED, *reversed(builds)]
    return sorted(found, key=version_key) if ordered else found


def python_patch(version: str) -> str:
    """The X.Y.Z a base image for X.Y carries without a registry (X.Y.0 when it is not known)."""
    if version in DEBIAN_PATCH:
        return DEBIAN_PATCH[version]
    build = host_versions().get(version)
    return build.name if build else f"{version}.0"


def debian_suite(python: str) -> str | None:
    """The Debian suite a registry-less base image for X.Y is built on (None when none can be)."""
    if python in SUITES:
        return SUITES[python]
    return host_suite() if python in host_versions() else None
