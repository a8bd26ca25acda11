"""An install step that runs out of time: once more with more time when it was still working (output or files
growing up to the stop), from the last snapshot, within the build's time budget, once; a hung one fails saying
so and how to give it more time. The decision on a scripted sandbox, the rule, the chat model's option, how
sandboxes measure idleness, and the real loop on Docker with a fixture whose install is slow but working."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Overrun, RepairContext
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.ecosystems.overrun import more_time, why_it_stopped
from autoinstall.install.loop import Installer
from autoinstall.options import Budgets
from autoinstall.plan.models.chat import _repair_from_args
from autoinstall.plan.models.embedded import EmbeddedModel
from envs._io import CappedOutput, idle_before
from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.spec import Diagnosis, Plan, Repair, Step

SLOW = "sh ./slow-install.sh"
PLAN = Plan(python="3.11", steps=[Step(command="pip install build-helper", why="a helper", kind="other"),
                                  Step(command=SLOW, why="the dependencies", kind="project")],
            test_command=None, test_runner="none")
OK = ExecResult(exit_code=0)


def ran_out(idle_s: float | None, timeout: float) -> ExecResult:
    return ExecResult(exit_code=124, timed_out=True, duration_s=timeout, idle_s=idle_s,
                      stdout="fetched 311 of 2112 packages\n")


def build(answers: list[ExecResult], *, model: object = None, spent_s: float = 0.0, **budget: float):  # noqa: ANN202
    """The loop over one FakeSandbox whose SLOW step answers `answers` in turn (everything else succeeds), with
    the embedded model and `spent_s` of the build's time budget already gone."""
    box = FakeSandbox(behaviour=lambda sb, cmd, env: answers.pop(0) if cmd == SLOW else OK)
    events: list[tuple[str, str]] = []
    installer = Installer(PLAN, Path(__file__).parent, model or EmbeddedModel(pythons=("3.11",)), lambda _: box,
                          budgets=Budgets(**budget), ecosystem=get_ecosystem("python"),
                          report=lambda event, text: events.append((event, text)))
    installer.started -= spent_s
    return installer.run(), box, events


def slow_timeouts(box: FakeSandbox) -> list[float]:
    return [c.args["timeout"] for c in box.calls if c.method == "exec" and c.args["cmd"] == SLOW]


def test_a_step_still_working_at_its_timeout_runs_once_more_with_twice_the_time_from_the_last_snapshot() -> None:
    result, box, events = build([ran_out(idle_s=1.0, timeout=300), OK], step_timeout_s=300, wall_s=3600)
    assert result.ok, result.failure
    assert slow_timeouts(box) == [300, 600]
    restores = [c.args["snapshot_id"] for c in box.calls if c.method == "restore"]
    assert restores == [result.snapshots[1]]  # back to the snapshot after step 1 ("source", "step-1", ...)
    assert [r.kind for r in result.repairs] == ["more_time"] and result.repairs[0].timeout_s == 600
    assert [(s.command, s.timeout_s) for s in result.steps] == [("pip install build-helper", 300), (SLOW, 600)]
    # every step recorded with what it ran with: the per-step budget's 300 s, and the more time granted
    first = next(e for e in result.log if e.command == SLOW)
    assert first.timed_out and first.idle_s == 1.0 and first.repair is not None and first.repair.kind == "more_time"
    said = next(text for event, text in events if event == "repair")
    assert "ran out of its 300 s while still working" in said and "once more from the last snapshot with 600 s" in said


def test_a_step_that_hung_gets_no_more_time_and_fails_saying_so_and_how_to_give_it_more() -> None:
    result, box, _ = build([ran_out(idle_s=280.0, timeout=300)], step_timeout_s=300, wall_s=3600)
    assert result.failure is not None and result.failure.failure_class == "install_failed"
    assert slow_timeouts(box) == [300]
    assert result.repairs == []
    message = result.failure.message
    assert message.startswith(f"install step 2 timed out: {SLOW}; it hung: no output and no files written in the "
                              "last 280 s of its 300 s")
    assert "--step-timeout SECONDS" in message and "--time-budget SECONDS" in message
    assert result.failure.step_index == 2


