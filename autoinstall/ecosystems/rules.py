"""What the embedded rules of every compiled-language ecosystem share: diagnosis by an ordered list of
patterns, the first untried repair with skipping an auxiliary step as the last resort, deselection of tests
whose own message shows a refused service or no internet, and the protocol methods of ecosystems whose
lock files pin every dependency (no stubs, nothing to resolve as of a date)."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import Log, RepairContext
from autoinstall.ecosystems.services import well_known_service
from autoinstall.errors import AutoinstallError
from envs.base import SandboxFactory
from envs.spec import Diagnosis, DiagnosisKind, Repair

Rule = Callable[[RepairContext], "Repair | None"]
Patterns = Sequence[tuple[DiagnosisKind, "re.Pattern[str]"]]


def diagnose_by(output: str, timed_out: bool, patterns: Patterns,
                subject: Callable[[re.Pattern[str], re.Match[str]], str],
                unknown: Callable[[str], str]) -> Diagnosis:
    """The first pattern that matches `output`, its subject, and the line that shows it."""
    if timed_out:
        last = output.strip().splitlines()[-1:] or [""]
        return Diagnosis(kind="timeout", evidence=last[0][:300])
    for kind, pattern in patterns:
        if m := pattern.search(output):
            line = output[output.rfind("\n", 0, m.start()) + 1:].split("\n", 1)[0]
            return Diagnosis(kind=kind, subject=subject(pattern, m), evidence=line.strip()[:300])
    return Diagnosis(kind="unknown", evidence=unknown(output)[:300])


def first_repair(ctx: RepairContext, rules: dict[str, Rule], essential: tuple[str, ...]) -> Repair | None:
    """The diagnosis's rule if it proposes something not tried yet, else skipping the failing install step
    unless its kind is `essential` (the build itself); None means give up."""
    for rule in (rules.get(ctx.diagnosis.kind), lambda c: _skip(c, essential)):
        proposal = rule(ctx) if rule else None
        if proposal is not None and not ctx.already_tried(proposal):
            return proposal
    return None


def _skip(ctx: RepairContext, essential: tuple[str, ...]) -> Repair | None:
    if ctx.phase != "install" or ctx.failing.kind in essential:
        return None
    return Repair(kind="skip", step=ctx.failing,
                  reason=f"no fix known for {ctx.diagnosis.describe()}; this {ctx.failing.kind} step is not "
                         "the build, so go on without it")


def offline_or_refused(ctx: RepairContext, service: re.Pattern[str],
                       network: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """The failed tests whose own message shows a refused connection to a well-known service's port, and
    those that show no internet (empty outside the tests phase)."""
    if ctx.phase != "tests":
        return [], []
    return ([t.test_id for t in ctx.failed_tests if service.search(t.message) and well_known_service(t.message)],
            [t.test_id for t in ctx.failed_tests if network.search(t.message)])


def deselection_reason(service: list[str], network: list[str], where: str = "") -> str:
    """Why tests needing a service (at `where`) or the internet are left out."""
    why = [f"a service at {where or 'a local port'} that the environment does not run"] if service else []
    why += ["the internet, and environments run their tests offline"] if network else []
    return "these tests need " + " and ".join(why)


class LockPinned:
    """Protocol methods shared by ecosystems whose lock files pin every dependency and whose packages cannot
    be stood in for (Go, Rust). Subclasses set `name`, `PACKAGES`, `REGISTRY`, `SERVICE_REFUSED`, `NETWORK_OFF`."""

    name: str
    PACKAGES: tuple[str, ...] = ()
    """Debian packages of the toolchain, added to the base image."""
    REGISTRY = "its registry"
    SERVICE_REFUSED: re.Pattern[str]
    NETWORK_OFF: re.Pattern[str]
    stub_env: dict[str, str] = {}
    pin_env: tuple[str, ...] = ()

    def justifies_deselection(self, message: str) -> bool:
        """A refusal on a well-known service's port, or no internet (services.well_known_service)."""
        refused = self.SERVICE_REFUSED.search(message) and well_known_service(message)
        return bool(refused or self.NETWORK_OFF.search(message))

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        return toolchains.base_image(factory, toolchain, log, self.PACKAGES)  # "3.13+rust-1.95.0": toolchains.py

    def stub(self, distribution: str, import_name: str, output: str) -> tuple[str, bytes]:
        """Not applicable: the embedded rules never ask; a model that does ends the build with this error."""
        msg = (f"a stub for {distribution} was asked for, but {self.name} packages cannot be stubbed: make it "
               f"reachable through {self.REGISTRY}, or build with a model that does not propose stubs")
        raise AutoinstallError(msg)

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        return []

    def as_of(self, date: str) -> dict[str, str]:
        """Nothing: the lock file pins every version, whatever the date."""
        return {}
