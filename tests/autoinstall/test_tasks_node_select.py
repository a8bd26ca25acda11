"""Node tasks run only the selected tests, on Docker: the jest and vitest fixtures' tasks are made with every
command their sandboxes are given recorded; a validation's later runs give the runner the selected tests' names
and only the files that hold them, and report no other test run; the task's grading command selects the same
way, and the grader pays the gold patch 1.0 and no change 0.0.

And the selection gives a cheating agent nothing (played on node_jest's task through the runtime): a failing
test renamed in its file, or product code that renames every test as it is defined, so that the selection's
name pattern matches none of them. A grader that trusts its filter (it runs the selection in the agent's own
container and pays when no test it selected failed and the run exited 0: `_trusting`) pays both 1.0; the
task's grader pays 0, and with its screens of product code taken away it still pays 0, naming the renamed
tests missing: a selected id the run does not report is never a pass.

Needs Docker; fails under CI when it is missing (the `builds` fixture).
"""
from __future__ import annotations

import json
import re
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from autoinstall.options import docker_factory
from autoinstall.tasks import MakeOptions, MakeReport, TaskStore, make_tasks
from envs.grading.kit.parsers.node import parse_node_output
from envs.runtime import Environment, RuntimeSpec
from envs.task import Task
from tests.adversarial.surfaces import GOLD, GOLD_IN_CONTAINER, NOP, LanguageTask
from tests.builds import SELECTING_FIXTURES, Builds

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUNNERS = dict(zip(SELECTING_FIXTURES, ("jest", "vitest"), strict=True))


@dataclass
class Recorded:
    """What one sandbox was asked to run, and what each command printed (its tail)."""

    index: int
    image: str
    commands: list[tuple[str, str]] = field(default_factory=list)


class RecordingFactory:
    """docker_factory() whose sandboxes record every command they run (the first is the search's)."""

    def __init__(self) -> None:
        self._factory = docker_factory()
        self.sandboxes: list[Recorded] = []
        self._lock = threading.Lock()

    def sandbox(self, image: str, **options: Any) -> RecordingSandbox:
        with self._lock:
            record = Recorded(len(self.sandboxes), image)
            self.sandboxes.append(record)
        return RecordingSandbox(self._factory.sandbox(image, **options), record)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


class RecordingSandbox:
    def __init__(self, sandbox: Any, record: Recorded) -> None:
        self._sandbox, self._record = sandbox, record

    def exec(self, cmd: Any, **options: Any) -> Any:
        result = self._sandbox.exec(cmd, **options)
        self._record.commands.append((cmd if isinstance(cmd, str) else shlex.join(cmd), result.output[-6000:]))
        return result

    def start(self) -> RecordingSandbox:
        self._sandbox.start()
        return self

    def __enter__(self) -> RecordingSandbox:
        self._sandbox.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sandbox.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sandbox, name)


@dataclass
class Made:
    report: MakeReport
    sandboxes: list[Recorded]
    catalog_root: Path
    images: list[str]
    """The tasks' images, removed when the run ends (tests/builds.py `remove_images`)."""


def made(builds: Builds, fixture: str) -> Made:
    built = builds.task(fixture).env  # a one-commit git repository, as a user's: patches made by `git diff`
    assert built.spec.status == "verified", built.spec.failure

    def make(work: Path) -> Made:
        factory = RecordingFactory()
        report = make_tasks(built.env_id, factory, catalog=built.catalog,  # type: ignore[arg-type]
                            store=TaskStore(work / "tasks"), options=MakeOptions(max_tasks=3, kinds=("mutation",)))
        return Made(report, factory.sandboxes, built.catalog_root, [t.image for t in report.tasks])

    return builds.made(f"node-select-{fixture}", make)


def _runs(record: Recorded, runner: str) -> list[tuple[str, str]]:
    """The test runs among a sandbox's commands (the runner given flags directly, or the test script)."""
    return [(c, out) for c, out in record.commands
            if f"sh -c '{runner}" in c or c.startswith("npm test") or "; npm test" in c]


