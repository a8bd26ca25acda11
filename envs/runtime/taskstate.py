"""Episodes of a task (envs/task.py): start from the bug state, score FAIL_TO_PASS + PASS_TO_PASS.

Environment.reset(task) calls `apply_bug` on the fresh container; Environment.reward() calls `task_reward`,
whose value is 1.0 when every FAIL_TO_PASS and every PASS_TO_PASS test passes and 0.0 otherwise (passed and
total still give the fraction), the outcome the Harbor, SWE-bench and verl exports of the task score too.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable

from envs.base import Sandbox
from envs.errors import EnvError
from envs.runtime.reward import Reward, run_reward
from envs.runtime.spec import RuntimeSpec
from envs.task import Task

PATCH_PATH = "/var/tmp/autoinstall-task-bug.patch"
"""Not under /tmp: a tmpfs in the sandbox, which files put into the container do not reach."""


class TaskStateError(EnvError):
    """The task's bug does not apply to the episode's image (the task was made on another environment)."""


def apply_bug(sandbox: Sandbox, task: Task, workdir: str) -> None:
    """Turn the episode's tree (the solved state) into the bug state.

    Raises:
        TaskStateError: `git apply` refused the bug patch (its output says why).
    """
    sandbox.write_file(PATCH_PATH, task.bug_patch.encode())
    result = sandbox.exec(f"cd {shlex.quote(workdir)} && git apply --whitespace=nowarn {PATCH_PATH} && "
                          f"rm -f {PATCH_PATH}", timeout=120)
    if not result.ok:
        msg = (f"The bug of task {task.instance_id} does not apply in {workdir} of {task.image}: "
               f"{result.output.strip()[-500:]}\nWas the task made on this environment? `autoinstall tasks "
               f"{task.env_id}` remakes its tasks.")
        raise TaskStateError(msg)


def task_reward(sandbox: Sandbox, spec: RuntimeSpec, task: Task, timeout_s: float | None,
                install_plugin: Callable[[], None]) -> Reward:
    """FAIL_TO_PASS + PASS_TO_PASS run now: value 1.0 when all pass, else 0.0 (pytest runs just those tests;
    other runners run the suite and need every test that ran to pass)."""
    selection = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS] if spec.test_runner == "pytest" else []
    reward = run_reward(sandbox, spec, selection, timeout_s, install_plugin)
    solved = reward.total > 0 and reward.passed == reward.total and (bool(selection) or reward.exit_code == 0)
    return reward.model_copy(update={"value": 1.0 if solved else 0.0})
