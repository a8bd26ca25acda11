"""Export catalogued environments for RL training: Harbor tasks, SWE-bench rows, verl parquet, JSON Lines.

    manifest = run_export(Catalog(), ExportOptions(out=Path("out"), format="harbor"))

With `tasks=True` (export --tasks) it writes the environments' stored tasks instead (bugs to fix, scored by
their FAIL_TO_PASS and PASS_TO_PASS tests: envs/export/taskexport.py), one Harbor task, SWE-bench row, verl row
or JSON line per task. Every export writes OUT/export.json (an ExportManifest) naming its format version, so a trainer can tell
versions apart. Images are made reachable where the trainer runs by `docker save` tarballs (--images save)
or a registry push (--images push, after which every exported reference points at the registry).
The catalog is only read: nothing recorded there changes, whatever fails here.

Files: __init__.py (run_export), common.py (options, entries, manifest, record selection), harbor.py,
swebench.py, verl.py and jsonl.py (one writer per format), artifacts.py (save and push), templates/; for tasks:
tasks.py (the task store), taskexport.py, bugstate.py (the bug-state image), harbor_tasks.py, swebench_tasks.py,
verl_tasks.py (+ verl_reward.py, the reward function it ships).
"""
from __future__ import annotations

from envs.catalog import Catalog
from envs.export import artifacts, harbor, jsonl, swebench, taskexport, verl
from envs.export.common import (
    EXPORT_VERSION,
    MANIFEST_NAME,
    WORKDIR,
    Entry,
    ExportError,
    ExportManifest,
    ExportOptions,
    Format,
    ImageArtifact,
    ImagesMode,
    TaskKind,
    format_version,
    now,
    read_manifest,
    select_entries,
    status_of,
    verification_counts,
    write_manifest,
)


def run_export(catalog: Catalog, options: ExportOptions) -> ExportManifest:
    """Export the selected records; see the module docstring. Returns the manifest written to OUT.

    Raises:
        ExportError: the selection is refused (nothing is written).
        EnvError: a push was refused (nothing is written), or saving an image failed (tasks, rows and the
            manifest are kept, the manifest names the failure, no partial tarball is left).
    """
    entries = select_entries(catalog, options)
    if options.tasks:
        return taskexport.export_tasks(entries, options)
    if options.format == "harbor" and options.task == "env-setup":
        if options.network == "no-network":
            msg = "env-setup tasks install packages, so they need the network: drop --network no-network."
            raise ExportError(msg)
        harbor.check_setup_sources(entries)
    if options.format == "verl":
        verl.require_pyarrow()
    needed = harbor.images_for(entries, options.task) if options.format == "harbor" else [
        e.spec.image or "" for e in entries]
    images = artifacts.push_all(needed, options.registry) if options.images == "push" else [
        artifacts.local(i) for i in dict.fromkeys(needed)]
    out = options.out.expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    refs = {a.image: a.reference for a in images}
    writers = {"harbor": harbor.write, "swebench": swebench.write, "verl": verl.write, "jsonl": jsonl.write}
    files = writers[options.format](entries, out, refs, options)
    manifest = ExportManifest(format=format_version(options.format), created_at=now(),
                              ids=[e.record.id for e in entries], files=files,
                              task=options.task if options.format == "harbor" else None,
                              images_mode=options.images, images=images, registry=options.registry,
                              verification={e.record.id: verification_counts(e.spec) for e in entries})
    write_manifest(out, manifest)
    if options.images == "save":
        artifacts.save_all(manifest, out)
    return manifest


__all__ = ["EXPORT_VERSION", "Entry", "ExportError", "ExportManifest", "ExportOptions", "Format", "ImageArtifact", "ImagesMode", "MANIFEST_NAME", "TaskKind", "WORKDIR", "format_version", "now", "read_manifest", "select_entries", "status_of", "write_manifest", "run_export"]
