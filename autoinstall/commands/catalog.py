"""`autoinstall catalog list|show|rm|gc|report`: the environments recorded in the catalog."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from autoinstall.commands.app import App
from autoinstall.commands.options import CatalogDir, IdArg, JsonOut
from autoinstall.commands.output import err, escape, out, print_table

if TYPE_CHECKING:
    from envs.catalog import Catalog, EnvRecord

catalog_app = App(no_args_is_help=True, help="List, inspect and remove catalogued environments.")
STATUSES = ("verified", "partial", "failed", "running")


def open_catalog(catalog_dir: Path | None) -> Catalog:
    """The catalog under `catalog_dir` (default: autoinstall_home()/catalog)."""
    # Imported here: the catalog loads sqlite, which `autoinstall --help` does not need.
    from envs.catalog import Catalog

    return Catalog(catalog_dir)


def _tests(r: EnvRecord) -> str:
    """Passed (in every run), failed, errors, skipped and flaky tests."""
    if r.status == "running":
        return ""
    return f"{r.tests_passed}/{r.tests_failed - r.tests_errors}/{r.tests_errors}/{r.tests_skipped}/{r.tests_flaky}"


def _suite(r: EnvRecord) -> str:
    """The suite by its default configuration and what verification selected of it, as the runner counted them."""
    if r.tests_collected is None:
        return ""
    if r.tests_selected is None:  # a record written before the selection was kept: what it has
        return f"{r.tests_collected}" + (f" -{r.tests_deselected}" if r.tests_deselected else "")
    return f"{r.tests_collected}/{r.tests_selected}"


@catalog_app.command("list")
def list_cmd(
    catalog: CatalogDir = None,
    status: Annotated[Optional[str], typer.Option(help="verified, partial, failed or running.")] = None,
    failure_class: Annotated[Optional[str], typer.Option(help="e.g. install_failed.")] = None,
    repo: Annotated[Optional[str], typer.Option("--repo", help="Only repositories containing this.")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="At most this many, newest first.")] = None,
    json_out: JsonOut = False,
) -> None:
    """List environments, newest first."""
    if status is not None and status not in STATUSES:
        msg = f"{status!r} is not a status; choose one of: {', '.join(STATUSES)}"
        raise typer.BadParameter(msg, param_hint="--status")
    records = open_catalog(catalog).list(status=status, failure_class=failure_class, repo_contains=repo,
                                         limit=limit)
    if json_out:
        out.print_json(json.dumps([r.model_dump(mode="json") for r in records]))
        return
    colours = {"verified": "green", "partial": "yellow", "failed": "red", "running": "yellow"}
    rows = [[escape(r.id), f"[{colours[r.status]}]{r.status}[/]", escape(r.name or r.repo),
             escape((r.commit or r.requested_commit or "")[:8]), escape(r.model), escape(r.python or ""),
             _suite(r), _tests(r), escape(r.failure_class or "")] for r in records]
    print_table(out, f"{len(records)} environments",
                ["id", "status", "repository", "commit", "model", "py", "suite/selected", "p/f/e/s/flaky", "failure"],
                rows)


@catalog_app.command("show")
def show_cmd(env_id: IdArg, catalog: CatalogDir = None, json_out: JsonOut = False) -> None:
    """Show one environment: its record, the summary of its spec (stored in the catalog), and its tasks by
    kind and difficulty."""
    # Imported here: the summary printer loads rich.progress, the task store pydantic, which
    # `autoinstall --help` does not need.
    from autoinstall.commands.progress import print_summary
    from autoinstall.tasks.store import TaskStore, task_counts

    cat = open_catalog(catalog)
    record = cat.get(env_id)
    spec = cat.get_spec(record.id)
    tasks = task_counts(TaskStore().read(record.id))
    if json_out:
        out.print_json(json.dumps({"record": record.model_dump(mode="json"),
                                   "spec": spec.model_dump(mode="json") if spec else None, "tasks": tasks}))
        return
    env_dir = Path(record.env_dir)
    for key in ("id", "repo", "requested_commit", "commit", "commit_date", "model", "base_image", "image",
                "status", "failure_class", "failure_message", "wall_s", "created_at", "updated_at", "owner"):
        value = getattr(record, key)
        if value not in (None, ""):
            out.print(f"[bold]{key}:[/] {escape(str(value))}", highlight=False)
    missing = "" if env_dir.is_dir() else " [red](missing; the spec below is the catalog's copy)[/]"
    out.print(f"[bold]env_dir:[/] {escape(str(env_dir))}{missing}", highlight=False)
    if spec is not None:
        print_summary(out, spec)
    out.print(f"[bold]tasks:[/] {escape(_tasks_line(record.id, tasks))}", highlight=False)


def _tasks_line(env_id: str, counts: dict[str, int]) -> str:
    """`12 (history 3, mutation 7, combined 2; easy 5, medium 4, hard 3)`, or how to make some."""
    if not counts["tasks"]:
        return f"none (make some with `autoinstall tasks make {env_id}`)"
    kinds = ", ".join(f"{k} {counts[k]}" for k in ("history", "mutation", "combined"))
    buckets = ", ".join(f"{d} {counts[d]}" for d in ("easy", "medium", "hard", "unknown") if d in counts)
    return f"{counts['tasks']} ({kinds}; {buckets})"


@catalog_app.command("rm")
def rm_cmd(
    env_ids: Annotated[list[str], typer.Argument(help="Environment ids (or unique prefixes).")],
    catalog: CatalogDir = None,
    keep_image: Annotated[bool, typer.Option("--keep-image", help="Keep the Docker image.")] = False,
    json_out: JsonOut = False,
) -> None:
    """Remove environments: the record, its directory and (unless another record uses it) its image."""
    cat = open_catalog(catalog)
    results = [cat.remove(env_id, remove_image=not keep_image) for env_id in env_ids]
    if json_out:
        out.print_json(json.dumps([r.model_dump(mode="json") for r in results]))
        return
    for r in results:
        out.print(f"removed {r.id}" + (" and its image" if r.image_removed else ""), markup=False,
                  highlight=False)
        for warning in r.warnings:
            err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)


@catalog_app.command("gc")
def gc_cmd(
    catalog: CatalogDir = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
    images: Annotated[bool, typer.Option(help="Also remove leaked containers and snapshot images.")] = True,
    json_out: JsonOut = False,
) -> None:
    """Remove directories no record points to, and leaked containers and snapshot images.

    Records whose directory vanished are kept (the spec is in the catalog) and listed; `catalog rm` them.
    """
    report = open_catalog(catalog).gc(dry_run=dry_run, images=images)
    if json_out:
        out.print_json(report.model_dump_json())
        return
    verb = "would remove" if dry_run else "removed"
    out.print(f"{verb} {len(report.removed_dirs)} directories, {len(report.removed_containers)} containers, "
              f"{len(report.removed_images)} images", highlight=False)
    if report.missing_dirs:
        out.print(f"records whose directory is gone (kept): {' '.join(report.missing_dirs)}", markup=False,
                  highlight=False)
    if report.stale_running:
        out.print(f"interrupted builds (the next batch redoes them): {' '.join(report.stale_running)}",
                  markup=False, highlight=False)
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)


@catalog_app.command("report")
def report_cmd(
    out_file: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    catalog: CatalogDir = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write one self-contained HTML page about the catalog: status by ecosystem, failures with links to
    their logs, build times, suite sizes, tasks per environment and a sortable row per environment."""
    # Imported here: the report draws with matplotlib, which takes seconds to load and no other command needs.
    from envs.report import write_report

    summary = write_report(open_catalog(catalog), out_file)
    if json_out:
        out.print_json(summary.model_dump_json())
        return
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(summary.statuses.items()))
    out.print(f"wrote {summary.path} ({summary.bytes // 1024} KiB): {summary.environments} environments"
              f"{f' ({statuses})' if statuses else ''}, {summary.tasks} tasks", markup=False, highlight=False)
