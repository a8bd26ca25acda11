"""Which rustc a Rust build uses: Debian trixie's, a newer rustup toolchain of this host copied into the image, or
a newer Debian suite's rustc and cargo (autoinstall/ecosystems/toolchains.py holds the order), chosen from the manifest (rust-version, a versioned rust-toolchain file)
before the build, or from the build's own error (`requires rustc 1.88`, let chains) during it."""
from __future__ import annotations

import re

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.rust.diagnosis import rustc_needed
from autoinstall.ecosystems.rust.survey import RustFacts
from envs.debian_toolchains import DebianToolchain
from envs.host_toolchains import version_key
from envs.spec import Repair

DEBIAN_RUSTC = "1.85"
"""Debian trixie's rustc and cargo: what the image has without a host toolchain."""
_VERSIONED = re.compile(r"\d+\.\d+(?:\.\d+)?")


def rustc_of(token: str) -> str:
    """The rustc a toolchain token gives: the host toolchain it names, else Debian's."""
    return toolchains.current(token, "rust") or DEBIAN_RUSTC


def wanted(facts: RustFacts) -> tuple[str, str] | None:
    """(the least rustc the manifest asks for, where it says so): rust-version, or a rust-toolchain file naming a
    release (its channel then counts as the least: the image has no rustup to install exactly that one)."""
    asks = []
    if facts.rust_version and _VERSIONED.fullmatch(facts.rust_version):
        where = facts.rust_version_evidence
        asks.append((facts.rust_version, f"{where.file}:{where.line}" if where else "Cargo.toml"))
    if facts.toolchain and _VERSIONED.fullmatch(facts.toolchain):
        where = facts.toolchain_evidence
        asks.append((facts.toolchain, f"{where.file}:{where.line}" if where else "rust-toolchain"))
    return max(asks, key=lambda a: version_key(a[0])) if asks else None


def planned(facts: RustFacts, python: str) -> tuple[str, list[str]]:
    """The toolchain token a plan starts on, and the note that says why."""
    asked = wanted(facts)
    if asked is None or not toolchains.newer(asked[0], DEBIAN_RUSTC):
        return python, []
    pick, refused = toolchains.source_for("rust", asked[0], DEBIAN_RUSTC, python)
    if pick is None:
        return python, [*refused, f"{asked[1]} asks for rustc {asked[0]}, newer than the image's {DEBIAN_RUSTC} "
                        "(Debian trixie's), and neither this host (rustup) nor Debian's newer suites have a newer "
                        "rustc: a dependency that needs it is re-resolved to an older release (MSRV-aware), the "
                        "project's own code may not build"]
    if isinstance(pick, DebianToolchain):
        return toolchains.with_host(python, pick), [
            *refused, f"{asked[1]} asks for rustc {asked[0]}, newer than the image's {DEBIAN_RUSTC}: "
            f"{toolchains.origin(pick)}"]
    return toolchains.with_host(python, pick), [
        f"{asked[1]} asks for rustc {asked[0]}, newer than the image's {DEBIAN_RUSTC}: the host's rustup toolchain "
        f"{pick.version} ({pick.prefix}) is copied into the image"]


def toolchain_repair(ctx: RepairContext) -> Repair | None:
    """A crate, or a language feature, needs a newer rustc than the one in use: start over on the toolchain
    `source_for` picks (the host's rustup toolchain, else a Debian suite's rustc), once per toolchain; None when
    neither has a newer release (then MSRV-aware resolution)."""
    found = rustc_needed(ctx.diagnosis)
    now = rustc_of(ctx.python)
    if found is None or not toolchains.newer(found[1], now):
        return None
    pick, _ = toolchains.source_for("rust", found[1], now, ctx.python)
    if pick is None:
        return None
    if isinstance(pick, DebianToolchain):
        return toolchains.switch(ctx.python, ctx.tried, pick, f"{ctx.diagnosis.describe()}; the image has rustc "
                                 f"{now} -> {toolchains.origin(pick)}")
    meets = "" if not toolchains.newer(found[1], pick.version) else f" (not {found[1]}: the newest this host has)"
    return toolchains.switch(ctx.python, ctx.tried, pick,
                             f"{ctx.diagnosis.describe()}; the image has rustc {now} -> the host's rustup toolchain "
                             f"{pick.version}{meets} from {pick.prefix}, copied into the image")
