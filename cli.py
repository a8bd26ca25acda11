"""autoinstall: turn a repository into a verified, reproducible container environment.

`autoinstall REPO` proposes install steps, runs and repairs them in Docker, and verifies the result.
"""
from __future__ import annotations

import signal
import sys

from autoinstall.commands.app import App
from autoinstall.commands.base import base_app
from autoinstall.commands.batch import batch_cmd
from autoinstall.commands.catalog import catalog_app
from autoinstall.commands.debug import debug_cmd
from autoinstall.commands.export import export_cmd
from autoinstall.commands.output import err, print_error, print_traceback
from autoinstall.commands.plan import plan_cmd
from autoinstall.commands.run import run_cmd
from autoinstall.commands.sandbox import cleanup_cmd, exec_cmd
from autoinstall.commands.tasks import tasks_app
from autoinstall.commands.tools import tools_app

app = App(no_args_is_help=True, add_completion=False, help=__doc__, pretty_exceptions_enable=False)
app.command("run")(run_cmd)
app.command("plan")(plan_cmd)
app.command("batch")(batch_cmd)
app.command("debug")(debug_cmd)
app.command("export")(export_cmd)
app.command("exec")(exec_cmd)
app.command("cleanup")(cleanup_cmd)
app.add_typer(base_app, name="base")
app.add_typer(tools_app, name="tools")
app.add_typer(catalog_app, name="catalog")
app.add_typer(tasks_app, name="tasks")
COMMANDS = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
"""Names that are commands; any other first argument is a repository for `run`."""


def main() -> None:
    """Entry point: `autoinstall REPO ...` means `autoinstall run REPO ...`.

    A UserFacingError (the one root of AutoinstallError, EnvError and ToolServerError) prints as one red
    line and exits 2, with the traceback only when $AUTOINSTALL_DEBUG is set; anything else is a bug and
    keeps its traceback (exit 1). Both are made visible (autoinstall/terminal.py): their messages may quote
    repository text.
    """
    signal.signal(signal.SIGTERM, _terminated)
    args = sys.argv[1:]
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:
        sys.argv.insert(1, "run")
    # Imported here: envs loads pydantic, which `autoinstall --help` does not need.
    from envs.errors import UserFacingError

    try:
        app()
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]; what was already recorded is kept")
        sys.exit(130)
    except UserFacingError as e:
        print_error(e)
        sys.exit(2)
    except Exception as e:
        print_traceback(e)
        sys.exit(1)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so every sandbox started is removed and finished records are kept."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
