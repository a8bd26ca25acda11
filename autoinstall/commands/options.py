"""Options shared by several commands, declared once; their defaults are the configuration models'."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Optional

import typer

from autoinstall.options import BatchOptions, Budgets, BuildOptions
from envs.spec import Plan

ADVANCED = "Advanced"
"""The help panel of rarely needed flags."""
BUILD = BuildOptions()
"""The defaults of one build (`BuildOptions`), which the flags below show and pass on."""
BUDGETS = Budgets()
BATCH = BatchOptions()
PYTHON = Plan.model_fields["python"].default
"""The Python of base images when none is asked for: the one a plan starts from."""

Repo = Annotated[str, typer.Argument(
    help="Repository: URL, local directory, or local git directory (bare ok).")]
Commit = Annotated[Optional[str], typer.Option("--commit", help="Revision to check out (default: HEAD).")]
Model = Annotated[str, typer.Option("--model", help='Prior model: "embedded" or "openai:NAME".')]
BaseUrl = Annotated[Optional[str], typer.Option(
    "--base-url", help="OpenAI-compatible endpoint for openai:NAME.")]
JsonOut = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help=(
    "Stream the output of long steps (base image builds) instead of one status line; it always goes to a "
    "log file too."))]
CatalogDir = Annotated[Optional[Path], typer.Option(
    "--catalog", help="Catalog directory (default: $AUTOINSTALL_HOME/catalog, i.e. ~/.autoinstall/catalog).")]
IdArg = Annotated[str, typer.Argument(help="Environment id, or a unique prefix of it (see `catalog list`).")]
Python = Annotated[str, typer.Option(help="Python version X.Y of the base image.")]
Image = Annotated[Optional[str], typer.Option(help="Image to run in (default: the base image).")]
ForcePython = Annotated[Optional[str], typer.Option("--python", help="Force a Python version (X.Y).",
                                                  rich_help_panel=ADVANCED)]


def share(what: str, example: str) -> Callable[[float], float]:
    """A typer callback that takes a share between 0 and 1 and tells a percentage or a count what to write."""

    def check(value: float) -> float:
        if 0.0 <= value <= 1.0:
            return value
        hint = f"; {value:g}% is written {value / 100:g}" if 1.0 < value <= 100.0 else ""
        msg = f"{value:g} is not {what} between 0 and 1: {example}{hint}"
        raise typer.BadParameter(msg)

    return check


Threshold = Annotated[float, typer.Option(
    "--threshold", callback=share("a pass rate", "--threshold 0.9 needs 90% of the tests that ran to pass"),
    help="Pass rate (0-1) the suite needs to count as verified.")]
MaxDeselected = Annotated[float, typer.Option(
    "--max-deselected", rich_help_panel=ADVANCED,
    callback=share("a share of the suite", "--max-deselected 0.05 lets 5% of the suite be deselected"),
    help="Largest share (0-1) of the suite that may be deselected for `verified`; more makes it `partial`.")]
MemoryMb = Annotated[int, typer.Option(
    "--memory-mb", min=256, rich_help_panel=ADVANCED, help="Memory cap of each sandbox, in MiB.")]
Pids = Annotated[int, typer.Option(
    "--pids", min=64, rich_help_panel=ADVANCED, help="Processes and threads each sandbox may have at once.")]
DiskMb = Annotated[int, typer.Option(
    "--disk-mb", min=512, rich_help_panel=ADVANCED, help="What each sandbox may write to its disk, in MiB.")]
LatestDeps = Annotated[bool, typer.Option(
    "--latest-deps", rich_help_panel=ADVANCED,
    help="Resolve dependencies with today's releases instead of as of the commit date (build tools are "
         "always today's).")]
TimeBudget = Annotated[float, typer.Option(
    "--time-budget", min=1.0, help="Seconds of install+repair per repository.", rich_help_panel=ADVANCED)]
StepTimeout = Annotated[float, typer.Option(
    "--step-timeout", min=1.0, rich_help_panel=ADVANCED,
    help="Seconds per install command (one still working at its end runs once more with up to twice this, "
         "within --time-budget).")]
