"""The install loop's side of a step that ran out of time (the rule is autoinstall/ecosystems/overrun.py): the
timeout each step runs with, what the model is told (`Overrun`), and the more time granted, once a command,
whoever asked for it."""
from __future__ import annotations

from collections.abc import Callable

from autoinstall.ecosystems.base import Overrun
from autoinstall.ecosystems.overrun import granted, why_it_stopped
from autoinstall.options import Budgets
from envs.base import ExecResult
from envs.spec import Repair, Step, StepLog


class Overtime:
    """The install commands given more time in this build (kept across restarts: no command gets it twice)."""

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        self.extended: dict[str, float] = {}
        """Command -> the seconds a `more_time` repair granted it."""

    def time_for(self, step: Step) -> float:
        """A step's timeout: its own within the per-step budget, or what it was granted."""
        return self.extended.get(step.command) or min(step.timeout_s, self.budgets.step_timeout_s)

    def overrun(self, step: Step, timeout: float, result: ExecResult, elapsed: float) -> Overrun | None:
        """For a run that timed out: what it had, how long it had been idle, what the build has left."""
        if not result.timed_out:
            return None
        return Overrun(timeout_s=timeout, idle_s=result.idle_s, retried=step.command in self.extended,
                       remaining_s=max(0.0, self.budgets.wall_s - elapsed))

    def judge(self, repair: Repair | None, step: Step, overrun: Overrun | None, entry: StepLog,
              repairs: list[Repair], report: Callable[[str, str], None]) -> Repair | None:
        """`repair` as the loop applies it. A `more_time` one, whoever proposed it, is granted only to a step
        that ran out of time while still working, once, within what the build has left: its `step` becomes
        the failing step with the seconds granted (run as a `replace`);
        refused, it is taken back from the record (not applied, not counted) and None is returned."""
        if repair is None or repair.kind != "more_time":
            return repair
        seconds = granted(overrun, repair.timeout_s) if overrun is not None else None
        if seconds is None:
            if repairs and repairs[-1] is repair:  # _ask_model recorded it last
                repairs.pop()
            entry.repair = None
            report("fail", "more time refused: " + (why_it_stopped(overrun) if overrun else "it did not time out"))
            return None
        if repair.timeout_s and repair.timeout_s != seconds:
            report("repair", f"more time: once more with {seconds:.0f} s (asked for {repair.timeout_s:.0f} s)")
        self.extended[step.command] = seconds
        repair.timeout_s, repair.step = seconds, step.model_copy(update={"timeout_s": seconds})
        return repair


def failed(index: int, step: Step, overrun: Overrun | None) -> str:
    """The failure of install step `index`: for a timeout, whether it hung and how to give it more time."""
    if overrun is None:
        return f"install step {index} failed: {step.command}"
    return f"install step {index} timed out: {step.command}; {why_it_stopped(overrun)}"
