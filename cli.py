"""autoinstall: turn a repository into a verified, reproducible container environment.

`autoinstall REPO` proposes install steps, runs and repairs them in Docker, and verifies the result.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from autoinstall.commands.catalog import batch_cmd, catalog_app
from autoinstall.commands.debug import debug_cmd
from autoinstall.commands.export import export_cmd

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, pretty_exceptions_enable=False)
base_app = typer.Typer(no_args_is_help=True, help="Build and list base images.")
tools_app = typer.Typer(no_args_is_help=True, help="The agent tools (read, edit, search, lint, terminal).")
app.add_typer(base_app, name="base")
app.add_typer(tools_app, name="tools")
app.add_typer(catalog_app, name="catalog")
app.command("batch")(batch_cmd)
app.command("debug")(debug_cmd)
app.command("export")(export_cmd)
console = Console(stderr=True)
out = Console()

ADVANCED = "Advanced"
Repo = Annotated[str, typer.Argument(help="Repository: URL, local directory, or local git directory (bare ok).")]
Commit = Annotated[Optional[str], typer.Option("--commit", help="Revision to check out (default: HEAD).")]
Model = Annotated[str, typer.Option("--model", help='Prior model: "embedded" or "openai:NAME".')]
BaseUrl = Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint for openai:NAME.")]
JsonOut = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]


@app.command("run")
def run_cmd(
    repo: Repo,
    commit: Commit = None,
    model: Model = "embedded",
    base_url: BaseUrl = None,
    json_out: JsonOut = False,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Where to write spec, Dockerfile, logs.")] = None,
    threshold: Annotated[float, typer.Option(help="Pass rate needed to call it verified.")] = 0.9,
    as_of_commit: Annotated[bool, typer.Option("--as-of-commit", help="Resolve deps as of the commit date.",
                                               rich_help_panel=ADVANCED)] = False,
    rebuild_check: Annotated[bool, typer.Option("--rebuild-check", help="Rebuild from the Dockerfile and verify.",
                                                rich_help_panel=ADVANCED)] = False,
    python: Annotated[Optional[str], typer.Option(help="Force a Python version (X.Y).",
                                                  rich_help_panel=ADVANCED)] = None,
    max_repairs: Annotated[int, typer.Option(rich_help_panel=ADVANCED)] = 12,
    wall_s: Annotated[float, typer.Option("--time-budget", help="Seconds for install+repair.",
                                          rich_help_panel=ADVANCED)] = 1800.0,
    step_timeout: Annotated[float, typer.Option(help="Seconds per command.", rich_help_panel=ADVANCED)] = 900.0,
    catalog: Annotated[Optional[Path], typer.Option("--catalog", help="Catalog directory to record the result in "
                                                    "(default: ~/.autoinstall/catalog).")] = None,
) -> None:
    """Build and verify an environment for REPO (the default command: `autoinstall REPO`)."""
    from autoinstall.commands.progress import Progress, print_summary
    from autoinstall.options import Budgets, BuildOptions
    from autoinstall.pipeline import build_environment
    from autoinstall.record import spec_dir

    options = BuildOptions(model=model, base_url=base_url, commit=commit, out_dir=out_dir, threshold=threshold,
                           as_of_commit=as_of_commit, rebuild_check=rebuild_check, python=python,
                           budgets=Budgets(max_repairs=max_repairs, wall_s=wall_s, step_timeout_s=step_timeout))
    from envs.catalog import Catalog

    with Progress(console, quiet=json_out) as progress:
        spec = build_environment(repo, options, progress.report)
    record = Catalog(catalog).upsert_spec(spec, spec_dir(spec), requested_commit=commit)
    console.print(f"recorded in the catalog as [bold]{record.id}[/]", highlight=False)
    if json_out:
        out.print_json(spec.model_dump_json())
    else:
        print_summary(out, spec)
    raise typer.Exit(0 if spec.status == "verified" else 1)


@app.command("plan")
def plan_cmd(repo: Repo, commit: Commit = None, model: Model = "embedded", base_url: BaseUrl = None,
             json_out: JsonOut = False) -> None:
    """Survey REPO and print the proposed plan (phase 1 only, no Docker)."""
    from autoinstall.commands.progress import print_plan
    from autoinstall.plan.propose import propose_plan

    plan = propose_plan(repo, commit=commit, model=model, base_url=base_url)
    if json_out:
        out.print_json(plan.model_dump_json())
    else:
        print_plan(out, plan)


@base_app.command("build")
def base_build(
    python: Annotated[str, typer.Option(help="Python version X.Y.")] = "3.11",
    ca_bundle: Annotated[Optional[Path], typer.Option("--ca-bundle", help="CA bundle to trust in builds.")] = None,
    rebuild: Annotated[bool, typer.Option(help="Build even if the recipe is unchanged.")] = False,
) -> None:
    """Build the base image for a Python version (no-op when it exists)."""
    from envs.baseimage import ensure_base_image

    tag = ensure_base_image(python=python, ca_bundle=ca_bundle, rebuild=rebuild, log=console.print)
    out.print(tag)


@app.command("exec")
def exec_cmd(
    command: Annotated[list[str], typer.Argument(help="Command and arguments to run.")],
    python: Annotated[str, typer.Option(help="Base image Python version.")] = "3.11",
    image: Annotated[Optional[str], typer.Option(help="Image to run in (default: the base image).")] = None,
    network: Annotated[bool, typer.Option(help="Network access.")] = True,
) -> None:
    """Run one command in a fresh sandbox container and print its output."""
    from envs.baseimage import ensure_base_image
    from envs.docker import DockerSandbox, DockerSandboxConfig

    config = DockerSandboxConfig(image=image or ensure_base_image(python=python, log=console.print), network=network)
    with DockerSandbox(config) as sandbox:
        result = sandbox.exec(list(command))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    raise typer.Exit(result.exit_code)


@tools_app.command("schema")
def tools_schema() -> None:
    """Print the OpenAI function-calling schemas of the agent tools as JSON."""
    from tools.registry import openai_schemas

    out.print_json(json.dumps(openai_schemas()))


@tools_app.command("call")
def tools_call(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. read_file.")],
    arguments: Annotated[str, typer.Argument(help="JSON arguments.")] = "{}",
    image: Annotated[Optional[str], typer.Option(help="Image to run in (default: the base image).")] = None,
    workspace: Annotated[Optional[Path], typer.Option(help="Host directory copied into /workspace.")] = None,
) -> None:
    """Start a sandbox, open a tool session, make one tool call and print the observation."""
    from envs.baseimage import ensure_base_image
    from envs.docker import DockerSandbox, DockerSandboxConfig
    from tools import ToolSession, call_tool

    with DockerSandbox(DockerSandboxConfig(image=image or ensure_base_image(log=console.print))) as sandbox:
        if workspace is not None:
            sandbox.put(workspace, sandbox.workdir)
        with ToolSession(sandbox) as session:
            result = call_tool(session, name, arguments)
    out.print(result.output, markup=False, highlight=False)
    raise typer.Exit(1 if result.is_error else 0)


@app.command("cleanup")
def cleanup_cmd(dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False) -> None:
    """Remove containers and snapshot images that autoinstall left behind."""
    from envs.docker import cleanup

    report = cleanup(dry_run=dry_run)
    out.print_json(report.model_dump_json())


COMMANDS = {"run", "plan", "base", "tools", "exec", "cleanup", "catalog", "batch", "debug", "export"}


def main() -> None:
    """Entry point: `autoinstall REPO ...` means `autoinstall run REPO ...`; errors print without tracebacks."""
    args = sys.argv[1:]
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        sys.argv.insert(1, "run")
    from autoinstall.errors import user_errors

    try:
        app()
    except Exception as e:
        if not isinstance(e, user_errors()):
            raise
        console.print(f"[bold red]error:[/] {e}", highlight=False)
        if os.environ.get("AUTOINSTALL_DEBUG"):
            console.print_exception()
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]; what was already recorded is kept")
        sys.exit(130)


if __name__ == "__main__":
    main()
