"""Throughput of task making without Docker: validations a worker has not started run on the search's thread."""
from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from autoinstall.tasks.candidate import Candidate, unified_diff
from autoinstall.tasks.combine import Kept, search_combined
from autoinstall.tasks.containers import GIVE_UP_AFTER, Containers
from autoinstall.tasks.searching import Pending
from autoinstall.tasks.validate import Verdict, search, validate
from autoinstall.tasks.workspace import INLINE_PATCH_BYTES, Suite, apply_patch, git_diffs
from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.task import TaskValidation


def pending(job):  # type: ignore[no-untyped-def]
    return Pending(Candidate(kind="mutation", bug_patch="", gold_patch=""), Verdict(kept=True), None, job, None)  # type: ignore[arg-type]


def test_a_queued_validation_runs_on_the_stealing_thread_and_a_started_one_is_left_to_its_worker() -> None:
    release, started = threading.Event(), threading.Event()
    ran_on: list[str] = []

    def busy() -> tuple[TaskValidation, None]:
        started.set()
        release.wait(10)
        ran_on.append(threading.current_thread().name)
        return TaskValidation(runs=1), None

    def queued() -> tuple[TaskValidation, None]:
        ran_on.append(threading.current_thread().name)
        return TaskValidation(runs=2), None

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="validate") as executor:
        first, second = pending(busy), pending(queued)
        first.future, second.future = executor.submit(busy), executor.submit(queued)
        assert started.wait(10)
        assert not first.steal()  # its worker runs it
        assert second.steal() and second.future.result()[0].runs == 2
        assert ran_on == [threading.current_thread().name]
        release.set()
        assert first.future.result()[0].runs == 1
    assert ran_on[1].startswith("validate")


def test_a_stolen_validation_that_raises_raises_from_its_result() -> None:
    def boom() -> tuple[TaskValidation, None]:
        raise RuntimeError("engine gone")

    with ThreadPoolExecutor(max_workers=1) as executor:
        gate = threading.Event()
        executor.submit(gate.wait, 10)
        item = pending(boom)
        item.future = executor.submit(boom)
        assert item.steal()
        gate.set()
    with pytest.raises(RuntimeError, match="engine gone"):
        item.future.result()


def events(*outcomes: tuple[str, str]) -> str:
    """`go test -json` lines: each (test, action) in package m/a."""
    return "\n".join(json.dumps({"Action": action, "Package": "m/a", "Test": test}) for test, action in outcomes)


def test_a_runner_selecting_whole_top_level_tests_is_judged_on_what_it_ran_too() -> None:
    """Go runs a selected subtest's whole top-level test: the parent it also reports is judged with the
    selection (not the whole suite, whose other tests this run never meant to run)."""
    passing = ["m/a::TestA", "m/a::TestA/one", "m/a::TestB"]
    ran = events(("TestA/one", "fail"), ("TestA", "fail"))
    sandbox = FakeSandbox(rules=[(r"go test -run", ExecResult(exit_code=1, stdout=ran))]).start()
    suite = Suite(command="go test -json ./...", runner="go")
    candidate = Candidate(kind="mutation", bug_patch="x", gold_patch="y", files=["a.go"])
    verdict, _ = search(sandbox, suite, candidate, passing, max_fail=5, timeout_s=60, exact_patches=False,
                        selection=["m/a::TestA/one"])
    assert verdict.kept and verdict.fail_to_pass == ["m/a::TestA", "m/a::TestA/one"], verdict
    assert verdict.pass_to_pass == ["m/a::TestB"]  # never ran here: the validation's whole-suite run checks it
    assert verdict.judged == ["m/a::TestA", "m/a::TestA/one"]  # what the search's run stands for in validation


JEST_FILTERED = """FAIL lib/numbers.test.js
  ✕ stats of a list (12 ms)
  clamp
    ○ skipped keeps a value inside the bounds

Tests:       1 failed, 1 skipped, 2 total
"""


