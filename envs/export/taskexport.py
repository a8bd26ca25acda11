"""`export --tasks`: one Harbor task, SWE-bench row, verl row or JSON line per stored task (envs/export/tasks.py)."""
from __future__ import annotations

import json
from pathlib import Path

from envs.export import artifacts, bugstate, harbor_tasks, swebench_tasks, verl, verl_tasks
from envs.export.common import (
    Entry,
    ExportManifest,
    ExportOptions,
    ImageArtifact,
    format_version,
    now,
    verification_counts,
    write_manifest,
)
from envs.export.tasks import TaskEntry, select_tasks

TASKS_FILE = "tasks.jsonl"


def write_jsonl(tasks: list[TaskEntry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/tasks.jsonl: each line a Task (image = the exported reference) with the verification counts."""
    lines = [json.dumps({**te.task.model_copy(update={"image": refs[te.task.image]}).model_dump(mode="json"),
                         "verification": verification_counts(te.entry.spec)}) for te in tasks]
    (out / TASKS_FILE).write_text("".join(line + "\n" for line in lines))
    return [TASKS_FILE]


def _start_contexts(options: ExportOptions) -> str | None:
    """Where under OUT the export writes the start images' build contexts, when it builds them."""
    if options.format == "swebench":
        return swebench_tasks.CONTEXTS
    if options.format == "harbor" and options.start_image == "prebuilt":
        return harbor_tasks.CONTEXTS
    return None


def _images(tasks: list[TaskEntry], out: Path, options: ExportOptions) -> list[ImageArtifact]:
    """The images the exported tasks name: the environments' (every format but swebench), then the start images
    the export builds (swebench's rows; Harbor tasks with a prebuilt start image)."""
    bases = [] if options.format == "swebench" else list(dict.fromkeys(te.task.image for te in tasks))
    folder = _start_contexts(options)
    built = bugstate.build_images(tasks, out, folder) if folder else []
    if options.images != "push":
        return [artifacts.local(i) for i in bases] + built
    contexts = {a.image: a.context for a in built}
    pushed = artifacts.push_all([*bases, *contexts], options.registry)
    return [p.model_copy(update={"context": contexts.get(p.image)}) for p in pushed]


def export_tasks(entries: list[Entry], options: ExportOptions) -> ExportManifest:
    """Export the stored tasks of `entries`; see run_export.

    Raises:
        ExportError: no task is stored for them, or a task cannot be written in this format.
        EnvError: a start image could not be built (swebench, Harbor's prebuilt), a push was refused, or a save
            failed.
    """
    tasks = select_tasks(entries, chosen=options.task_filter)
    if options.format == "swebench":
        swebench_tasks.check_runners(tasks)
    if options.format == "verl":
        verl.require_pyarrow()
    out = options.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    images = _images(tasks, out, options)
    refs = {a.image: a.reference for a in images}
    writers = {"harbor": harbor_tasks.write, "swebench": swebench_tasks.write, "verl": verl_tasks.write,
               "jsonl": write_jsonl}
    files = writers[options.format](tasks, out, refs, options)
    manifest = ExportManifest(format=format_version(options.format), created_at=now(),
                              ids=list(dict.fromkeys(te.entry.record.id for te in tasks)),
                              tasks=[te.task.instance_id for te in tasks], files=files,
                              images_mode=options.images, images=images, registry=options.registry,
                              verification={te.entry.record.id: verification_counts(te.entry.spec) for te in tasks})
    write_manifest(out, manifest)
    if options.images == "save":
        artifacts.save_all(manifest, out)
    return manifest
