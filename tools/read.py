"""read_file: a file's lines, numbered like `cat -n`, capped at 2,000 lines / 100 KB per call."""
from __future__ import annotations

from pydantic import Field

from tools.base import ToolArgs, ToolResult, ToolSpec, result_from, summary
from tools.session import ToolSession


class ReadArgs(ToolArgs):
    path: str = Field(description="File to read, relative to the workspace root.")
    start_line: int | None = Field(None, ge=1, description="First line to show (1-based; default 1).")
    end_line: int | None = Field(None, ge=1, description="Last line to show (inclusive; default: "
                                 "as far as the 2,000-line / 100 KB cap allows).")


def run(session: ToolSession, args: ReadArgs) -> ToolResult:
    """Read a text file from the workspace. Lines come numbered (`cat -n` style). At most 2,000
    lines or 100 KB are returned per call; the output then says which start_line reads on.
    A directory gives a listing of its entries.

    Args:
        session: the tool session of the sandbox.
        args: the path and the optional line range.

    Returns:
        The numbered lines; data has first_line, last_line and clipped.
    """
    return result_from(session.call("read", path=args.path, start_line=args.start_line,
                                    end_line=args.end_line))


NAME = "read_file"
DESCRIPTION = summary(run)
SPEC = ToolSpec(NAME, DESCRIPTION, ReadArgs, run)
