"""What the embedded rules of every compiled-language ecosystem share: diagnosis by an ordered list of
patterns, the first untried repair with skipping an auxiliary step as the last resort, deselection of tests
whose own message shows a refused service or no internet (the protocol methods they share are in
autoinstall/ecosystems/compiled.py)."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.services import well_known_service
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


def deselecting(service: re.Pattern[str], network: re.Pattern[str],
                runnable: Callable[[list[str], RepairContext], list[str]] | None = None) -> dict[str, Rule]:
    """The rules for `service_unavailable` and `network_required`: leave out the failed tests whose own message
    shows a refused connection to a well-known service (`service`) or no internet (`network`), with the
    reason (naming the address refused when the diagnosis has it). `runnable` turns their ids into what the
    runner can leave out (Go: whole top-level tests, or packages)."""
    def deselect(ctx: RepairContext) -> Repair | None:
        refused, offline = offline_or_refused(ctx, service, network)
        if not refused and not offline:
            return None
        tests = list(dict.fromkeys(refused + offline))
        where = ctx.diagnosis.subject if ctx.diagnosis.kind == "service_unavailable" else ""
        return Repair(kind="deselect", tests=runnable(tests, ctx) if runnable else tests,
                      reason=deselection_reason(refused, offline, where))
    return {"service_unavailable": deselect, "network_required": deselect}