def test_a_runner_selecting_by_name_is_judged_on_the_selection_not_on_what_its_filter_skipped() -> None:
    """jest reports the tests its name filter left out as skipped: they did not run, so they say nothing of
    the candidate (judged on them, it read as "other tests changed")."""
    passing = ["lib/numbers.test.js > stats of a list", "lib/numbers.test.js > clamp > keeps a value inside the bounds"]
    sandbox = FakeSandbox(rules=[("^cat package.json", json.dumps({"scripts": {"test": "jest"}})),
                                 ("sh -c", ExecResult(exit_code=1, stdout=JEST_FILTERED))]).start()
    suite = Suite(command="npm test -- --verbose", runner="node")
    candidate = Candidate(kind="mutation", bug_patch="x", gold_patch="y", files=["lib/numbers.js"])
    verdict, _ = search(sandbox, suite, candidate, passing, max_fail=5, timeout_s=60, exact_patches=False,
                        selection=passing[:1])
    assert verdict.kept and verdict.fail_to_pass == passing[:1], verdict
    assert verdict.judged == passing[:1] and verdict.pass_to_pass == passing[1:]
    assert any("-t '\"'\"'^(?:stats of a list)$" in c for c in sandbox.commands()), sandbox.commands()


TRICKY = "a = 1\n\tb = '$HOME' \"`x`\" \\\\n\nEOF\nc = 3"
"""A tab, shell quoting and expansion, a line that reads like a here-document's end, no final newline."""


