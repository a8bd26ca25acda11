"""`autoinstall tools schema|call`: the agent tools' schemas, and one tool call in a fresh sandbox."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from autoinstall.commands.app import App
from autoinstall.commands.base import base_image
from autoinstall.commands.options import PYTHON, Image, Verbose
from autoinstall.commands.output import out

tools_app = App(no_args_is_help=True, help="The agent tools (read, edit, search, lint, terminal).")


@tools_app.command("schema")
def tools_schema() -> None:
    """Print the OpenAI function-calling schemas of the agent tools as JSON."""
    # Imported here: the tools load pydantic models that `autoinstall --help` does not need.
    from tools import openai_schemas

    out.print_json(json.dumps(openai_schemas()))


@tools_app.command("call")
def tools_call(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. read_file.")],
    arguments: Annotated[str, typer.Argument(help="JSON arguments.")] = "{}",
    image: Image = None,
    workspace: Annotated[Optional[Path], typer.Option(help="Host directory copied into /workspace.")] = None,
    verbose: Verbose = False,
) -> None:
    """Start a sandbox, open a tool session, make one tool call and print the observation."""
    # Imported here: the docker SDK and the tool server load only when a tool is called.
    from envs.docker import DockerSandbox, DockerSandboxConfig
    from tools import ToolSession, call_tool

    with DockerSandbox(DockerSandboxConfig(image=image or base_image(PYTHON, verbose=verbose))) as sandbox:
        if workspace is not None:
            sandbox.put(workspace, sandbox.workdir)
        with ToolSession(sandbox) as session:
            result = call_tool(session, name, arguments)
    out.print(result.output, markup=False, highlight=False)
    raise typer.Exit(1 if result.is_error else 0)
