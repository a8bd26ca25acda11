"""Scaffold profiles: the tool names and arguments a model was trained with, served by our tools.

A profile gives the OpenAI schemas a model sees (`schemas()`) and translates each call it makes into
one of our tools (`translate()`); `call()` does both and runs it. Profiles:

- "default": our own tools (read_file, edit_file, create_file, search, lint, terminal).
- "anthropic": `bash(command, restart)` and `str_replace_based_edit_tool` (alias `str_replace_editor`)
  with command view | create | str_replace | insert (undo_edit is refused with a reason).
- "openhands": `execute_bash(command, is_input, timeout)` and `str_replace_editor` as above.
- "cursor": `read_file`, `list_dir`, `run_terminal_cmd`, `grep_search`, `search_replace`.

Parameters are flat scalars except `view_range` ([start, end], an integer array in both Anthropic's
and OpenHands' editors). `insert` has no tool of its own here: it reads the file and rewrites it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.base import ToolError, ToolResult
from tools.registry import TOOLS, _flat, call_tool, openai_schemas
from tools.session import ToolServerError, ToolSession


class UnknownProfileError(ValueError):
    """A profile name that does not exist; the message lists the available ones."""


@dataclass(frozen=True)
class Call:
    """One call of our tools: a name from tools.registry.TOOLS (or INSERT) and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


INSERT = "insert_lines"
"""The one composite call: insert text after a line, done as read_raw + create_file(overwrite)."""
Translation = Call | ToolResult
"""A call to run, or an answer given without running anything (e.g. bash restart)."""


class ProfileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ProfileTool:
    """One tool as a scaffold names it, and how it maps onto ours."""

    name: str
    description: str
    args: type[ProfileArgs]
    translate: Callable[[Any], Translation]


def _schema(tool: ProfileTool) -> dict[str, Any]:
    js = tool.args.model_json_schema()
    props = {}
    for name, prop in js["properties"].items():
        branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
        if branches[0].get("type") == "array":
            props[name] = {"type": "array", "items": branches[0]["items"], "description": prop["description"]}
        else:
            props[name] = _flat(prop)
    params = {
        "type": "object",
        "properties": props,
        "required": js.get("required", []),
        "additionalProperties": False,
    }
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": params},
    }


