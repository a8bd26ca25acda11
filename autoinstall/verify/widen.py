"""A test command that passes but runs a side suite of the default collection (CI running its unit tests only, beside
acceptance tests) gives way to the default collection: the install loop then repairs that as any suite (services
run, what still cannot run deselected with evidence), and keeps the side suite only when nothing makes it run."""
from __future__ import annotations

import shlex

from autoinstall.ecosystems.services import services_prefix
from autoinstall.verify.checks import count_suite, default_command, narrow_suite
from envs.base import Sandbox
from envs.spec import DEFAULT_MAX_DESELECTED, Check, Deselection, Plan
from envs.testrun import abilities, test_command


def wider_plan(sandbox: Sandbox, plan: Plan, deselected: list[Deselection], timeout_s: float,
               env: dict[str, str] | None, max_deselected: float = DEFAULT_MAX_DESELECTED) -> tuple[Plan, str] | None:
    """The plan running the default collection instead, and why, when its test command collects too little of
    it (narrow_suite); None when it does not, or the suite's size cannot be told."""
    command, default = test_command(plan), default_command(plan)
    if command is None or default is None or command.split() == default.split():
        return None
    reason = narrow_suite(count_suite(sandbox, plan, deselected, timeout_s, env), max_deselected)
    if not reason:
        return None
    options = " ".join(shlex.quote(o) for o in abilities(plan.test_runner).settings_of(command))
    wide = f"{default} {options}".strip()
    checks = [_collect_as(c, wide) for c in plan.checks]
    note = f"{reason}: the tests are the default collection, `{wide}`"
    return plan.model_copy(update={"test_command": wide, "checks": checks, "notes": [*plan.notes, note]}), note


def side_suite(narrow: Plan, wide: Plan, why: str) -> Plan:
    """The side suite's plan again, noting why the default collection (`wide`) could not replace it."""
    tried = [n for n in wide.notes if n not in narrow.notes]
    return narrow.model_copy(update={"notes": [*narrow.notes, *tried, f"the default collection could not be made "
                                                                      f"to run ({why}): the side suite stands"]})


def _collect_as(check: Check, command: str) -> Check:
    """A pytest collect check collecting what `command` runs (run_check starts the services for it)."""
    if check.kind != "collect" or "--collect-only" not in check.command:
        return check
    return check.model_copy(update={"command": f"{command.removeprefix(services_prefix(command))} --collect-only -q"})