@pytest.mark.parametrize("size", [1, 70_000])
def test_a_patch_applies_both_ways_byte_for_byte_inline_or_through_a_file(size: int) -> None:
    """A small patch travels inside the command that applies it; one past INLINE_PATCH_BYTES through a file."""
    old = TRICKY + "\n" + "# pad\n" * (size // 6)
    new = old.replace("c = 3", "c = 4")
    patch = unified_diff("m.py", old, new, context=size)
    assert (len(patch) > INLINE_PATCH_BYTES) == (size > 1)
    with LocalSandbox() as box:
        box.write_file("m.py", old.encode())
        assert box.exec("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x",
                        timeout=60).ok
        assert apply_patch(box, patch) and box.read_file("m.py") == new.encode()
        assert git_diffs(box, ["m.py"]) == (box.exec("git diff HEAD").stdout, box.exec("git diff -R HEAD").stdout)
        assert apply_patch(box, patch, reverse=True) and box.read_file("m.py") == old.encode()
        assert not apply_patch(box, patch, reverse=True)


def kept(test: str, function: str) -> Kept:
    candidate = Candidate(kind="mutation", bug_patch=f"{function}\n", gold_patch=f"-{function}\n", files=["a.go"])
    return Kept(candidate=candidate, verdict=Verdict(kept=True, fail_to_pass=[f"m/a::{test}"]),
                sites=frozenset({f"a.go::{function}"}), reaching=[f"m/a::{test}"])


@pytest.mark.parametrize(("parts", "runs"), [(2, 1), (3, 4)])
def test_a_pair_is_not_run_again_part_by_part_a_larger_group_is(parts: int, runs: int) -> None:
    """Two parts: one's fix alone leaves the other's own validated bug state, so only the group runs. Three or
    more: each part's fix alone is a state no validation saw, run for real."""
    names = ["TestA", "TestB", "TestC"][:parts]
    ran = events(*((n, "fail") for n in names))
    sandbox = FakeSandbox(rules=[(r"go test", ExecResult(exit_code=1, stdout=ran))]).start()
    group = [kept(n, n.lower()) for n in names]
    verdict, _ = search_combined(sandbox, Suite(command="go test -json ./...", runner="go"), group,
                                 [f"m/a::{n}" for n in [*names, "TestD"]], timeout_s=60, exact_patches=False)
    assert verdict.kept, verdict
    assert sum("go test" in str(c.args.get("cmd")) for c in sandbox.calls) == runs


class OneContainer:
    """Containers' lease over one fake sandbox whose Go suite fails TestA while the bug is applied."""

    def __init__(self) -> None:
        self.bug = False
        self.sandbox = FakeSandbox(behaviour=self.answer).start()
        self.sandbox.files["/workspace/a.go"] = b"package a\n"

    def answer(self, _box: FakeSandbox, command: str, _env: dict[str, str]) -> ExecResult | None:
        if "git apply" in command:
            if "&& git apply" in command:  # not a --check alone: the bug patch applied, or the fix
                self.bug = (" -R " in command) != ("\nbug\n" in command)
            return ExecResult(exit_code=0)
        if "go test" in command:
            return ExecResult(exit_code=int(self.bug), stdout=events(("TestA", "fail" if self.bug else "pass"),
                                                                     ("TestB", "pass")))
        return None

    @contextlib.contextmanager
    def lease(self, _files: list[str]) -> Iterator[tuple[FakeSandbox, Callable[[], None]]]:
        yield self.sandbox, lambda: None

    def runs(self) -> int:
        return sum("go test" in c for c in self.sandbox.commands())


@pytest.mark.parametrize(("searched", "baseline_counts", "runs"), [
    (None, False, 4),                        # nothing seen before: twice with the bug, twice fixed
    (["m/a::TestA", "m/a::TestB"], True, 2),  # the search's run is a bug run, the baseline's a gold run
    (["m/a::TestA"], True, 3),               # the search left out a test the second bug run takes: it runs
])
def test_a_run_already_seen_on_the_same_state_is_not_made_again(searched: list[str] | None,
                                                                 baseline_counts: bool, runs: int) -> None:
    containers = OneContainer()
    candidate = Candidate(kind="mutation", bug_patch="bug\n", gold_patch="gold\n", files=["a.go"])
    verdict = Verdict(kept=True, fail_to_pass=["m/a::TestA"], pass_to_pass=["m/a::TestB"], judged=searched)
    tests = ["m/a::TestA", "m/a::TestB"]
    result, why = validate(None, "", Suite(command="go test -json ./...", runner="go"), candidate,  # type: ignore[arg-type]
                           verdict, runs=2, timeout_s=60, gold_select=tests, bug_select=tests,
                           containers=containers, searched=searched, baseline_counts=baseline_counts)  # type: ignore[arg-type]
    assert result.valid and why is None, why
    assert containers.runs() == runs and result.runs == 2


class CacheWritingFactory:
    """Fake validation containers whose every run writes a build cache entry outside the candidate's files (or,
    given `changed=""`, nothing)."""

    def __init__(self, changed: str = "/root/.cache/go-build/00/new\n") -> None:
        self.boxes: list[FakeSandbox] = []
        self.changed = changed

    def answer(self, _box: FakeSandbox, command: str, _env: dict[str, str]) -> ExecResult | None:
        if "-fprint" in command:  # the check on the way back: the paths changed outside the candidate's files
            separator = re.search(r"echo (autoinstall-lease-\w+)", command).group(1)  # type: ignore[union-attr]
            return ExecResult(exit_code=0, stdout=f"{self.changed}{separator}\nh\n{separator}\n")
        if "md5sum" in command:
            return ExecResult(exit_code=0, stdout="h\n")
        return None

    def sandbox(self, _image: str, *, network: bool) -> FakeSandbox:
        self.boxes.append(FakeSandbox(behaviour=self.answer))
        return self.boxes[-1]


def test_a_run_whose_containers_always_come_back_changed_stops_looking_at_them() -> None:
    factory = CacheWritingFactory()
    containers = Containers(factory, "image")  # type: ignore[arg-type]
    for _ in range(GIVE_UP_AFTER + 2):
        with containers.lease(["a.go"]) as (_box, restored):
            restored()
    containers.close()
    walks = [sum("md5sum" in c for c in box.commands()) for box in factory.boxes]
    assert walks == [2] * GIVE_UP_AFTER + [0, 0]  # looked at on the way in and out, then not at all
    assert (containers.started, containers.reused, containers.unchecked) == (GIVE_UP_AFTER + 2, 0, 2)
    assert all(not box.started for box in factory.boxes)  # every one stopped by close()


def test_a_validation_given_no_pool_stops_its_own_container_before_it_returns() -> None:
    scripted = OneContainer()
    scripted.sandbox.stop()

    class Factory:
        def sandbox(self, _image: str, *, network: bool) -> FakeSandbox:
            return scripted.sandbox

    candidate = Candidate(kind="mutation", bug_patch="bug\n", gold_patch="gold\n", files=["a.go"])
    verdict = Verdict(kept=True, fail_to_pass=["m/a::TestA"], pass_to_pass=["m/a::TestB"])
    result, _ = validate(Factory(), "image", Suite(command="go test -json ./...", runner="go"), candidate,  # type: ignore[arg-type]
                         verdict, runs=2, timeout_s=60)
    assert result.valid and not scripted.sandbox.started
