"""Phase 2: run the plan's steps in a sandbox, repair what fails, until the verification suite passes."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from autoinstall.ecosystems.base import Ecosystem, FailedTest, Overrun, RepairContext
from autoinstall.ecosystems.detect import FALLBACK
from autoinstall.errors import AutoinstallError
from autoinstall.install.overtime import Overtime, failed
from autoinstall.install.passing import failures, for_a_passing_suite, worth_asking
from autoinstall.install.result import InstallResult
from autoinstall.install.stubs import add_stub, put_stub_wheels
from autoinstall.options import Budgets
from autoinstall.plan.agent_tools import tools_in, wants_tools
from autoinstall.plan.models.chat_client import ModelError
from autoinstall.verify.checks import crash_signal, judge, run_check, run_failure_class
from autoinstall.verify.leftout import crash_deselections, hang_deselections, uncollectable_deselections
from autoinstall.verify.widen import side_suite, wider_plan
from envs.base import ExecResult, Layered, Sandbox
from envs.errors import SandboxLimitError
from envs.spec import Check, CheckResult, Deselection, Failure, Plan, Repair, Step, StepLog, TestRun
from envs.testrun import abilities, collects, run_tests, test_command
from tools import ToolServerError

SandboxFactory = Callable[[str], Sandbox]
"""Given a Python version ("3.11"), return an unstarted sandbox with that interpreter and the venv active."""

Reporter = Callable[[str, str], None]
"""Called with (event, text): "step" when a command starts, "done"/"fail"/"repair" after it."""

StepsDone = Callable[[Sandbox, InstallResult], None]
"""Called when the steps so far have run, before each round of checks and tests (the replay's build starts there)."""


class _Restart(Exception):
    """Start over: on another interpreter, or because a variable every step resolved under changed."""


class _ModelFailed(Exception):
    """The model could not answer a repair request; the build stops with what it has recorded."""


class Installer:
    """Runs one plan to completion or failure. Create one per environment."""

    def __init__(self, plan: Plan, repo: Path, model: object, make_sandbox: SandboxFactory, *,
                 budgets: Budgets | None = None, log_dir: Path | None = None,
                 available_pythons: list[str] | None = None, report: Reporter | None = None,
                 ecosystem: Ecosystem | None = None, on_steps_done: StepsDone | None = None) -> None:
        self.plan, self.repo, self.model, self.make_sandbox = plan, repo, model, make_sandbox
        self.ecosystem = ecosystem or FALLBACK
        self.budgets = budgets or Budgets()
        self.log_dir = log_dir
        self.available_pythons = available_pythons or list(self.ecosystem.toolchains)
        self.report = report or (lambda event, text: None)
        self.on_steps_done = on_steps_done
        self.result = InstallResult(ok=False, python=plan.python)
        self.started = time.monotonic()
        self.sandbox: Sandbox | None = None
        self.network = True
        """Whether the current sandbox is on the network (sandboxes start on it, to install)."""
        self.last_good: str | None = None
        self.narrow: tuple[Plan, list[Deselection]] | None = None
        """The plan whose side suite passed before the default collection replaced it, and its deselections."""
        self.overtime = Overtime(self.budgets)

    # -- running commands -------------------------------------------------------------------
    def _out_of_budget(self) -> Failure | None:
        if len(self.result.repairs) > self.budgets.max_repairs:
            return Failure(failure_class="budget_exhausted",
                           message=f"gave up after {self.budgets.max_repairs} repairs")
        if time.monotonic() - self.started > self.budgets.wall_s:
            return Failure(failure_class="budget_exhausted",
                           message=f"wall-time budget of {self.budgets.wall_s:.0f} s used up")
        return None

    def _network(self, enabled: bool) -> None:
        """Install steps reach the registries; the project's own code (checks, tests) runs offline."""
        assert self.sandbox is not None
        if self.network != enabled:
            self.sandbox.set_network(enabled)
            self.network = enabled

    def _run(self, command: str, phase: str, timeout: float) -> tuple[ExecResult, StepLog]:
        assert self.sandbox is not None
        self._network(True)
        self.report("step", command)
        result = self.sandbox.exec(command, timeout=timeout, env=self.result.env or None)
        entry = self._record(command, phase, result.exit_code, result.duration_s, result.output)
        entry.timed_out, entry.idle_s = result.timed_out, result.idle_s
        self.report("done" if result.ok else "fail", f"{command} ({result.duration_s:.1f}s)")
        return result, entry

    def _record(self, command: str, phase: str, code: int, duration: float, output: str) -> StepLog:
        """Append a log entry and write the command's full output next to the spec."""
        entry = StepLog(index=len(self.result.log) + 1, phase=phase, command=command, exit_code=code,  # type: ignore[arg-type]
                        duration_s=round(duration, 3), network=self.network)
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            (self.log_dir / (name := f"{entry.index:03d}-{phase}.log")).write_text(f"$ {command}\n# exit {code}\n{output}")
            entry.log_file = f"logs/{name}"
        self.result.log.append(entry)
        return entry

    def _snapshot(self, label: str, *, go_on: bool = True) -> None:
        assert (box := self.sandbox) is not None  # `Layered`: it goes on from it, as a replay's next step
        snap = box.snapshot_and_continue(label) if go_on and isinstance(box, Layered) else box.snapshot(label)
        self.last_good = self.result.snapshot = snap
        self.result.snapshots.append(snap)

    def _ask_model(self, failing: Step, phase: str, result: ExecResult, entry: StepLog,
                   failed_tests: list[FailedTest] | None = None, test_ids: list[str] | None = None,
                   overrun: Overrun | None = None) -> Repair | None:
        output = result.output
        entry.diagnosis = self.ecosystem.diagnose(output, timed_out=result.timed_out)
        context = RepairContext(plan=self.plan, failing=failing, phase=phase, output=output[-20000:],  # type: ignore[arg-type]
                                diagnosis=entry.diagnosis, python=self.result.python,
                                available_pythons=self.available_pythons, tried=self.result.repairs,
                                failed_tests=failed_tests or [], test_ids=test_ids or [], env=self.result.env,
                                repo=self.repo, overrun=overrun)
        try:
            if wants_tools(self.model) and self.sandbox is not None:
                with tools_in(self.sandbox) as tools:
                    repair = self.model.repair(context, tools=tools)  # type: ignore[attr-defined]
            else:
                repair = self.model.repair(context)  # type: ignore[attr-defined]
        except ModelError as e:
            raise _ModelFailed(str(e)) from e
        except ToolServerError as e:
            raise _ModelFailed(f"the agent tools in the sandbox failed: {e}") from e
        if repair is not None:
            entry.repair = repair
            self.result.repairs.append(repair)
            self.report("repair", repair.reason)
        return None if repair is not None and repair.kind == "give_up" else repair  # recorded: why it stops

    # -- applying repairs -------------------------------------------------------------------
    def _record_left_out(self, repair: Repair) -> None:
        """What a repair leaves out of the suite with it (a module that cannot be built here), counted."""
        known = {d.test for d in self.result.deselected}
        self.result.deselected += [d for d in repair.left_out if d.test not in known]

    def _apply_common(self, repair: Repair, output: str) -> None:
        """Repairs that change the environment rather than the step list."""
        if repair.kind == "set_env":
            changed = any(k in self.result.env and self.result.env[k] != v for k, v in repair.env.items())
            self.result.env.update(repair.env)
            if changed:  # the steps so far ran under the old value (a cutoff date): run them all again
                raise _Restart
        elif repair.kind == "switch_python":
            self.result.python = repair.python or self.result.python
            raise _Restart
        elif repair.kind == "stub_distribution":
            try:
                add_stub(self.sandbox, self.ecosystem, self.result, self.repo, repair, output)
            except AutoinstallError as e:  # the ecosystem cannot stand in for a package (Go modules)
                raise _ModelFailed(str(e)) from e
        elif repair.kind == "deselect":
            self.result.deselected += [Deselection(test=t, reason=repair.reason) for t in repair.tests]
        elif repair.kind in ("test_args", "test_command") and self.plan.test_command and (new := (
                repair.test_command if repair.kind == "test_command"
                else repair.args and f"{self.plan.test_command} {repair.args}")):
            self.plan = self.plan.model_copy(update={
                "test_command": new, "notes": [*self.plan.notes, f"test command changed: {repair.reason}"]})

    def _with_evidence(self, repair: Repair, failed: list[FailedTest]) -> Repair | None:
        """Keep the deselections that name a test (or file) that failed for a reason the ecosystem accepts;
        None when none does (whoever proposed them, a deselection is not a way to hide failing tests)."""
        shown = [f.test_id for f in failed if self.ecosystem.justifies_deselection(f.message)]
        kept = [t for t in repair.tests if any(s == t or s.startswith((t + "::", t + "/")) for s in shown)]
        if not kept:
            self.report("repair", f"deselection refused, no failing test shows why: {', '.join(repair.tests[:3])}")
            return None
        return repair.model_copy(update={"tests": kept})

    def _leave_out(self, deselections: list[Deselection], entry: StepLog) -> None:
        """Deselect on the builder's own evidence (hangs, uncollectable files), recorded as a repair."""
        repair = Repair(kind="deselect", tests=[d.test for d in deselections],
                        reason="; ".join(f"{d.test}: {d.reason}" for d in deselections)[:1000])
        entry.repair = repair
        self.result.repairs.append(repair)
        self.result.deselected += deselections
        self.report("repair", repair.reason)

    def _leave_out_uncollectable(self, entry: StepLog) -> bool:
        """Once no repair helps a failing collection: leave out the few files that fail it, if that is all."""
        command = test_command(self.plan)
        if command is None or self.sandbox is None or abilities(self.plan.test_runner).uncollectable is None:
            return False
        found, why_not = uncollectable_deselections(self.sandbox, self.plan.test_runner, command, self.result.deselected,
                                                    self.repo, self.budgets.step_timeout_s, self.result.env or None)
        if found:
            self._leave_out(found, entry)
        else:
            self.report("fail", f"collection errors not left out: {why_not}")
        return bool(found)

    def _restore(self) -> None:
        assert self.sandbox is not None and self.last_good is not None
        self.sandbox.restore(self.last_good)
        put_stub_wheels(self.sandbox, self.result)

    # -- the loop ---------------------------------------------------------------------------
    def _install_steps(self, queue: list[Step]) -> Failure | None:
        """Run steps in order; on failure restore the last snapshot, apply a repair, retry."""
        while queue:
            if (failure := self._out_of_budget()) is not None:
                return failure
            step = queue[0]
            result, entry = self._run(step.command, "install", timeout := self.overtime.time_for(step))
            if result.ok:  # recorded with the time it ran with
                self.result.steps.append(queue.pop(0).model_copy(update={"timeout_s": timeout}))
                self._snapshot(f"step-{len(self.result.steps)}")
                continue
            overrun = self.overtime.overrun(step, timeout, result, time.monotonic() - self.started)
            repair = self.overtime.judge(self._ask_model(step, "install", result, entry, overrun=overrun), step,
                                         overrun, entry, self.result.repairs, self.report)
            if repair is None or repair.kind in ("give_up", "deselect"):
                return Failure(failure_class="install_failed", step_index=len(self.result.steps) + 1,
                               message=failed(len(self.result.steps) + 1, step, overrun),
                               evidence=(entry.diagnosis.evidence if entry.diagnosis else "") or result.output[-800:])
            self._restore()
            self._record_left_out(repair)
            if repair.kind == "insert_before" and repair.step:
                queue.insert(0, repair.step)
            elif repair.kind in ("replace", "more_time") and repair.step:  # more_time: the step, with more time
                queue[0] = repair.step
            elif repair.kind == "skip":
                self.result.skipped.append(repair)
                queue.pop(0)
            else:
                self._apply_common(repair, result.output)
        return None

    def _add_steps(self, repair: Repair) -> Failure | None:
        """A repair during checks or tests: run its step now, on top of what is there."""
        self._record_left_out(repair)
        if repair.kind in ("insert_before", "replace") and repair.step:
            return self._install_steps([repair.step])
        self._apply_common(repair, "")
        return None

    def _pre_checks(self) -> list[Check]:
        """The checks worth running before the tests: imports, and collection when the runner can collect."""
        return [c for c in self.plan.checks if c.kind == "import"
                or (c.kind == "collect" and collects(self.plan.test_runner))]

    def _repair_checks(self) -> tuple[list[CheckResult], Failure | None, bool]:
        """Run the pre-checks; at the first required one that fails, apply a repair. Returns the check results,
        a failure if nothing could be done, and whether a repair was applied."""
        assert self.sandbox is not None
        checks: list[CheckResult] = []
        self._network(False)
        for check in self._pre_checks():
            result = run_check(self.sandbox, check, self.budgets.step_timeout_s, self.result.env,
                               self.result.deselected, test_command(self.plan), self.plan.test_runner)
            checks.append(result)
            if result.ok or not check.required:
                continue
            entry = self._record(check.command, "check", result.exit_code, result.duration_s,
                                 result.output or result.output_tail)
            output = ExecResult(exit_code=result.exit_code, stdout=result.output or result.output_tail)
            repair = self._ask_model(Step(command=check.command, why=check.why), "check", output, entry)
            if repair is None and check.kind == "collect" and self._leave_out_uncollectable(entry):
                return checks, None, True
            if repair is None:
                cls = "collection_failed" if check.kind == "collect" else "install_failed"
                return checks, Failure(failure_class=cls, message=f"check {check.name!r} failed",
                                       evidence=result.output_tail[-800:]), False
            return checks, self._add_steps(repair), True
        return checks, None, False

    def _repair_tests(self, checks: list[CheckResult]) -> tuple[Failure | None, bool]:
        """Run the tests once; returns (failure, finished): finished when they pass or nothing helps."""
        assert self.sandbox is not None
        self._network(False)
        run = run_tests(self.sandbox, test_command(self.plan), self.plan.test_runner, self.result.deselected,
                        self.budgets.test_timeout_s, self.result.env, self.budgets.per_test_timeout_s)
        if hangs := hang_deselections(run, self.result.deselected):  # every run would wait for them again
            self._leave_out(hangs, self._record("<tests> tests hang", "tests", run.exit_code, run.duration_s,
                                                run.output_tail))
            return None, False
        if crashes := crash_deselections(run, self.result.deselected, crash_signal(run)):  # no report, no tests
            self._leave_out(crashes, self._record("<tests> the test process crashed", "tests", run.exit_code,
                                                  run.duration_s, run.output_tail))
            return None, False
        ok, reason = judge(checks, [run], self.budgets.threshold)
        if ok and self.narrow is None and (wider := wider_plan(self.sandbox, self.plan, self.result.deselected,
                                                               self.budgets.step_timeout_s, self.result.env)):
            self.narrow = (self.plan, list(self.result.deselected))
            self.plan = wider[0]
            self.report("repair", wider[1])
            return None, False
        if ok and self._repair_passing(run):
            return None, False
        if ok or not abilities(self.plan.test_runner).has_tests:
            self.result.last_run = run.model_copy(update={"output": "", "sandbox": "install"}) if ok else None
            return None, True
        entry = self._record(f"<tests> {reason}", "tests", run.exit_code, run.duration_s,
                             run.output or run.output_tail)
        failed, output = failures(run)
        repair = self._ask_model(Step(command="<tests>", why="run the test suite"), "tests", output, entry, failed,
                                 [r.test_id for r in run.results])
        if repair is not None and repair.kind == "deselect":
            repair = self._with_evidence(repair, failed)
        if repair is None and not run.collection_ok and not run.timed_out and self._leave_out_uncollectable(entry):
            return None, False
        if repair is None:
            return Failure(failure_class=run_failure_class(run), message=reason, evidence=run.output_tail[-1500:]), True
        failure = self._add_steps(repair)
        return failure, failure is not None

    def _repair_passing(self, run: TestRun) -> bool:
        """A passing suite whose failures show a missing system piece: apply a repair passing.py takes (True)."""
        failed, output = failures(run)
        if not worth_asking(self.ecosystem.diagnose(output.output).kind, len(failed)):
            return False
        entry = self._record("<tests> passing, some failures", "tests", run.exit_code, run.duration_s, output.output)
        repair = self._ask_model(Step(command="<tests>", why="run the test suite"), "tests", output, entry, failed,
                                 [r.test_id for r in run.results])
        if repair is not None and not for_a_passing_suite(repair, self.result.env):
            self.result.repairs.pop()  # not applied: the passing suite stands as it is
            repair = entry.repair = None
        if repair is None:
            return False
        if repair.step is None:  # a variable not set before: no restart
            self._apply_common(repair, "")
        elif not self._run(repair.step.command, "install", self.budgets.step_timeout_s)[0].ok:
            self._restore()  # the suite passed without it
            return False
        else:
            self.result.steps.append(repair.step)
            self._snapshot(f"step-{len(self.result.steps)}")
        return True

    def _check_and_test(self) -> Failure | None:
        """Run import/collect checks and the tests; repair until they pass or nothing more helps."""
        while (failure := self._out_of_budget()) is None:
            if self.on_steps_done is not None:  # a repair may have added a step since the last round
                self.on_steps_done(self.sandbox, self.result)  # type: ignore[arg-type]
            checks, failure, repaired = self._repair_checks()
            if failure is not None:
                return failure
            if repaired:
                continue
            failure, finished = self._repair_tests(checks)
            if finished:
                return failure
        return failure

    def _attempt(self) -> Failure | None:
        self.sandbox = self.make_sandbox(self.result.python)
        self.sandbox.start()
        self.network = True
        self.sandbox.put(self.repo, self.sandbox.workdir)
        put_stub_wheels(self.sandbox, self.result)
        self._snapshot("source")
        self.result.steps, self.result.last_run = [], None
        failure = self._install_steps(list(self.plan.steps))
        if failure is None:
            failure = self._check_and_test()
            if failure is not None and self.narrow is not None:  # the side suite that passed stands (partial)
                self.report("fail", f"the default collection: {failure.message}; back to the side suite")
                self.plan, self.result.deselected = side_suite(self.narrow[0], self.plan, failure.message), self.narrow[1]
                self.result.last_run, failure = None, None
            if self.sandbox is not None:
                self._snapshot("final", go_on=False)  # the sandbox stops next
        return failure

    def run(self) -> InstallResult:
        """Install, repair and pre-verify; the sandbox is stopped afterwards (snapshots are kept)."""
        try:
            while True:
                try:
                    self.result.failure = self._attempt()
                    break
                except _ModelFailed as e:
                    self.result.failure = Failure(failure_class="model_error", message=f"the model failed: {e}")
                    break
                except SandboxLimitError as e:
                    self.result.failure = Failure(failure_class="disk_limit", message=str(e),
                                                  step_index=len(self.result.steps) + 1)
                    break
                except _Restart:
                    self._stop()
                    if (failure := self._out_of_budget()) is not None:
                        self.result.failure = failure
                        break
        finally:
            self._stop()
        self.result.ok = self.result.failure is None
        self.result.plan = self.plan
        return self.result

    def _stop(self) -> None:
        if self.sandbox is not None:
            self.sandbox.stop()
            self.sandbox = None
