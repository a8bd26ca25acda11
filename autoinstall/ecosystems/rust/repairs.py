"""The embedded model's phase-2 rules for Rust: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_names import system_package_repair
from autoinstall.ecosystems.rules import deselecting, first_repair
from autoinstall.ecosystems.rust.diagnosis import NETWORK_OFF, SERVICE_REFUSED, rustc_needed
from autoinstall.ecosystems.rust.msrv import around_vendoring, newest_for_rustc
from autoinstall.ecosystems.rust.proposal import MSRV_AWARE
from autoinstall.ecosystems.rust.toolchain import rustc_of, toolchain_repair
from envs.spec import Evidence, Repair, Step

MSRV_UPDATE = around_vendoring(f"{MSRV_AWARE} cargo update")
"""Re-resolve Cargo.lock to the newest versions this rustc can build (a dependency's MSRV too new)."""


def _rustc(ctx: RepairContext) -> Repair | None:
    """A crate or a language feature needs a newer rustc than the image's: the host's newer rustup toolchain
    first (toolchain.py); else re-resolve the lock MSRV-aware, once. Cargo names the project's own rust-version
    the same way (`name@version requires rustc 1.90`), so that gets the one try too; then nothing is left: None,
    and the build fails with the line naming the rustc it needs."""
    if (newer := toolchain_repair(ctx)) is not None:  # a newer rustc from the host first, older crates last
        return newer
    crate, version = rustc_needed(ctx.diagnosis) or ("", "")
    if not crate or "@" not in crate:
        return None
    if any(r.step and r.step.command == MSRV_UPDATE for r in ctx.tried) or ctx.failing.command == MSRV_UPDATE:
        return _precise(ctx, crate, version)
    step = Step(command=MSRV_UPDATE, kind="other",
                why=f"{crate} needs rustc {version}, the image has {rustc_of(ctx.python)}: pick versions it can build",
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> cargo update, MSRV-aware (Cargo.lock changes)")


def _precise(ctx: RepairContext, crate: str, needs: str) -> Repair | None:
    """MSRV-aware resolution aims at the package's own rust-version; when no release of the crate supports
    that, it keeps the newest. Pin the crate to its newest release the image's rustc builds, once."""
    name, _, locked = crate.partition("@")
    rustc = rustc_of(ctx.python)
    target = newest_for_rustc(name, rustc, locked)
    if not target or target == locked:
        return None
    command = around_vendoring(f"cargo update -p {name}@{locked} --precise {target}")
    if any(r.step and r.step.command == command for r in ctx.tried):
        return None
    step = Step(command=command, kind="other",
                why=f"{crate} needs rustc {needs}; {name} {target} is the newest the image's {rustc} builds",
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> {name} {target}, the newest for rustc {rustc}")


def _system_package(ctx: RepairContext) -> Repair | None:
    if rustc_needed(ctx.diagnosis):
        return _rustc(ctx)
    return system_package_repair(ctx, "a -sys crate's build script")


def _unlock(ctx: RepairContext) -> Repair | None:
    """Cargo.lock out of date with the manifests: run the failing step without --locked (the lock is updated
    for the image and recorded as the pins)."""
    if "--locked" not in ctx.failing.command:
        return None
    step = ctx.failing.model_copy(update={"command": ctx.failing.command.replace(" --locked", "")})
    return Repair(kind="replace", step=step, reason="Cargo.lock is out of date with Cargo.toml -> update it")


RULES = {
    **dict.fromkeys(("missing_header", "missing_library", "missing_tool"), _system_package),
    "missing_module": _unlock,
    **deselecting(SERVICE_REFUSED, NETWORK_OFF),
}


def repair(ctx: RepairContext) -> Repair | None:
    """The diagnosis's rule if it proposes something not tried yet, else skipping an auxiliary step (an
    apt line, never the build or the vendoring); None means give up."""
    return first_repair(ctx, RULES, essential=("project", "other"))