def test_no_second_run_with_more_time() -> None:
    result, box, _ = build([ran_out(idle_s=0.5, timeout=300), ran_out(idle_s=0.5, timeout=600)],
                           step_timeout_s=300, wall_s=3600)
    assert slow_timeouts(box) == [300, 600]
    assert result.failure is not None and [r.kind for r in result.repairs] == ["more_time"]
    assert "ran out of time again on its one more run (600 s), still working" in result.failure.message
    quiet, _, _ = build([ran_out(idle_s=0.5, timeout=300), ran_out(idle_s=590, timeout=600)], step_timeout_s=300,
                        wall_s=3600)
    assert quiet.failure is not None
    assert "one more run (600 s), with no output and no files written in its last 590 s" in quiet.failure.message


def test_the_one_more_run_never_goes_past_the_builds_time_budget() -> None:
    result, box, events = build([ran_out(idle_s=2.0, timeout=300), OK], step_timeout_s=300, wall_s=1000,
                                spent_s=600)
    assert result.ok, result.failure
    first, second = slow_timeouts(box)
    assert first == 300 and 390 <= second <= 400  # what is left of 1000 s, not 600
    assert "(what the build's time budget has left)" in next(t for e, t in events if e == "repair")
    assert result.steps[-1].timeout_s == second


def test_with_too_little_of_the_budget_left_it_fails_naming_the_time_budget() -> None:
    result, box, _ = build([ran_out(idle_s=2.0, timeout=300)], step_timeout_s=300, wall_s=1000, spent_s=900)
    assert slow_timeouts(box) == [300]
    assert result.failure is not None and result.repairs == []
    assert "while still working, and the build's time budget has" in result.failure.message
    assert "--time-budget SECONDS" in result.failure.message


def test_more_time_asked_by_any_model_is_granted_only_by_the_rule() -> None:
    """A chat model's more_time for a hung step is refused (and not counted); for a working one it is capped."""
    class Chat:
        name = "openai:scripted"

        def repair(self, context: RepairContext) -> Repair:
            assert context.overrun is not None  # the same facts the embedded rule reads
            return Repair(kind="more_time", reason="needs longer", timeout_s=100_000)

    hung, box, events = build([ran_out(idle_s=299.0, timeout=300)], model=Chat(), step_timeout_s=300, wall_s=3600)
    assert slow_timeouts(box) == [300] and hung.repairs == [] and hung.failure is not None
    assert "it hung" in hung.failure.message
    assert any(e == "fail" and t.startswith("more time refused: it hung") for e, t in events)
    working, box, events = build([ran_out(idle_s=3.0, timeout=300), OK], model=Chat(), step_timeout_s=300,
                                 wall_s=3600)
    assert working.ok and slow_timeouts(box)[1] == 3600  # what the build has left, not 100,000 s
    assert any(t.startswith("more time: once more with") and "asked for 100000 s" in t for _, t in events)


def test_the_rule_and_its_thresholds() -> None:
    step = Step(command=SLOW, why="", kind="project")
    plan = PLAN.model_copy(update={"steps": [step]})

    def ctx(overrun: Overrun | None, kind: str = "timeout", phase: str = "install") -> RepairContext:
        return RepairContext(plan=plan, failing=step, phase=phase, output="", python="3.11",  # type: ignore[arg-type]
                             diagnosis=Diagnosis(kind=kind), available_pythons=["3.11"], overrun=overrun)  # type: ignore[arg-type]

    assert Overrun(timeout_s=900, idle_s=225, remaining_s=0).progressing  # the last quarter of its time
    assert not Overrun(timeout_s=900, idle_s=226, remaining_s=0).progressing
    assert Overrun(timeout_s=20, idle_s=8, remaining_s=0).progressing  # a short timeout: its last 8 s
    assert not Overrun(timeout_s=20, idle_s=8.1, remaining_s=0).progressing
    assert Overrun(timeout_s=5, idle_s=2.5, remaining_s=0).progressing  # ... at most its last half
    assert not Overrun(timeout_s=5, idle_s=2.6, remaining_s=0).progressing
    assert not Overrun(timeout_s=5, idle_s=5, remaining_s=0).progressing  # no sign at all
    assert not Overrun(timeout_s=900, idle_s=None, remaining_s=0).progressing  # not known: not shown
    working = Overrun(timeout_s=900, idle_s=10, remaining_s=5000)
    proposal = more_time(ctx(working))
    assert proposal is not None and proposal.timeout_s == 1800 and proposal.step is not None
    assert proposal.step.timeout_s == 1800
    assert more_time(ctx(working.model_copy(update={"retried": True}))) is None
    assert more_time(ctx(working.model_copy(update={"remaining_s": 449}))) is None  # under half the first run
    assert more_time(ctx(working.model_copy(update={"remaining_s": 450}))).timeout_s == 450  # type: ignore[union-attr]
    assert more_time(ctx(working, kind="unknown")) is None and more_time(ctx(None)) is None
    assert more_time(ctx(working, phase="check")) is None
    assert "cannot tell whether it was still working" in why_it_stopped(working.model_copy(update={"idle_s": None}))
    assert json.loads(ctx(working).model_dump_json())["overrun"]["progressing"] is True  # what a chat model reads


