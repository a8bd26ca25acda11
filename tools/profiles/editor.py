"""The str_replace editor of the Anthropic and OpenHands scaffolds: view | create | str_replace | insert."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tools.base import ToolError
from tools.profiles.base import INSERT, Call, ProfileArgs, Translation, need

EDITOR_NAME = "str_replace_based_edit_tool"
EDITOR_DESCRIPTION = (
    "Custom editing tool for viewing, creating and editing files. view shows a file with "
    "line numbers (or lists a directory); create makes a new file (refused if it exists); "
    "str_replace replaces old_str, which must occur exactly once, by new_str; insert puts "
    "text after insert_line."
)


class EditorArgs(ProfileArgs):
    command: Literal["view", "create", "str_replace", "insert", "undo_edit"] = Field(
        description="The command to run: view, create, str_replace, insert (undo_edit is not available)."
    )
    path: str = Field(description="Path to the file or directory, e.g. /workspace/file.py.")
    file_text: str | None = Field(None, description="create: the content of the new file.")
    old_str: str | None = Field(None, description="str_replace: the exact text to replace (must be unique).")
    new_str: str | None = Field(
        None,
        description="str_replace: the replacement text; insert: the text to insert (same as insert_text).",
    )
    insert_line: int | None = Field(
        None, ge=0, description="insert: the line after which to insert (0 = at the start)."
    )
    insert_text: str | None = Field(None, description="insert: the text to insert.")
    view_range: list[int] | None = Field(
        None,
        description="view: [start_line, end_line] (1-based, end inclusive; -1 = to the end of the file).",
    )


def editor(a: EditorArgs) -> Translation:
    """One editor command as a call of our tools (undo_edit is refused with a reason)."""
    if a.command == "view":
        start = end = None
        if a.view_range is not None:
            if (
                len(a.view_range) != 2
                or a.view_range[0] < 1
                or (a.view_range[1] != -1 and a.view_range[1] < 1)
            ):
                raise ToolError(
                    "view_range must be [start_line, end_line] with start_line >= 1 and end_line "
                    ">= 1 or -1 (to the end)"
                )
            start, end = a.view_range[0], (None if a.view_range[1] == -1 else a.view_range[1])
        return Call("read_file", {"path": a.path, "start_line": start, "end_line": end})
    if a.command == "create":
        return Call("create_file", {"path": a.path, "content": need(a.file_text, "file_text", "create")})
    if a.command == "str_replace":
        return Call(
            "edit_file",
            {
                "path": a.path,
                "old_str": need(a.old_str, "old_str", "str_replace"),
                "new_str": a.new_str or "",
            },
        )
    if a.command == "insert":
        if a.insert_line is None:
            raise ToolError("the insert command needs insert_line (0 inserts at the start of the file)")
        text = a.insert_text if a.insert_text is not None else need(a.new_str, "insert_text", "insert")
        return Call(INSERT, {"path": a.path, "line": a.insert_line, "text": text})
    raise ToolError("undo_edit is not available here; use str_replace to put the old text back")
