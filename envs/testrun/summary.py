"""Summary lines (unittest's `Ran N tests` + `FAILED (...)`, pytest's): counts, for a runner that names no test."""
from __future__ import annotations

from envs.base import Sandbox
from envs.grading.kit.parsers import summary
from envs.spec import Deselection, TestRun

def parse_summary(output: str) -> dict[str, int]:
    """Counts from a unittest-style ("Ran N tests ... FAILED (failures=1)") or pytest-style summary."""
    return summary.parse(output)


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `command`; counts from its summary line, its exit status honoured."""
    result = sandbox.exec(command, timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:])
    run.counts = parse_summary(result.output)
    run.collection_ok = run.ran > 0 or result.exit_code == 0
    if result.exit_code != 0 and run.ran and not (run.counts["failed"] or run.counts["error"]):
        # The runner's exit status is the verdict too: a failure its summary line did not count.
        run.counts["error"] += 1
    return run
