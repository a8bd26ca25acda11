"""`autoinstall run REPO` (also just `autoinstall REPO`): build, verify and catalogue one environment."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from autoinstall.commands.options import (
    ADVANCED,
    BUDGETS,
    BUILD,
    BaseUrl,
    CatalogDir,
    Commit,
    DiskMb,
    JsonOut,
    LatestDeps,
    MaxDeselected,
    MemoryMb,
    Model,
    Pids,
    Repo,
    ForcePython,
    Threshold,
    StepTimeout,
    TimeBudget,
    Verbose,
)
from autoinstall.commands.output import err, out

if TYPE_CHECKING:
    from autoinstall.options import BuildOptions

PYTHON_VERSION = re.compile(r"\d+\.\d+")


def check_build_options(options: BuildOptions) -> None:
    """Refuse what the flags' own ranges cannot (the model, the Python version) before any work starts: a
    clone, a base image or a whole build must not come first (`run` and `batch` call this).

    Raises:
        ModelError: the model is unknown or lacks its endpoint (an error root: one line, exit 2).
        typer.BadParameter: --python is not X.Y.
    """
    # Imported here: the models load pydantic and the chat client, which `autoinstall --help` does not need.
    from autoinstall.plan.models import get_model

    get_model(options.model, base_url=options.base_url)
    if options.python is not None and not PYTHON_VERSION.fullmatch(options.python):
        msg = f"{options.python!r} is not a Python version; pass X.Y, e.g. --python 3.11"
        raise typer.BadParameter(msg, param_hint="--python")


def run_cmd(
    repo: Repo,
    commit: Commit = None,
    model: Model = BUILD.model,
    base_url: BaseUrl = None,
    json_out: JsonOut = False,
    verbose: Verbose = False,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Where to write spec, Dockerfile, logs.")
                       ] = None,
    threshold: Threshold = BUILD.threshold,
    max_deselected: MaxDeselected = BUILD.max_deselected,
    memory_mb: MemoryMb = BUILD.limits.memory_mb,
    disk_mb: DiskMb = BUILD.limits.disk_mb,
    pids: Pids = BUILD.limits.pids,
    latest_deps: LatestDeps = BUILD.latest_deps,
    rebuild_check: Annotated[bool, typer.Option(
        "--rebuild-check", help="Rebuild from the Dockerfile and verify.", rich_help_panel=ADVANCED)
    ] = BUILD.rebuild_check,
    python: ForcePython = BUILD.python,
    max_repairs: Annotated[int, typer.Option(help="Repairs before giving up.", min=0,
                                             rich_help_panel=ADVANCED)] = BUDGETS.max_repairs,
    wall_s: TimeBudget = BUDGETS.wall_s,
    step_timeout: StepTimeout = BUDGETS.step_timeout_s,
    catalog: CatalogDir = None,
) -> None:
    """Build and verify an environment for REPO (the default command: `autoinstall REPO`).

    Exit status: 0 verified, 1 not verified (the spec says why), 2 REPO, the model or Docker failed.
    """
    # Imported here: the pipeline loads git, docker and sqlite, which `autoinstall --help` does not need.
    from autoinstall.commands.progress import Progress, print_summary
    from autoinstall.options import Budgets, BuildOptions, docker_factory
    from autoinstall.pipeline import build_environment
    from autoinstall.record import spec_dir
    from envs.base import Limits
    from envs.catalog import Catalog

    budgets = Budgets(max_repairs=max_repairs, wall_s=wall_s, step_timeout_s=step_timeout)
    options = BuildOptions(model=model, base_url=base_url, commit=commit, out_dir=out_dir,
                           threshold=threshold, latest_deps=latest_deps, rebuild_check=rebuild_check,
                           python=python, budgets=budgets, max_deselected=max_deselected,
                           limits=Limits(memory_mb=memory_mb, disk_mb=disk_mb, pids=pids))
    check_build_options(options)
    with Progress(err, quiet=json_out, verbose=verbose, log_name="run") as progress:
        factory = docker_factory(options.limits, log=progress.log)
        spec = build_environment(repo, options, progress.report, factory)
    record = Catalog(catalog).upsert_spec(spec, spec_dir(spec), requested_commit=commit)
    err.print(f"recorded in the catalog as [bold]{record.id}[/]", highlight=False)
    if json_out:
        out.print_json(spec.model_dump_json())
    else:
        print_summary(out, spec)
        progress.print_log_path()
    raise typer.Exit(0 if spec.status == "verified" else 1)  # partial is not verified
