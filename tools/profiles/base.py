"""The profile model: a scaffold's tools, their schemas, and how each call maps onto ours (`Profile`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from envs.errors import UserFacingError
from tools.base import ToolError, ToolResult
from tools.dispatch import TOOLS, call_tool, flat, invalid_arguments, openai_schemas
from tools.session import ToolServerError, ToolSession


class UnknownProfileError(UserFacingError, ValueError):
    """A profile name that does not exist; the message lists the available ones."""


@dataclass(frozen=True)
class Call:
    """One call of our tools: a name from tools.dispatch.TOOLS (or INSERT) and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


INSERT = "insert_lines"
"""The one composite call: insert text after a line, done as read_raw + create_file(overwrite)."""
Translation = Call | ToolResult
"""A call to run, or an answer given without running anything (e.g. bash restart)."""
BASH_DESCRIPTION = (
    "Run a bash command in the workspace and return its output and exit code. The shell persists "
    "between calls: `cd`, exported variables, an activated virtualenv and background jobs carry over."
)
"""What every scaffold's shell tool is described as."""


class ProfileArgs(BaseModel):
    """Base of a scaffold tool's arguments: unknown fields refused (unlike ours, arrays allowed)."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ProfileTool:
    """One tool as a scaffold names it, and how it maps onto ours."""

    name: str
    description: str
    args: type[ProfileArgs]
    translate: Callable[[Any], Translation]


def need(value: str | None, what: str, command: str) -> str:
    """`value`, or a ToolError saying that `command` needs `what`."""
    if value is None:
        raise ToolError(f"the {command} command needs {what}")
    return value


def _schema(tool: ProfileTool) -> dict[str, Any]:
    js = tool.args.model_json_schema()
    props = {}
    for name, prop in js["properties"].items():
        branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
        if branches[0].get("type") == "array":
            props[name] = {"type": "array", "items": branches[0]["items"], "description": prop["description"]}
        else:
            props[name] = flat(prop)
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
                raise ToolError(invalid_arguments(tool.name, tool.args, e)) from e
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
