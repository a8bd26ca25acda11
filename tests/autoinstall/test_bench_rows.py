"""bench/setup_success.py is honest (issue 9): its rows carry the counts every surface has, a repository that is
not fetched is a failure row, and a row verified with more of its suite deselected than its cap is named."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from envs.spec import Collection, EnvSpec, Plan, SourceRecord, StubRecord, TestRun, Verification

BENCH = Path(__file__).parents[2] / "bench" / "setup_success.py"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("setup_success_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def built(status: str, selected: int) -> EnvSpec:
    run = TestRun(exit_code=0, counts={"passed": selected})
    verification = Verification(verified=True, runs=[run, run], collection=Collection(default=100, command=100,
                                                                                       selected=selected),
                                counts={"passed": selected - 3, "failed": 1, "error": 1, "skipped": 1, "flaky": 0})
    return EnvSpec(status=status, source=SourceRecord(repo="r", name="r"), model="embedded", plan=Plan(),
                   verification=verification, stubs=[StubRecord(distribution="d", import_name="d", reason="x")])


def test_a_row_has_every_count_the_status_threshold_and_cap() -> None:
    row = bench().tool_row(built("verified", 98))
    assert {k: row[k] for k in ("status", "collected", "selected", "deselected", "passed", "failed", "errors",
                                "skipped", "flaky", "stubs", "threshold", "max_deselected")} == {
        "status": "verified", "collected": 100, "selected": 98, "deselected": 2, "passed": 95, "failed": 1,
        "errors": 1, "skipped": 1, "flaky": 0, "stubs": 1, "threshold": 0.9, "max_deselected": 0.05}


def test_missing_repositories_fail_and_a_verified_row_over_its_cap_is_named() -> None:
    b = bench()
    rows = [{**b.tool_row(built("verified", 98)), "repo": "ok", "wall_s": 10.0, "naive": {}, "language": "python"},
            {**b.tool_row(built("verified", 60)), "repo": "gutted", "wall_s": 20.0, "naive": {}, "language": "python"},
            {**b.tool_row(built("partial", 60)), "repo": "partial", "wall_s": 30.0, "naive": {}, "language": "go"},
            b.missing_row("/work/.mirror/a+b/repo", "a+b", "python")]
    summary = b.summarize(rows, naive=False)
    assert (summary["repos"], summary["verified"], summary["partial"], summary["missing"]) == (4, 2, 1, 1)
    assert summary["failures"] == {"partial": None, "a+b": "not_fetched"}
    assert summary["verified_over_cap"] == ["gutted"]
    assert summary["median_wall_s"] == 20.0  # the missing row has no wall time to count
    missing = summary["per_repo"][-1]
    assert (missing["status"], missing["collected"], missing["passed"]) == ("missing", None, 0)
    assert summary["by_language"]["go"] == {"repos": 1, "verified": 0, "partial": 1, "median_wall_s": 30.0,
                                               "naive_runnable": None}


def test_the_class_repositories_are_pinned_in_their_language_and_their_rows_name_the_class() -> None:
    b = bench()
    for language, repos in b.CLASS_REPOS.items():
        for name, (commit, why) in repos.items():
            assert b.LANGUAGE_REPOS[language][name] == commit and len(commit) == 12
            assert b.CLASS_OF[name] == why.split(":")[0] != ""
    assert b.CLASS_OF.get("google+uuid") is None  # the older dev set carries no class
    summary = b.summarize([{**b.tool_row(built("verified", 98)), "repo": "golang+sync", "wall_s": 5.0, "naive": {},
                            "language": "go", "class": b.CLASS_OF["golang+sync"]}], naive=False)
    assert summary["per_repo"][0]["class"] == "toolchain"