def test_the_chat_model_can_ask_for_more_time() -> None:
    repair = _repair_from_args({"kind": "more_time", "reason": "slow", "timeout_s": 1200}, ["3.11"])
    assert repair.kind == "more_time" and repair.timeout_s == 1200


def test_output_after_the_timeout_is_not_a_sign_of_work() -> None:
    now = time.monotonic()
    out = CappedOutput(100, until=now + 60)
    out.write(b"working\n")
    assert out.last_write is not None and out.last_write >= now
    late = CappedOutput(100, until=now - 1)
    late.write(b"npm error signal SIGTERM\n")  # printed on its way out
    assert late.last_write is None and late.text() == "npm error signal SIGTERM\n"
    assert idle_before(100.0, 10.0, 95.0, None, 120.0, 5.0) == 5.0  # signs outside [start, deadline] ignored
    assert idle_before(100.0, 10.0) == 90.0


@pytest.mark.slow
def test_the_local_sandbox_says_how_long_a_timed_out_command_was_idle() -> None:
    with LocalSandbox() as sb:
        busy = sb.exec("for i in 1 2 3 4 5 6 7 8 9; do echo $i; sleep 0.2; done", timeout=1.0)
        silent = sb.exec("trap 'echo bye; exit 1' TERM; sleep 5 & wait", timeout=1.0)
        done = sb.exec("echo hi", timeout=5)
    assert busy.timed_out and busy.idle_s is not None and busy.idle_s < 0.6
    assert silent.timed_out and silent.idle_s == pytest.approx(1.0, abs=0.05)  # its "bye" came after the stop
    assert done.idle_s is None


REPO = Path(__file__).parent / "data" / "slow_install"


@pytest.mark.slow
def test_a_slow_but_working_install_runs_out_of_its_time_once_and_passes_on_docker(
        base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real loop on Docker, a 5 s step timeout: the fixture's install (about 8 s, a line a second, parts
    landing in /cache) is stopped while working, runs once more with 10 s from the snapshot, and takes the
    parts the first run left in /cache from there (the sandbox's cache volume outlives the rollback)."""
    from autoinstall.install import install  # local: the Docker factory is only loaded by tests that build
    from autoinstall.options import BuildOptions, docker_factory

    monkeypatch.setenv("AUTOINSTALL_HOME", str(Path.home() / ".autoinstall"))
    options = BuildOptions(budgets=Budgets(step_timeout_s=5, wall_s=300))
    factory = docker_factory(options.limits)
    plan = Plan(ecosystem="python", python="3.11", test_command="python -m unittest -v check_installed",
                test_runner="unittest",
                steps=[Step(command=SLOW, why="the dependencies, slowly", kind="project")])
    events: list[tuple[str, str]] = []
    result = install(plan, REPO, EmbeddedModel(pythons=("3.11",)), factory, get_ecosystem("python"), options, {},
                     tmp_path / "logs", lambda event, text: events.append((event, text)))
    try:
        runs = [e for e in result.log if e.command == SLOW]
        assert result.ok, (result.failure, [(e.command, e.exit_code, e.timed_out, e.idle_s) for e in result.log])
        assert len(runs) == 2, runs
        first, second = runs
        assert first.timed_out and first.idle_s is not None and first.idle_s < 4  # it showed work, up to the stop
        assert first.repair is not None and first.repair.kind == "more_time" and first.repair.timeout_s == 10
        assert not second.timed_out and second.exit_code == 0
        assert [s.timeout_s for s in result.steps] == [10]  # what spec.json records: the time it ran with
        again = (tmp_path / second.log_file).read_text()
        assert "part 1: from the cache" in again and again.rstrip().endswith("installed")
        assert any(e == "repair" and "still working" in t and "with 10 s" in t for e, t in events)
    finally:
        factory.discard(result.snapshots)
