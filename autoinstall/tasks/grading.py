"""A task's grading record (envs/grading/policy.py), made with the task: the ecosystem's rules of what belongs
to the task, the files its test ids name, and the runner's exact grading command, built in the environment's
container (a Node runner reads the package's scripts there)."""
from __future__ import annotations

from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.tasks.coverage import folder_prefix
from autoinstall.tasks.workspace import QUIET_ENV, Suite
from envs.base import Sandbox
from envs.grading.policy import Grading, GradingRules
from envs.spec import EnvSpec
from envs.testrun import DEFAULT_PER_TEST_TIMEOUT_S
from envs.testrun.grading import grading_run, test_files


def grading_for(spec: EnvSpec, suite: Suite, sandbox: Sandbox, selected: list[str], timeout_s: float) -> Grading:
    """The grading of a task over `selected` (FAIL_TO_PASS + PASS_TO_PASS) on this environment.

    Raises:
        NotGradable: the suite's runner names no test.
    """
    rules = get_ecosystem(spec.plan.ecosystem).grading
    inside = folder_prefix(suite.project)
    named = [inside + f for f in test_files(suite.runner, selected)]
    if named:
        rules = rules.merged(GradingRules(protected=named))
    run = grading_run(suite.runner, sandbox, suite.command, suite.deselected, selected,
                      min(DEFAULT_PER_TEST_TIMEOUT_S, timeout_s / 4))
    run = run.model_copy(update={"env": {**suite.env, **QUIET_ENV, **run.env}})
    return Grading(rules=rules, run=run, selected=selected, workdir=suite.workdir, timeout_s=max(600.0, timeout_s * 3))
