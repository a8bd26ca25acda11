"""The task store, the keep rule, problem statements and the errors of `make_tasks`: no Docker."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoinstall.commands.catalog import catalog_app
from autoinstall.commands.tasks import tasks_app
from autoinstall.tasks import MakeOptions, TaskError, TaskStore, TaskStoreError, make_tasks
from autoinstall.tasks.candidate import Candidate, unified_diff
from autoinstall.tasks.statement import problem_statement
from autoinstall.tasks.validate import baseline, judge
from envs.catalog import Catalog
from envs.fake import FakeFactory
from envs.spec import EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from envs.task import HistoryInfo, MutationInfo, Task


def task(n: int) -> Task:
    return Task(instance_id=f"o__n-mutation-{n:08x}", env_id="e1", repo="o/n", base_commit="c", image="i",
                kind="mutation", bug_patch="-", gold_patch="+", problem_statement="p", test_command="pytest")


def test_store_writes_merges_and_counts(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "tasks")
    assert store.read("e1") == [] and store.counts() == {}
    store.write("e1", [task(1), task(2)])
    merged = store.merge("e1", [task(2), task(3)])
    assert [t.instance_id for t in merged] == [task(i).instance_id for i in (1, 2, 3)]
    assert store.read("e1") == merged
    assert store.counts() == {"e1": 3}


def test_a_failed_write_leaves_the_old_store_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TaskStore(tmp_path)
    store.write("e1", [task(1)])
    before = store.path("e1").read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.write("e1", [task(1), task(2)])
    assert store.path("e1").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e1.jsonl"]


def test_a_corrupt_line_names_the_file_and_line(tmp_path: Path) -> None:
    store = TaskStore(tmp_path)
    store.path("e1").write_text(task(1).model_dump_json() + "\n{not json}\n")
    with pytest.raises(TaskStoreError, match=r"e1.jsonl:2 is not a task"):
        store.read("e1")


def run_of(**outcomes: str) -> TestRun:
    return TestRun(exit_code=1, results=[TestResult(test_id=t, outcome=o, message=f"assert {t}")  # type: ignore[arg-type]
                                         for t, o in outcomes.items()])


def test_keep_rule() -> None:
    passing = baseline(run_of(a="passed", b="passed", c="passed", d="passed", s="skipped"), flaky=["d"])
    assert passing == ["a", "b", "c"]
    kept = judge(run_of(a="failed", b="passed", c="passed"), passing, max_fail=1)
    assert kept.kept and kept.fail_to_pass == ["a"] and kept.pass_to_pass == ["b", "c"]
    assert kept.messages == {"a": "assert a"}
    assert judge(run_of(a="passed", b="passed", c="passed"), passing, 1).reason == "no test fails"
    assert judge(run_of(a="failed", b="error", c="passed"), passing, 1).reason == "too many tests fail"
    assert judge(run_of(a="failed", b="skipped", c="passed"), passing, 2).reason == "other tests changed"
    assert judge(run_of(a="failed", b="passed"), passing, 2).reason == "tests missing from the run"
    assert judge(run_of(a="failed", b="passed", **{"tests.test_c": "error"}), passing, 2).reason == \
        "breaks test collection"  # a test module that no longer imports: its tests are not run
    hung = run_of(a="failed", b="passed", c="passed")
    hung.timed_out = True
    assert judge(hung, passing, 2).reason == "timeout"


def test_tests_a_crash_left_unrun_are_kept_as_passing_to_pass() -> None:
    """A Go test that panics ends its package's test binary: the package's later tests are never reported. With
    the runner's crash evidence they are not "missing": the candidate is kept, and they stay PASS_TO_PASS (the
    validation's gold runs must see them pass)."""
    from envs.testrun import abilities

    passing = ["pkg::TestReverse", "pkg::TestShout", "other::TestOk"]
    panicked = run_of(**{"pkg::TestReverse": "failed", "other::TestOk": "passed"})
    panicked.results[0].message = "panic: runtime error: index out of range [3] with length 3 [recovered]"
    crashed = abilities("go").ended_early(panicked)
    assert crashed and not abilities("pytest").ended_early(panicked)  # a runner knows its own crash marks only
    kept = judge(panicked, passing, 2, crashed)
    assert kept.kept and kept.fail_to_pass == ["pkg::TestReverse"], kept
    assert kept.pass_to_pass == ["pkg::TestShout", "other::TestOk"]
    assert judge(panicked, passing, 2).reason == "tests missing from the run"  # no evidence: not kept
    aborted = TestRun(exit_code=101, output="error: test failed, to rerun pass `--lib`\nCaused by:\n  process "
                                            "didn't exit successfully: `target/debug/deps/c-1a2b` (signal: 6, "
                                            "SIGABRT: process abort signal)\n")
    assert abilities("cargo").ended_early(aborted)
    assert judge(aborted, passing, 2, True).reason == "the test process crashed before reporting a failure"


