"""`autoinstall base build|list`: the base image of a Python version (built only when its recipe changed)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from autoinstall.commands.app import App
from autoinstall.commands.options import PYTHON, JsonOut, Python, Verbose
from autoinstall.commands.output import err, escape, out, print_table

base_app = App(no_args_is_help=True, help="Build and list base images.")


@base_app.command("build")
def base_build(
    python: Python = PYTHON,
    ca_bundle: Annotated[Optional[Path], typer.Option("--ca-bundle", help="CA bundle to trust in builds.")
                         ] = None,
    rebuild: Annotated[bool, typer.Option(help="Build even if the recipe is unchanged.")] = False,
    verbose: Verbose = False,
) -> None:
    """Build the base image for a Python version (no-op when it exists); prints its tag."""
    tag = base_image(python, ca_bundle=ca_bundle, rebuild=rebuild, verbose=verbose)
    out.print(tag, markup=False, highlight=False)


def base_image(python: str, *, ca_bundle: Path | None = None, rebuild: bool = False,
               verbose: bool = False) -> str:
    """`ensure_base_image` behind one status line (or streaming, if verbose), its output in a log file."""
    # Imported here: these load the docker SDK, which `autoinstall --help` does not need.
    from autoinstall.commands.progress import Progress
    from envs.baseimage import ensure_base_image

    with Progress(err, verbose=verbose, log_name=f"base-py{python}") as progress:
        progress.report("phase", f"base image for Python {python}")
        tag = ensure_base_image(python=python, ca_bundle=ca_bundle, rebuild=rebuild, log=progress.log)
    progress.print_log_path()
    return tag


@base_app.command("list")
def base_list(json_out: JsonOut = False) -> None:
    """List the base and rootfs images built here, newest first."""
    # Imported here: this loads the docker SDK, which `autoinstall --help` does not need.
    from envs.baseimage import list_base_images

    images = list_base_images()
    if json_out:
        out.print_json(json.dumps([i.model_dump(mode="json") for i in images]))
        return
    rows = [[escape(i.tag), escape(i.kind), escape(i.python), escape(i.source), str(i.size_mb)]
            for i in images]
    print_table(out, f"{len(images)} base images", ["tag", "kind", "python", "source", "MB"], rows,
                right=["MB"])
