"""`autoinstall ARGS` in the test's own process: the commands' real code through typer's CliRunner, ended as
cli.py's `main()` ends it (a UserFacingError exits 2 with its one line; anything else is a bug and is raised).

A CLI subprocess costs about a second of CPU in imports alone, and the fast tier runs dozens; tests of the entry
point itself (exit codes through `main()`, signals, what a terminal or a pipe sees) keep a real process
(tests/test_cli.py, tests/test_cli_errors.py, tests/test_cli_signals.py, tests/autoinstall/test_terminal.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from autoinstall.commands.app import App
from autoinstall.commands.batch import batch_cmd
from autoinstall.commands.catalog import catalog_app
from autoinstall.commands.plan import plan_cmd
from autoinstall.commands.run import run_cmd
from envs.errors import UserFacingError


@dataclass
class Done:
    """What a finished command left, as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


def _app() -> App:
    """The commands these tests run, registered as cli.py registers them."""
    app = App()
    app.command("run")(run_cmd)
    app.command("plan")(plan_cmd)
    app.command("batch")(batch_cmd)
    app.add_typer(catalog_app, name="catalog")
    return app


def autoinstall(*args: str, home: Path) -> Done:
    """Run `autoinstall ARGS` with AUTOINSTALL_HOME=home and no chat endpoint from the environment."""
    env = {"AUTOINSTALL_HOME": str(home), "COLUMNS": "200", "OPENAI_BASE_URL": None}
    result = CliRunner().invoke(_app(), list(args), env=env)
    if isinstance(result.exception, UserFacingError):
        return Done(2, result.stdout, f"{result.stderr}error: {result.exception}\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)
