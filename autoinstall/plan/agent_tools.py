"""The agent tools as a chat model uses them: over the checkout in phase 1, in the sandbox in phase 2."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autoinstall.plan.models.protocol import ToolRunner
from envs.base import Sandbox
from envs.local import LocalSandbox
from tools import ToolSession, call_tool


def wants_tools(model: object) -> bool:
    """Models that explore and investigate (chat models) get tools; the embedded model does not need them."""
    return bool(getattr(model, "wants_tools", False))


def runner(session: ToolSession) -> ToolRunner:
    """Tool calls as text observations; errors come back as text too, never as exceptions."""

    def run(name: str, arguments: str) -> str:
        result = call_tool(session, name, arguments)
        return f"ERROR: {result.output}" if result.is_error else result.output

    return run


@contextmanager
def tools_over_checkout(repo: Path) -> Iterator[ToolRunner]:
    """Read/search tools over a scratch copy of the checkout (no Docker needed in phase 1)."""
    with LocalSandbox(network=True) as sandbox:
        sandbox.put(repo, sandbox.workdir)
        with ToolSession(sandbox) as session:
            yield runner(session)


@contextmanager
def tools_in(sandbox: Sandbox) -> Iterator[ToolRunner]:
    """All tools, served inside a running sandbox."""
    with ToolSession(sandbox) as session:
        yield runner(session)
