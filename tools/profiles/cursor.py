"""The Cursor profile: `read_file`, `list_dir`, `run_terminal_cmd`, `grep_search`, `search_replace`."""

from __future__ import annotations

from pydantic import Field

from tools.base import ToolError
from tools.profiles.base import BASH_DESCRIPTION, Call, Profile, ProfileArgs, ProfileTool, Translation


class CursorReadArgs(ProfileArgs):
    target_file: str = Field(description="Path of the file to read, relative to the workspace or absolute.")
    should_read_entire_file: bool = Field(False, description="Read the whole file, ignoring the line range.")
    start_line_one_indexed: int | None = Field(None, ge=1, description="First line to read (1-based).")
    end_line_one_indexed_inclusive: int | None = Field(
        None, ge=1, description="Last line to read (inclusive)."
    )
    explanation: str | None = Field(None, description="Why this tool is used (ignored).")


def _cursor_read(a: CursorReadArgs) -> Translation:
    whole = a.should_read_entire_file
    return Call(
        "read_file",
        {
            "path": a.target_file,
            "start_line": None if whole else a.start_line_one_indexed,
            "end_line": None if whole else a.end_line_one_indexed_inclusive,
        },
    )


class ListDirArgs(ProfileArgs):
    relative_workspace_path: str = Field(description="Directory to list, relative to the workspace root.")
    explanation: str | None = Field(None, description="Why this tool is used (ignored).")


class RunTerminalArgs(ProfileArgs):
    command: str = Field(description="The terminal command to run.")
    is_background: bool = Field(False, description="Run in the background (not supported).")
    explanation: str | None = Field(None, description="Why this command is run (ignored).")


def _run_terminal(a: RunTerminalArgs) -> Translation:
    if a.is_background:
        raise ToolError(
            "is_background is not supported: background processes end with the command; "
            "run it in the foreground (redirect long output to a file)"
        )
    return Call("terminal", {"command": a.command})


class GrepArgs(ProfileArgs):
    query: str = Field(description="The regex pattern to search for.")
    include_pattern: str | None = Field(None, description="Glob of the files to search, e.g. '*.py'.")
    case_sensitive: bool = Field(True, description="Whether the search is case sensitive.")
    explanation: str | None = Field(None, description="Why this search is run (ignored).")


class SearchReplaceArgs(ProfileArgs):
    file_path: str = Field(description="Path of the file to edit.")
    old_string: str = Field(description="The exact text to replace; must occur exactly once.")
    new_string: str = Field(description="The replacement text.")


CURSOR = [
    ProfileTool(
        "read_file",
        "Read the contents of a file (with line numbers), optionally a line range.",
        CursorReadArgs,
        _cursor_read,
    ),
    ProfileTool(
        "list_dir",
        "List the contents of a directory.",
        ListDirArgs,
        lambda a: Call("read_file", {"path": a.relative_workspace_path}),
    ),
    ProfileTool("run_terminal_cmd", BASH_DESCRIPTION, RunTerminalArgs, _run_terminal),
    ProfileTool(
        "grep_search",
        "Fast regex search over the workspace's text files; lists file:line: text.",
        GrepArgs,
        lambda a: Call(
            "search", {"pattern": a.query, "glob": a.include_pattern, "case_sensitive": a.case_sensitive}
        ),
    ),
    ProfileTool(
        "search_replace",
        "Replace one unique occurrence of old_string by new_string in a file.",
        SearchReplaceArgs,
        lambda a: Call("edit_file", {"path": a.file_path, "old_str": a.old_string, "new_str": a.new_string}),
    ),
]
PROFILE = Profile("cursor", {t.name: t for t in CURSOR})
