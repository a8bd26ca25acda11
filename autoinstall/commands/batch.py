"""`autoinstall batch FILE`: many repositories into the catalog, on this machine or on a Ray cluster."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from autoinstall.commands.catalog import open_catalog
from autoinstall.commands.options import (
    BATCH,
    BUDGETS,
    BUILD,
    BaseUrl,
    CatalogDir,
    MaxDeselected,
    Model,
    Threshold,
    StepTimeout,
    TimeBudget,
)
from autoinstall.commands.output import err, out
from autoinstall.commands.run import check_build_options

if TYPE_CHECKING:
    from autoinstall.batch.runner import BuildFn

CLUSTER = "Cluster"


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
        yield None, BATCH.jobs
        return
    # Imported here: Ray is optional and slow to import; only --executor ray needs it.
    from autoinstall.batch.ray_executor import RayExecutor, RayOptions

    ray_options = RayOptions(address=address, registry=registry, local_slots=jobs or BATCH.jobs)
    with RayExecutor(ray_options) as executor:
        yield executor.build, max(executor.slots(), 1)


def batch_cmd(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help=(
        "One repository a line (URL or path, optionally @commit; # comments), or JSON Lines "
        '({"repo": ..., "commit": ...}). Relative paths are relative to the file.'))],
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help=(
        f"Builds running at once (default {BATCH.jobs}; with --executor ray, the cluster's docker slots)."))
    ] = None,
    catalog: CatalogDir = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Build failed entries again.")
                            ] = BATCH.retry_failed,
    time_budget: TimeBudget = BUDGETS.wall_s,
    step_timeout: StepTimeout = BUDGETS.step_timeout_s,
    threshold: Threshold = BUILD.threshold,
    max_deselected: MaxDeselected = BUILD.max_deselected,
    model: Model = BUILD.model,
    base_url: BaseUrl = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON summary object.")] = False,
    executor: Annotated[Executor, typer.Option(help=(
        "local: this machine's Docker engine; ray: Ray tasks on nodes that advertise a `docker` resource."),
        rich_help_panel=CLUSTER)] = Executor.local,
    address: Annotated[Optional[str], typer.Option("--address", help=(
        "Ray cluster to join (auto, HOST:6379, ray://HOST:10001); default: start Ray on this machine."),
        rich_help_panel=CLUSTER)] = None,
    registry: Annotated[Optional[str], typer.Option("--registry", help=(
        "HOST:PORT: push each verified image there; the catalog records the pushed reference."),
        rich_help_panel=CLUSTER)] = None,
) -> None:
    """Build every repository in FILE into the catalog, skipping those already done.

    Interrupt with Ctrl-C and run the same command again: finished builds are kept and skipped.
    Exit status: 0 no entry failed (now or before), 1 some failed or lines malformed, 130 interrupted.
    """
    # Imported here: the batch runner loads sqlite, which `autoinstall --help` does not need.
    from autoinstall.batch import BatchOptions, read_batch_file, run_batch
    from autoinstall.commands.batch_display import LiveDisplay, print_summary
    from autoinstall.options import Budgets, BuildOptions

    build_options = BuildOptions(model=model, base_url=base_url, budgets=Budgets(wall_s=time_budget, step_timeout_s=step_timeout),
                                 threshold=threshold, max_deselected=max_deselected)
    check_build_options(build_options)  # not one record of a model that is not there
    entries, errors = read_batch_file(file)
    cat = open_catalog(catalog)
    with _executor(executor, address, registry, jobs) as (build, default_jobs):
        options = BatchOptions(jobs=jobs or default_jobs, retry_failed=retry_failed, build=build_options)
        if json_out:
            summary = run_batch(entries, cat, options, build=build, line_errors=errors)
            out.print_json(summary.model_dump_json())
        else:
            with LiveDisplay(err, total=len(entries)) as display:
                summary = run_batch(entries, cat, options, build=build, observer=display, line_errors=errors)
            print_summary(out, summary)
    if summary.interrupted:
        raise typer.Exit(130)
    failed = sum(r.outcome in ("partial", "failed") or r.status in ("partial", "failed") for r in summary.results)
    raise typer.Exit(1 if failed or summary.line_errors else 0)
