"""`autoinstall export`: catalogued environments, or their tasks (--tasks), as RL training data (Harbor tasks,
SWE-bench rows, verl parquet, JSON Lines), with their images saved or pushed."""
from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from autoinstall.commands.catalog import open_catalog
from autoinstall.commands.options import ADVANCED, CatalogDir
from autoinstall.commands.output import out
from autoinstall.commands.tasks import DifficultyOpt, KindOpt, StatementOpt, task_filter


class Fmt(str, Enum):
    harbor = "harbor"
    swebench = "swebench"
    verl = "verl"
    jsonl = "jsonl"


class Status(str, Enum):
    verified = "verified"
    partial = "partial"
    failed = "failed"


class Task(str, Enum):
    template = "template"
    env_setup = "env-setup"


class Images(str, Enum):
    none = "none"
    save = "save"
    push = "push"


class StartImage(str, Enum):
    build = "build"
    prebuilt = "prebuilt"


class Network(str, Enum):
    public = "public"
    no_network = "no-network"


def export_cmd(
    out_dir: Annotated[Path, typer.Option("--out", file_okay=False, help="Directory to write to.")],
    fmt: Annotated[Fmt, typer.Option("--format",
                                     help="harbor task dirs, swebench rows, verl parquet, or jsonl specs.")],
    catalog: CatalogDir = None,
    ids: Annotated[list[str] | None, typer.Option(
        "--id", help="Export only this environment (id or unique prefix); repeatable.")] = None,
    status: Annotated[Status, typer.Option(help="Which ones, when no --id is given.")] = Status.verified,
    include_partial: Annotated[bool, typer.Option(
        "--include-partial", help="Export partial environments too (more of the suite deselected than the cap)."
    )] = False,
    include_failed: Annotated[bool, typer.Option(
        "--include-failed", help="Export failed environments too (refused otherwise).")] = False,
    task: Annotated[Task, typer.Option(help=(
        "harbor without --tasks: the verified image as a template without a goal (template), or the base image "
        "with the bare checkout, to be installed by the agent (env-setup)."))] = Task.template,
    images: Annotated[Images, typer.Option(help=(
        "Make the images reachable: `docker save` tarballs in OUT/images/, or push to --registry."))
    ] = Images.none,
    registry: Annotated[str | None, typer.Option(help="Registry HOST:PORT for --images push.")] = None,
    network: Annotated[Network, typer.Option(rich_help_panel=ADVANCED, help=(
        "harbor: the agent's network (no-network needs Harbor's egress sidecar images)."))] = Network.public,
    tasks: Annotated[bool, typer.Option("--tasks", help=(
        "Export the environments' tasks (from `autoinstall tasks`): one Harbor task, SWE-bench row, verl row or "
        "JSON line per bug to fix, scored by its FAIL_TO_PASS and PASS_TO_PASS tests."))] = False,
    kind: KindOpt = None,
    difficulty: DifficultyOpt = None,
    statement: StatementOpt = None,
    verifier_network: Annotated[Network, typer.Option(rich_help_panel=ADVANCED, help=(
        "harbor --tasks: the verifier's network (no-network needs Harbor's egress sidecar image)."))
    ] = Network.no_network,
    start_image: Annotated[StartImage, typer.Option(rich_help_panel=ADVANCED, help=(
        "harbor --tasks: Harbor builds each task's start image from environment/ in every trial (build), or the "
        "export builds it and task.toml names it as docker_image (prebuilt: no build per trial)."))
    ] = StartImage.build,
    agent_user: Annotated[str, typer.Option(rich_help_panel=ADVANCED, help=(
        "harbor --tasks: the non-root user the agent runs as (created in the task image); `root` for none."))
    ] = "agent",
    json_out: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Export environments from the catalog for RL training; OUT/export.json names the format version.

    Exit status: 0 done; 2 the selection is refused (nothing is written), or an image could not be pushed
    (nothing is written) or saved (the rest of the export is kept).
    """
    # Imported here: the exporters load sqlite and docker, which `autoinstall --help` does not need.
    from envs.export import ExportOptions, run_export, status_of

    if not tasks and (kind or difficulty or statement):
        raise typer.BadParameter("--kind, --difficulty and --statement choose among tasks: add --tasks",
                                 param_hint="--tasks")
    if images is Images.push and not registry:
        raise typer.BadParameter("--images push needs --registry HOST:PORT", param_hint="--registry")
    options = ExportOptions(out=out_dir, format=fmt.value, ids=ids or [], status=status.value,
                            include_partial=include_partial, include_failed=include_failed, task=task.value, images=images.value,
                            registry=registry, network=network.value, tasks=tasks,
                            verifier_network=verifier_network.value, start_image=start_image.value,
                            agent_user=None if agent_user == "root" else agent_user,
                            task_filter=task_filter(kind, difficulty, statement))
    manifest = run_export(open_catalog(catalog), options)
    if json_out:
        out.print_json(manifest.model_dump_json())
        return
    what = f"{len(manifest.tasks)} tasks of {len(manifest.ids)}" if tasks else f"{len(manifest.ids)}"
    out.print(f"exported {what} environments as {manifest.format} to {options.out}", markup=False,
              highlight=False)
    for artifact in manifest.images:
        out.print(f"  {status_of(artifact)}", markup=False, highlight=False)
