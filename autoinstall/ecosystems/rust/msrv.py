"""The newest release of a crate that a given rustc can build, from crates.io's sparse index (host side),
and lock changes that survive the vendored sources (a resolution after `cargo vendor` sees only them)."""
from __future__ import annotations

import json
import urllib.request

from autoinstall.ecosystems.rust.proposal import VENDOR

INDEX = "https://index.crates.io"
TIMEOUT_S = 20.0


def around_vendoring(update: str) -> str:
    """`update` with the vendored-source config set aside, then the sources vendored again for the new lock."""
    return f"rm -f /.cargo/config.toml && {update} && {VENDOR}"


def index_path(name: str) -> str:
    """The sparse index's path for a crate name (1/, 2/, 3/x/, ab/cd/)."""
    lower = name.lower()
    if len(lower) <= 2:
        return f"{len(lower)}/{lower}"
    if len(lower) == 3:
        return f"3/{lower[0]}/{lower}"
    return f"{lower[:2]}/{lower[2:4]}/{lower}"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("+")[0].split("-")[0].split("."))


def _compatible(version: str) -> tuple[int, ...]:
    """Cargo's compatibility class: the major, or 0.minor below 1.0."""
    parts = _key(version)
    return parts[:1] if parts[0] else parts[:2]


def newest_buildable(lines: list[str], rustc: str, compatible_with: str) -> str | None:
    """From one crate's index lines: the newest non-yanked release, semver-compatible with `compatible_with`,
    whose rust-version (when it states one) `rustc` satisfies."""
    best = None
    for line in lines:
        entry = json.loads(line)
        version, needs = entry["vers"], entry.get("rust_version")
        if entry.get("yanked") or "-" in version or _compatible(version) != _compatible(compatible_with):
            continue
        if needs and _key(needs) > _key(rustc):
            continue
        if best is None or _key(version) > _key(best):
            best = version
    return best


def newest_for_rustc(name: str, rustc: str, compatible_with: str) -> str | None:
    """Ask crates.io; None when it cannot be asked or no release fits."""
    try:
        with urllib.request.urlopen(f"{INDEX}/{index_path(name)}", timeout=TIMEOUT_S) as response:  # noqa: S310
            lines = response.read().decode().splitlines()
    except (OSError, ValueError):
        return None
    return newest_buildable([line for line in lines if line.strip()], rustc, compatible_with)
