"""The starting state of a task as an image, for the exports: the task's start image (envs/grading/image.py:
the environment with the bug applied, a pristine copy of that state, the test user and the grader), built by
Harbor from the task's environment/ directory, or by the export under the tag its files name (SWE-bench rows;
Harbor tasks exported with a prebuilt start image)."""
from __future__ import annotations

from pathlib import Path

from envs.export.common import ExportError, ImageArtifact
from envs.export.tasks import TaskEntry
from envs.grading import image
from envs.grading.policy import Grading
from envs.testrun.grading import with_current_guards

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
    return with_current_guards(te.task.grading)  # a guard fixed since the task was made reaches its export too


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


def build_images(tasks: list[TaskEntry], out: Path, folder: str) -> list[ImageArtifact]:
    """Build each task's start image from OUT/FOLDER/<task>/ (FROM the local environment image), tagged by
    `image_tag`, which names everything it is built from: an image this engine has under that tag (an earlier
    export's, the runtime's grader's) is used as it is.

    Raises:
        EnvError: an environment image is missing or a build failed (its message says which).
    """
    from envs.docker import (  # the docker SDK loads only when task images are built
        KIND_LABEL,
        TASK_KIND,
        build_image,
        image_labels,
    )

    artifacts = []
    for te in tasks:
        context = out / folder / te.slug
        write_context(context, te, te.task.image)
        tag = image_tag(te, te.task.image)
        if image_labels(tag) is None:
            build_image(context, tag, labels={KIND_LABEL: TASK_KIND, "autoinstall.task": te.task.instance_id},
                        buildargs={})
        artifacts.append(ImageArtifact(image=tag, reference=tag, context=f"{folder}/{te.slug}"))
    return artifacts
