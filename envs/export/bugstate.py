"""The starting state of a task as an image, for the exports: the task's start image (envs/grading/image.py:
the environment with the bug applied, a pristine copy of that state, the test user and the grader), built by
Harbor from the task's environment/ directory and by the SWE-bench export under the tag its rows name."""
from __future__ import annotations

from pathlib import Path

from envs.export.common import ExportError
from envs.export.tasks import TaskEntry
from envs.grading import image
from envs.grading.policy import Grading

TESTBED = image.TESTBED


def grading(te: TaskEntry) -> Grading:
    """The task's grading record.

    Raises:
        ExportError: the task was made before tasks carried one (it must be remade).
    """
    if te.task.grading is None:
        msg = (f"task {te.task.instance_id} has no grading record (it was made before tasks were graded in a "
               f"fresh container); remake the tasks of {te.entry.record.id}: autoinstall tasks make {te.entry.record.id}")
        raise ExportError(msg)
    return te.task.grading


def check(tasks: list[TaskEntry]) -> None:
    """Raises ExportError naming the first task without a grading record."""
    for te in tasks:
        grading(te)


def write_context(dest: Path, te: TaskEntry, base: str) -> None:
    """dest/: the start image's build context, FROM `base` (the environment image as the export names it)."""
    image.write_context(dest, base, te.task.bug_patch, grading(te), label=f"task {te.task.instance_id} ({te.task.repo})")


def image_tag(te: TaskEntry, base: str) -> str:
    """The local tag of the start image built from `base`."""
    return image.image_tag(te.slug, base, te.task.bug_patch, grading(te))
