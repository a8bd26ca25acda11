"""`autoinstall exec CMD` (one command in a fresh sandbox) and `autoinstall cleanup` (what is left behind)."""
from __future__ import annotations

import sys
from typing import Annotated

import typer

from autoinstall.commands.base import base_image
from autoinstall.commands.options import PYTHON, Image, Python, Verbose
from autoinstall.commands.output import out, write_output


def exec_cmd(
    command: Annotated[list[str], typer.Argument(help="Command and arguments to run.")],
    python: Python = PYTHON,
    image: Image = None,
    network: Annotated[bool, typer.Option(help="Network access.")] = True,
    verbose: Verbose = False,
) -> None:
    """Run one command in a fresh sandbox container and print its output; exits with its status."""
    # Imported here: the docker SDK loads only for commands that run something.
    from envs.docker import DockerSandbox, DockerSandboxConfig

    config = DockerSandboxConfig(image=image or base_image(python, verbose=verbose), network=network)
    with DockerSandbox(config) as sandbox:
        result = sandbox.exec(list(command))
    write_output(sys.stdout, result.stdout)
    write_output(sys.stderr, result.stderr)
    raise typer.Exit(result.exit_code)


def cleanup_cmd(dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")
                                   ] = False) -> None:
    """Remove containers and snapshot images that autoinstall left behind."""
    # Imported here: the docker SDK loads only for commands that touch the engine.
    from envs.docker import cleanup

    report = cleanup(dry_run=dry_run)
    out.print_json(report.model_dump_json())