@pytest.mark.parametrize("fixture", sorted(RUNNERS))
def test_validation_and_grading_run_only_the_selected_tests(fixture: str, builds: Builds) -> None:
    runner = RUNNERS[fixture]
    result = made(builds, fixture)
    report = result.report
    assert report.validated >= 1, (report.candidates, report.dropped, report.failures)
    assert report.unselectable_ids == 0  # every baseline id selects itself
    search, *validations = result.sandboxes
    assert _runs(search, runner), search.commands
    selected_runs = [(c, out) for v in validations for c, out in _runs(v, runner) if " -t " in c]
    whole_runs = [(c, out) for v in validations for c, out in _runs(v, runner) if " -t " not in c]
    assert whole_runs, "the first bug run of a validation is the whole suite"
    assert selected_runs, [c for v in validations for c, _ in v.commands]
    test_files = {t.split(" > ", 1)[0] for task in report.tasks for t in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]}
    narrowed = 0
    for command, output in selected_runs:
        script = shlex.split(command.split("sh -c ", 1)[1])[0]
        pattern = shlex.split(script.split(" -t ", 1)[1])[0]
        assert pattern.startswith("^(?:") and pattern.endswith(")$"), pattern
        given = [f for f in test_files if f in script.split(" -t ", 1)[0].replace("\\", "")]
        assert given, script  # the files that hold the selected tests, as positional arguments
        narrowed += len(given) < len(test_files)
        names = [n.replace("\\", "") for n in pattern[4:-2].split("|")]
        ran = [r.test_id for r in parse_node_output(output) if r.outcome != "skipped"]
        assert ran, output
        for test_id in ran:  # the run reports no test it was not given
            assert test_id.split(" > ", 1)[0] in given and " ".join(test_id.split(" > ")[1:]) in names, \
                (test_id, names)
    assert narrowed, ("a change that only one test file reaches runs that file alone", test_files,
                      [c[-300:] for c, _ in selected_runs])
    for task in report.tasks:
        assert task.validation.valid
        grading = task.grading
        assert grading is not None and grading.selected == [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
        assert f" -t '^(?:" in grading.run.command or " -t '\"'\"'^(?:" in grading.run.command, grading.run.command
    task = report.tasks[0]
    values = {}
    with Environment(RuntimeSpec.from_task(task)) as env:
        for play, body in {GOLD: f'git apply --whitespace=nowarn {GOLD_IN_CONTAINER}\n', NOP: "true\n"}.items():
            env.reset(task)
            env.step("terminal", {"command": f"cat > {GOLD_IN_CONTAINER} <<'GOLD_EOF'\n{task.gold_patch}\nGOLD_EOF\n"
                                             + body, "timeout_s": 300})
            reward = env.reward()
            values[play] = reward.value
            if play == GOLD:  # the grader's own run: only the selected tests, every one of them passed
                assert {t.test_id: t.outcome for t in reward.tests} == dict.fromkeys(grading_ids(task), "passed")
                if runner == "jest":
                    assert "with tests matching" in reward.output_tail, reward.output_tail[-2000:]
    assert values == {GOLD: 1.0, NOP: 0.0}, values


def grading_ids(task: Task) -> list[str]:
    return [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]


RENAME_IN_TEST_FILE = '''python3 - <<'PY'
import json
for fail in json.loads(%FAILS%):  # each failing test: "file > describe > name"
    path, name = fail.split(" > ", 1)[0], fail.rsplit(" > ", 1)[-1]
    text = open(path).read()
    open(path, "w").write(text.replace(name, name + " (renamed)", 1))
PY
'''
"""bash: every failing test renamed in the test file that holds it (%FAILS%: the task's FAIL_TO_PASS as a Python
literal of its JSON): the selection's pattern misses them all. Renaming only one would leave another of a task
with two failing tests failing, and the control that shows the cheat can be paid would pay nothing."""
RENAME_FROM_PRODUCT = '''cat >> "$SRC" <<'JS'
;(function () {
  const rename = (f) => typeof f !== 'function' ? f : Object.assign(function (name, ...rest) {
    return f.call(this, typeof name === 'string' ? name + ' (renamed)' : name, ...rest)
  }, f)
  global.test = rename(global.test)
  global.it = rename(global.it)
})()
JS
'''
"""bash: product code that wraps jest's `test` and `it` as it is loaded (before the test file defines its
tests) so that every test is defined under another name: the selection's pattern matches none of them."""
CHEATS = {"a failing test renamed in its file": RENAME_IN_TEST_FILE,
          "product code renames every test as it is defined": RENAME_FROM_PRODUCT}


def cheats_for(task: Task) -> dict[str, str]:
    """CHEATS, the renaming one naming `task`'s failing tests."""
    return {name: body.replace("%FAILS%", repr(json.dumps(task.FAIL_TO_PASS))) for name, body in CHEATS.items()}


def _trusting(env: Environment, selected: list[str]) -> float:
    """What a grader that trusts its selection pays, in the agent's own container: the selected tests run by
    the runner's name filter, 1.0 when none of those it reports failed and the run exited 0. A run that pays 0
    is run once more: at a load of 80 on two cores one of jest's 5-second test timeouts took a cheat's control
    to 0 (what is shown is that the cheat can be paid where nothing stops it; nothing that fails every time
    passes for a retry)."""
    return _trusting_once(env, selected) or _trusting_once(env, selected)


def _trusting_once(env: Environment, selected: list[str]) -> float:
    try:
        reward = env.reward(tests=selected)
    except ValueError as e:  # the run named no test at all (jest lists no file whose every test it skipped)
        exited = re.search(r"\(exit (-?\d+)\)", str(e))
        return 1.0 if exited and exited.group(1) == "0" else 0.0
    failed = [t for t in reward.tests if t.outcome in ("failed", "error")]
    return 1.0 if reward.exit_code == 0 and not failed else 0.0


def _play(lt: LanguageTask, task: Task, plays: dict[str, str], trusting: dict[str, float] | None = None,
          outcomes: dict[str, dict[str, str]] | None = None) -> dict[str, float]:
    rewards = {}
    with Environment(RuntimeSpec.from_task(task)) as env:
        for name, body in plays.items():
            env.reset(task)
            gold = f"cat > {GOLD_IN_CONTAINER} <<'GOLD_EOF'\n{task.gold_patch}\nGOLD_EOF\n"
            obs = env.step("terminal", {"command": gold + lt.script(body, GOLD_IN_CONTAINER), "timeout_s": 300})
            assert not obs.is_error or name not in (GOLD, NOP), obs.output
            reward = env.reward()
            rewards[name] = reward.value
            if outcomes is not None:
                outcomes[name] = {t.test_id: t.message if t.outcome == "not_run" else t.outcome for t in reward.tests}
            if trusting is not None:
                trusting[name] = _trusting(env, grading_ids(task))
    return rewards


def test_a_selection_that_misses_the_failing_tests_pays_nothing(builds: Builds) -> None:
    result = made(builds, "node_jest")
    assert result.report.tasks, (result.report.candidates, result.report.dropped)
    task = result.report.tasks[0]
    lt = LanguageTask("node", builds.task("node_jest").env.catalog, task)
    plays = {GOLD: 'git apply --whitespace=nowarn "$GOLD"\n', NOP: "true\n"} | cheats_for(task)
    trusting: dict[str, float] = {}
    rewards = _play(lt, task, plays, trusting)
    assert rewards == {GOLD: 1.0, NOP: 0.0} | dict.fromkeys(CHEATS, 0.0), rewards
    # the control: a grader trusting its name filter in the agent's container pays each cheat in full
    assert trusting == {GOLD: 1.0, NOP: 0.0} | dict.fromkeys(CHEATS, 1.0), trusting
    # the screens of product code taken away, the grader still pays nothing: the renamed tests are missing
    assert task.grading is not None
    unscreened = task.model_copy(update={"grading": task.grading.model_copy(update={
        "rules": task.grading.rules.model_copy(update={"reach": [], "code_checks": []})})})
    outcomes: dict[str, dict[str, str]] = {}
    cheat = "product code renames every test as it is defined"
    rewards = _play(lt, unscreened, {GOLD: plays[GOLD], cheat: cheats_for(unscreened)[cheat]}, outcomes=outcomes)
    assert rewards == {GOLD: 1.0, cheat: 0.0}, (rewards, outcomes)
    assert {outcomes[cheat][t] for t in task.FAIL_TO_PASS} == {"missing"}, outcomes[cheat]
