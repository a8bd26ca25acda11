"""Episodes of a task (envs/task.py) start from the bug state: Environment.reset(task) calls `apply_bug` on the
episode's container. Its reward is graded elsewhere, in a fresh container (envs/runtime/grade.py)."""
from __future__ import annotations

import shlex

from envs.base import Sandbox
from envs.errors import EnvError
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