def _parse(name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as e:
            raise ToolError(f"the arguments for {name} are not valid JSON ({e}); send one JSON object") from e
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise ToolError(f"the arguments for {name} must be a JSON object, not {type(arguments).__name__}")
    return arguments


@dataclass(frozen=True)
class Profile:
    """A scaffold's tool surface. `tools` is empty for "default", which is ours unchanged."""

    name: str
    tools: dict[str, ProfileTool] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    """Other names accepted for a tool (e.g. str_replace_editor for str_replace_based_edit_tool)."""

    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas the model is shown."""
        return [_schema(t) for t in self.tools.values()] if self.tools else openai_schemas()

    def names(self) -> list[str]:
        return list(self.tools) if self.tools else list(TOOLS)

    def translate(self, name: str, arguments: dict[str, Any] | str | None) -> Translation:
        """Map one call in this profile to our tools.

        Args:
            name: the tool name the model used.
            arguments: its arguments (dict or JSON text).

        Returns:
            The Call to run, or a ToolResult (an error saying what to do instead, or a no-op answer).
        """
        try:
            args = _parse(name, arguments)
            if not self.tools:
                if name not in TOOLS:
                    raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(TOOLS)}")
                return Call(name, args)
            tool = self.tools.get(self.aliases.get(name, name))
            if tool is None:
                raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(self.tools)}")
            try:
                parsed = tool.args.model_validate(args)
            except ValidationError as e:
                raise ToolError(_invalid(tool, e)) from e
            return tool.translate(parsed)
        except ToolError as e:
            return ToolResult(output=str(e), is_error=True)

    def call(self, session: ToolSession, name: str, arguments: dict[str, Any] | str | None) -> ToolResult:
        """Translate and run one call; never raises for the model's mistakes (see call_tool)."""
        if not self.tools:
            return call_tool(session, name, arguments)
        call = self.translate(name, arguments)
        if isinstance(call, ToolResult):
            return call
        if call.tool == INSERT:
            return _insert(session, **call.args)
        return call_tool(session, call.tool, call.args)


def _invalid(tool: ProfileTool, e: ValidationError) -> str:
    problems = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(
            f"{where}: not an argument of {tool.name}"
            if err["type"] == "extra_forbidden"
            else f"{where}: {err['msg']}"
        )
    return (
        f"invalid arguments for {tool.name}: {'; '.join(problems)}. Its arguments are: "
        f"{', '.join(tool.args.model_fields)}."
    )


def _insert(session: ToolSession, path: str, line: int, text: str) -> ToolResult:
    try:
        res = session.call("read_raw", paths=[path])
    except (ToolError, ToolServerError) as e:
        return ToolResult(output=f"cannot insert into {path}: {e}", is_error=True)
    if path not in res["files"]:
        why = res["skipped"].get(path, "cannot be read")
        return ToolResult(output=f"cannot insert into {path}: {why}", is_error=True)
    lines = res["files"][path].splitlines(keepends=True)
    if line > len(lines):
        return ToolResult(
            output=f"insert_line {line} is past the end of {path} ({len(lines)} lines); use 0..{len(lines)}",
            is_error=True,
        )
    if lines and not lines[-1].endswith("\n") and line == len(lines):
        lines[-1] += "\n"
    new = text if text.endswith("\n") else text + "\n"
    content = "".join(lines[:line]) + new + "".join(lines[line:])
    done = call_tool(session, "create_file", {"path": path, "content": content, "overwrite": True})
    if done.is_error:
        return done
    count = new.count("\n")
    extra = done.output.split("\n", 1)[1] if "\n" in done.output else ""
    return ToolResult(
        output=f"Inserted {count} line(s) into {path} after line {line}.\n{extra}".rstrip(), data=done.data
    )


# Anthropic and OpenHands: the str_replace editor and a shell.
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


def _need(value: str | None, what: str, command: str) -> str:
    if value is None:
        raise ToolError(f"the {command} command needs {what}")
    return value


def _editor(a: EditorArgs) -> Translation:
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
        return Call("create_file", {"path": a.path, "content": _need(a.file_text, "file_text", "create")})
    if a.command == "str_replace":
        return Call(
            "edit_file",
            {
                "path": a.path,
                "old_str": _need(a.old_str, "old_str", "str_replace"),
                "new_str": a.new_str or "",
            },
        )
    if a.command == "insert":
        if a.insert_line is None:
            raise ToolError("the insert command needs insert_line (0 inserts at the start of the file)")
        text = a.insert_text if a.insert_text is not None else _need(a.new_str, "insert_text", "insert")
        return Call(INSERT, {"path": a.path, "line": a.insert_line, "text": text})
    raise ToolError("undo_edit is not available here; use str_replace to put the old text back")


EDITOR_DESCRIPTION = (
    "Custom editing tool for viewing, creating and editing files. view shows a file with "
    "line numbers (or lists a directory); create makes a new file (refused if it exists); "
    "str_replace replaces old_str, which must occur exactly once, by new_str; insert puts "
    "text after insert_line."
)


class BashArgs(ProfileArgs):
    command: str | None = Field(None, description="The bash command to run.")
    restart: bool = Field(False, description="Restart the shell (each command already gets a fresh one).")


def _bash(a: BashArgs) -> Translation:
    if a.restart:
        return ToolResult(output="tool has been restarted.")
    return Call("terminal", {"command": _need(a.command, "a command", "bash")})


class ExecuteBashArgs(ProfileArgs):
    command: str = Field(description="The bash command to run.")
    is_input: Literal["true", "false"] = Field(
        "false",
        description="Whether the command is input to a "
        "running process (not supported: every command is new).",
    )
    timeout: float | None = Field(None, gt=0, description="Seconds before the command is killed.")


def _execute_bash(a: ExecuteBashArgs) -> Translation:
    if a.is_input == "true":
        raise ToolError(
            "is_input is not supported: each command runs to completion in a fresh shell; "
            "run the whole command non-interactively instead"
        )
    return Call("terminal", {"command": a.command, "timeout_s": a.timeout})


BASH_DESCRIPTION = (
    "Run a bash command in the workspace and return its output and exit code. Each call "
    "starts a fresh shell; state such as `cd` does not carry over."
)
EDITOR_NAME = "str_replace_based_edit_tool"


# Cursor.
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
EDITOR = ProfileTool(EDITOR_NAME, EDITOR_DESCRIPTION, EditorArgs, _editor)
PROFILES: dict[str, Profile] = {
    "default": Profile("default"),
    "anthropic": Profile(
        "anthropic",
        {"bash": ProfileTool("bash", BASH_DESCRIPTION, BashArgs, _bash), EDITOR_NAME: EDITOR},
        aliases={"str_replace_editor": EDITOR_NAME},
    ),
    "openhands": Profile(
        "openhands",
        {
            "execute_bash": ProfileTool("execute_bash", BASH_DESCRIPTION, ExecuteBashArgs, _execute_bash),
            "str_replace_editor": ProfileTool("str_replace_editor", EDITOR_DESCRIPTION, EditorArgs, _editor),
        },
    ),
    "cursor": Profile("cursor", {t.name: t for t in CURSOR}),
}


def get_profile(name: str) -> Profile:
    """The profile called `name`; UnknownProfileError (listing the available ones) otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        msg = f"unknown tool profile {name!r}; available profiles: {', '.join(PROFILES)}"
        raise UnknownProfileError(msg) from None
