"""What every tool shares: its result type, the error the model gets to see, and its spec."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict


class Caller(Protocol):
    """What a tool needs of its session (`tools.session.ToolSession`): one request to the tool server."""

    def call(self, op: str, /, *, call_timeout: float | None = None, **args: Any) -> Any: ...


class ToolResult(BaseModel):
    """What a tool call gives back to the model."""

    output: str
    """The text the model reads."""
    is_error: bool = False
    """True when the call failed; `output` then says why and what to do instead."""
    data: dict[str, Any] | None = None
    """Structured extras for programs (diagnostics, exit code, match list)."""


class ToolError(Exception):
    """A failure the model can act on (missing file, bad regex). Reported as a result, never a crash."""


class ToolArgs(BaseModel):
    """Base of every tool's arguments: flat scalar fields only, unknown fields refused."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what the model is told about it, its arguments and its implementation."""

    name: str
    description: str
    args: type[ToolArgs]
    run: Callable[[Caller, Any], ToolResult]


def summary(fn: Callable[..., Any]) -> str:
    """The docstring of `fn` up to its `Args:` section: the description the model reads."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    return " ".join(doc.split("\nArgs:")[0].split())


def result_from(res: dict[str, Any], *, is_error: bool = False) -> ToolResult:
    """A ToolResult from a server answer: its "output" is the text, the rest goes to data."""
    return ToolResult(output=res["output"], is_error=is_error,
                      data={k: v for k, v in res.items() if k != "output"})
