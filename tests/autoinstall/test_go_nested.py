"""tests/fixtures/repos/go_nested_runs built on Docker: every package is ok, and the suites its tests run
inside themselves (reported by `go test -json` as failed tests) are recorded as no failure in either run, with
the runner's notes in each run's tail."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "go_nested_runs"
HARNESS = "example.com/nestedruns/harness::"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_nested_runs_leave_no_failing_test_in_either_run(docker_engine: None, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env"))
    assert spec.status == "verified", (spec.failure, [e.command for e in spec.log])
    assert spec.verification is not None and len(spec.verification.runs) == 2
    for run in spec.verification.runs:
        outcomes = {r.test_id: r.outcome for r in run.results}
        counts = (run.counts["failed"], run.counts["error"], run.counts["passed"])
        assert counts == (0, 0, 12), run.output_tail[-600:]
        assert outcomes[HARNESS + "TestHelperProcess"] == "skipped"  # its own end, not its re-run child's
        assert HARNESS + "TestInProcessFails" not in outcomes
        assert "[autoinstall] 5 per-test result(s) printed by test runs nested" in run.output_tail
        assert "[autoinstall] 1 failed result(s) overridden by the runner's own verdict" in run.output_tail
    assert spec.verification.counts["failed"] == spec.verification.counts["error"] == 0
    assert spec.verification.flaky == []
