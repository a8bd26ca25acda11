"""A suite that passes the threshold with some tests failing for want of a system piece (fonts for the JVM's
text drawing, a tool a test runs): what the install loop still asks a repair for, and which repairs it takes.

Asked only when the ecosystem's diagnosis of the failures is a missing library, header or tool; taken only when
the repair installs a system package (a `system` step, recorded like any other) or sets a variable not set yet
(no restart). Anything else (a deselection, a new test command, a changed variable) leaves the passing suite as it
is; so does a step that fails.
"""
from __future__ import annotations

from autoinstall.ecosystems.base import FailedTest
from envs.base import ExecResult
from envs.spec import DiagnosisKind, Repair, TestRun

SYSTEM_KINDS: tuple[DiagnosisKind, ...] = ("missing_library", "missing_header", "missing_tool")
"""Diagnoses a system package can answer."""


def failures(run: TestRun) -> tuple[list[FailedTest], ExecResult]:
    """The failed tests, and the output a diagnosis reads: the run's, then their messages."""
    failed = [FailedTest(test_id=r.test_id, message=r.message) for r in run.results if r.outcome in ("failed", "error")]
    text = (run.output or run.output_tail) + "\n" + "\n".join(f.message for f in failed[:50])
    return failed, ExecResult(exit_code=run.exit_code, stdout=text)


def worth_asking(kind: DiagnosisKind, failed: int) -> bool:
    """Whether a passing suite's failures are worth a repair request: some failed, for a missing system piece."""
    return failed > 0 and kind in SYSTEM_KINDS


def for_a_passing_suite(repair: Repair, env: dict[str, str]) -> bool:
    """Whether `repair` may change a suite that passes: a system package step, or variables not set yet (and
    nothing left out with it)."""
    if repair.left_out:
        return False
    if repair.kind == "insert_before":
        return repair.step is not None and repair.step.kind == "system"
    return repair.kind == "set_env" and bool(repair.env) and not set(repair.env) & set(env)
