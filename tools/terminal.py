"""terminal: one bash command in the workspace, with a timeout and head+tail capped output."""
from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolResult, ToolSpec, summary
from tools.session import ToolSession

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 3600.0
ANSWER_MARGIN_S = 30.0


class TerminalArgs(ToolArgs):
    command: str = Field(description="The bash command line to run, e.g. `pytest -x tests/test_a.py`.")
    timeout_s: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, description=(
        "Seconds before the command and all its processes are killed (default 120, max 3600)."))
    cwd: str | None = Field(None, description="Directory to run in, relative to the workspace "
                            "root (default: the root).")


def run(session: ToolSession, args: TerminalArgs) -> ToolResult:
    """Run a bash command in the workspace's shell and return its exit code and combined
    stdout/stderr. The shell persists for the whole episode: `cd`, exported variables, an activated
    virtualenv and background jobs carry over to the next call. Output beyond 32 KB keeps the first
    and last 16 KB. On a timeout the command and everything it started are killed and the shell stays
    usable; for a long job run it in the background with its output redirected to a file.

    Args:
        session: the tool session of the sandbox.
        args: the command, its timeout and working directory.

    Returns:
        The output followed by the exit code; data has exit_code, timed_out, truncated, duration_s.
    """
    timeout = args.timeout_s or DEFAULT_TIMEOUT_S
    res = session.call("terminal", command=args.command, timeout_s=timeout, cwd=args.cwd,
                       persistent=session.terminal == "persistent", call_timeout=timeout + ANSWER_MARGIN_S)
    text = res["output"]
    if text and not text.endswith("\n"):
        text += "\n"
    text += f"[exit code {res['exit_code']}]"
    return ToolResult(output=text, is_error=bool(res["timed_out"]),
                      data={k: v for k, v in res.items() if k != "output"})


NAME = "terminal"
DESCRIPTION = summary(run)
SPEC = ToolSpec(NAME, DESCRIPTION, TerminalArgs, run)