def test_statements_never_leak_the_fix() -> None:
    old, new = "def f(x):\n    return x + offset_value\n", "def f(x):\n    return x - offset_value\n"
    info = MutationInfo(operator="flip", file="pkg/secret_module.py", function="secret_function", line=2)
    candidate = Candidate(kind="mutation", bug_patch=unified_diff("pkg/m.py", old, new),
                          gold_patch=unified_diff("pkg/m.py", new, old), mutation=info)
    messages = {"tests/t.py::test_f": "assert -1 == 3\n    return x - offset_value\nE where -1 = f(1)"}
    text = problem_statement(candidate, ["tests/t.py::test_f"], messages)
    assert "tests/t.py::test_f" in text and "assert -1 == 3" in text
    assert "offset_value" not in text and "secret" not in text
    history = candidate.model_copy(update={"kind": "history", "mutation": None, "history": HistoryInfo(
        commit="0123456789abcdef",
        message="Fix offsets of f\n\nSee 0123456789ab.\n\nSigned-off-by: A <a@b>")})
    text = problem_statement(history, ["tests/t.py::test_f"], {})
    assert text.startswith("Fix offsets of f") and "0123456789ab" not in text and "Signed-off-by" not in text


def catalogued(tmp_path: Path, status: str, image: str = "env:1") -> tuple[Catalog, str]:
    source = SourceRecord(repo="https://github.com/o/n.git", name="n", commit="c" * 40)
    spec = EnvSpec(status=status, source=source,  # type: ignore[arg-type]
                   model="embedded", plan=Plan(test_command="python -m pytest"), image=image,
                   test_command="python -m pytest", verification=Verification(verified=status == "verified"))
    catalog = Catalog(tmp_path / "catalog")
    return catalog, catalog.upsert_spec(spec, tmp_path / "env").id


def test_a_partial_environment_needs_include_partial(tmp_path: Path) -> None:
    catalog, env_id = catalogued(tmp_path, "partial")
    with pytest.raises(TaskError, match="--include-partial"):
        make_tasks(env_id, FakeFactory(), catalog=catalog, store=TaskStore(tmp_path / "tasks"))


def test_a_removed_image_says_how_to_rebuild_and_writes_nothing(tmp_path: Path) -> None:
    catalog, env_id = catalogued(tmp_path, "verified", image="gone:1")
    store = TaskStore(tmp_path / "tasks")
    with pytest.raises(TaskError, match=r"was removed; rebuild it with `autoinstall https://github.com/o/n.git"):
        make_tasks(env_id, FakeFactory(), catalog=catalog, store=store, options=MakeOptions(max_tasks=1))
    assert store.counts() == {}


def test_cli_lists_stored_tasks_and_refuses_a_partial_environment(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    hard = task(3).model_copy(update={"kind": "combined", "difficulty": "hard"})
    TaskStore().write("e1", [task(1), task(2), hard])
    listed = CliRunner().invoke(tasks_app, ["list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)[0] | {"path": ""} == {
        "env_id": "e1", "tasks": 3, "repo": "o/n", "history": 0, "mutation": 2, "combined": 1, "easy": 0,
        "medium": 0, "hard": 1, "unknown": 2, "path": ""}
    only = CliRunner().invoke(tasks_app, ["list", "--env", "e1", "--kind", "combined", "--json"])
    assert [t["instance_id"] for t in json.loads(only.output)] == [hard.instance_id]
    table = CliRunner().invoke(tasks_app, ["list", "--difficulty", "hard"])
    assert "combined" in table.output and " 1 " in table.output, table.output
    wrong = CliRunner().invoke(tasks_app, ["list", "--difficulty", "tricky"])
    assert wrong.exit_code == 2 and "choose among easy, medium, hard" in wrong.output
    catalog, env_id = catalogued(tmp_path, "partial")
    refused = CliRunner().invoke(tasks_app, ["make", env_id, "--catalog", str(catalog.root)])
    assert isinstance(refused.exception, TaskError) and "--include-partial" in str(refused.exception)
    bad = CliRunner().invoke(tasks_app, ["make", env_id, "--kinds", "bugs"])
    assert bad.exit_code == 2 and "choose among history, mutation, combined" in bad.output


def test_catalog_show_counts_the_environments_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    catalog, env_id = catalogued(tmp_path, "verified")
    shown = CliRunner().invoke(catalog_app, ["show", env_id, "--catalog", str(catalog.root)])
    assert f"tasks: none (make some with `autoinstall tasks make {env_id}`)" in shown.output, shown.output
    easy = task(1).model_copy(update={"env_id": env_id, "difficulty": "easy"})
    hard = task(2).model_copy(update={"env_id": env_id, "kind": "combined", "difficulty": "hard"})
    TaskStore().write(env_id, [easy, hard, task(3)])
    shown = CliRunner().invoke(catalog_app, ["show", env_id, "--catalog", str(catalog.root)])
    assert "tasks: 3 (history 0, mutation 2, combined 1; easy 1, medium 0, hard 1, unknown 1)" in shown.output
    data = CliRunner().invoke(catalog_app, ["show", env_id, "--catalog", str(catalog.root), "--json"])
    assert json.loads(data.output)["tasks"] == {"tasks": 3, "history": 0, "mutation": 2, "combined": 1, "easy": 1,
                                                "medium": 0, "hard": 1, "unknown": 1}
