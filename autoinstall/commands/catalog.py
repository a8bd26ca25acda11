"""`autoinstall catalog list|show|rm|gc` and `autoinstall batch FILE`.

cli.py registers them: `app.add_typer(catalog_app, name="catalog")` and `app.command("batch")(batch_cmd)`.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console

if TYPE_CHECKING:
    from autoinstall.batch.runner import BuildFn
    from envs.catalog import Catalog, EnvRecord

catalog_app = typer.Typer(no_args_is_help=True, help="List, inspect and remove catalogued environments.")
console = Console(stderr=True)
out = Console()

STATUSES = ("verified", "failed", "running")
CatalogDir = Annotated[Optional[Path], typer.Option(
    "--catalog", help="Catalog directory (default: $AUTOINSTALL_HOME/catalog, i.e. ~/.autoinstall/catalog).")]
JsonOut = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
IdArg = Annotated[str, typer.Argument(help="Environment id, or a unique prefix of it (see `catalog list`).")]


def _open(catalog_dir: Path | None) -> Catalog:
    from envs.catalog import Catalog

    return Catalog(catalog_dir)


def _tests(r: EnvRecord) -> str:
    return f"{r.tests_passed}/{r.tests_failed}/{r.tests_skipped}" if r.status != "running" else ""


@catalog_app.command("list")
def list_cmd(
    catalog: CatalogDir = None,
    status: Annotated[Optional[str], typer.Option(help="verified, failed or running.")] = None,
    failure_class: Annotated[Optional[str], typer.Option(help="e.g. install_failed.")] = None,
    repo: Annotated[Optional[str], typer.Option("--repo", help="Only repositories containing this.")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="At most this many, newest first.")] = None,
    json_out: JsonOut = False,
) -> None:
    """List environments, newest first."""
    from rich.table import Table

    if status is not None and status not in STATUSES:
        msg = f"{status!r} is not a status; choose one of: {', '.join(STATUSES)}"
        raise typer.BadParameter(msg, param_hint="--status")
    records = _open(catalog).list(status=status, failure_class=failure_class, repo_contains=repo, limit=limit)
    if json_out:
        out.print_json(json.dumps([r.model_dump(mode="json") for r in records]))
        return
    table = Table(title=f"{len(records)} environments", box=None, padding=(0, 1), pad_edge=False)
    for column, width in (("id", 12), ("status", 8), ("repository", 10), ("commit", 8), ("model", 8),
                          ("py", 4), ("p/f/s", 5), ("failure", 10)):
        table.add_column(column, overflow="fold", min_width=width)
    colours = {"verified": "green", "failed": "red", "running": "yellow"}
    for r in records:
        table.add_row(r.id, f"[{colours[r.status]}]{r.status}[/]", r.name or r.repo,
                      (r.commit or r.requested_commit or "")[:8], r.model, r.python or "", _tests(r),
                      r.failure_class or "")
    out.print(table)


@catalog_app.command("show")
def show_cmd(env_id: IdArg, catalog: CatalogDir = None, json_out: JsonOut = False) -> None:
    """Show one environment: its record, and the summary of its spec (stored in the catalog)."""
    from autoinstall.commands.progress import print_summary

    cat = _open(catalog)
    record = cat.get(env_id)
    spec = cat.get_spec(record.id)
    if json_out:
        out.print_json(json.dumps({"record": record.model_dump(mode="json"),
                                   "spec": spec.model_dump(mode="json") if spec else None}))
        return
    env_dir = Path(record.env_dir)
    for key in ("id", "repo", "requested_commit", "commit", "commit_date", "model", "base_image", "image",
                "status", "failure_class", "failure_message", "wall_s", "created_at", "updated_at", "owner"):
        value = getattr(record, key)
        if value not in (None, ""):
            out.print(f"[bold]{key}:[/] {value}", highlight=False)
    missing = "" if env_dir.is_dir() else " [red](missing; the spec below is the catalog's copy)[/]"
    out.print(f"[bold]env_dir:[/] {env_dir}{missing}", highlight=False)
    if (env_dir / "logs").is_dir():
        out.print(f"[bold]logs:[/] {env_dir / 'logs'}", highlight=False)
    if spec is not None:
        print_summary(out, spec)


@catalog_app.command("rm")
def rm_cmd(
    env_ids: Annotated[list[str], typer.Argument(help="Environment ids (or unique prefixes).")],
    catalog: CatalogDir = None,
    keep_image: Annotated[bool, typer.Option("--keep-image", help="Keep the Docker image.")] = False,
    json_out: JsonOut = False,
) -> None:
    """Remove environments: the record, its directory and (unless another record uses it) its image."""
    cat = _open(catalog)
    results = [cat.remove(env_id, remove_image=not keep_image) for env_id in env_ids]
    if json_out:
        out.print_json(json.dumps([r.model_dump(mode="json") for r in results]))
        return
    for r in results:
        out.print(f"removed {r.id}" + (" and its image" if r.image_removed else ""), highlight=False)
        for warning in r.warnings:
            console.print(f"[yellow]warning:[/] {warning}", highlight=False)


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
    report = _open(catalog).gc(dry_run=dry_run, images=images)
    if json_out:
        out.print_json(report.model_dump_json())
        return
    verb = "would remove" if dry_run else "removed"
    out.print(f"{verb} {len(report.removed_dirs)} directories, {len(report.removed_containers)} containers, "
              f"{len(report.removed_images)} images", highlight=False)
    if report.missing_dirs:
        out.print(f"records whose directory is gone (kept): {' '.join(report.missing_dirs)}", highlight=False)
    if report.stale_running:
        out.print(f"interrupted builds (the next batch redoes them): {' '.join(report.stale_running)}",
                  highlight=False)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)


class Executor(StrEnum):
    """Where batch builds run."""

    local = "local"
    ray = "ray"


@contextmanager
def _executor(kind: Executor, address: str | None, registry: str | None,
              jobs: int | None) -> Iterator[tuple[BuildFn | None, int]]:
    """The build function for run_batch (None: the local default) and the default number of jobs."""
    if kind is Executor.local:
        if address or registry:
            msg = "--address and --registry are for --executor ray"
            raise typer.BadParameter(msg, param_hint="--executor")
        yield None, 2
        return
    from autoinstall.batch.ray_executor import RayExecutor, RayOptions

    with RayExecutor(RayOptions(address=address, registry=registry, local_slots=jobs or 2)) as executor:
        yield executor.build, max(executor.slots(), 1)


def batch_cmd(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help=(
        "One repository a line (URL or path, optionally @commit; # comments), or JSON Lines "
        '({"repo": ..., "commit": ...}). Relative paths are relative to the file.'))],
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help=(
        "Builds running at once (default 2; with --executor ray, the cluster's docker slots)."))] = None,
    catalog: CatalogDir = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Build failed entries again.")] = False,
    time_budget: Annotated[Optional[float], typer.Option(
        "--time-budget", min=1.0, help="Seconds of install+repair per repository (default 1800).")] = None,
    model: Annotated[str, typer.Option(help='Prior model: "embedded" or "openai:NAME".')] = "embedded",
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON summary object.")] = False,
    executor: Annotated[Executor, typer.Option(help=(
        "local: this machine's Docker engine; ray: Ray tasks on nodes that advertise a `docker` resource."),
        rich_help_panel="Cluster")] = Executor.local,
    address: Annotated[Optional[str], typer.Option("--address", help=(
        "Ray cluster to join (auto, HOST:6379, ray://HOST:10001); default: start Ray on this machine."),
        rich_help_panel="Cluster")] = None,
    registry: Annotated[Optional[str], typer.Option("--registry", help=(
        "HOST:PORT: push each verified image there; the catalog records the pushed reference."),
        rich_help_panel="Cluster")] = None,
) -> None:
    """Build every repository in FILE into the catalog, skipping those already done.

    Interrupt with Ctrl-C and run the same command again: finished builds are kept and skipped.
    Exit status: 0 no entry failed (now or before), 1 some failed or lines malformed, 130 interrupted.
    """
    from autoinstall.batch import BatchOptions, read_batch_file, run_batch
    from autoinstall.batch.display import LiveDisplay, print_summary

    entries, errors = read_batch_file(file)
    cat = _open(catalog)
    with _executor(executor, address, registry, jobs) as (build, default_jobs):
        options = BatchOptions(jobs=jobs or default_jobs, retry_failed=retry_failed,
                               time_budget_s=time_budget, model=model, base_url=base_url)
        if json_out:
            summary = run_batch(entries, cat, options, build=build, line_errors=errors)
            out.print_json(summary.model_dump_json())
        else:
            with LiveDisplay(console, total=len(entries)) as display:
                summary = run_batch(entries, cat, options, build=build, observer=display, line_errors=errors)
            print_summary(out, summary)
    if summary.interrupted:
        raise typer.Exit(130)
    failed = sum(r.outcome == "failed" or r.status == "failed" for r in summary.results)
    raise typer.Exit(1 if failed or summary.line_errors else 0)
