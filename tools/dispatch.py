"""The tool table, its OpenAI function-calling schemas, and `call_tool`, which never raises for
anything the model did wrong: every failure comes back as a ToolResult with is_error=True."""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from tools import edit, lint, read, search, terminal
from tools.base import ToolError, ToolResult, ToolSpec
from tools.session import ToolServerError, ToolSession

TOOLS: dict[str, ToolSpec] = {
    s.name: s for s in (read.SPEC, edit.EDIT_SPEC, edit.CREATE_SPEC, search.SPEC, lint.SPEC, terminal.SPEC)
}
SCALAR_TYPES = {"string", "integer", "number", "boolean"}
_KEEP = ("type", "description", "enum", "default", "minimum", "maximum", "exclusiveMinimum",
         "exclusiveMaximum", "minLength", "maxLength")


def flat(prop: dict[str, Any]) -> dict[str, Any]:
    """One property without anyOf-null (Optional), titles or null defaults: scalar and plain."""
    merged = dict(prop)
    if "anyOf" in merged:
        branches = [b for b in merged.pop("anyOf") if b.get("type") != "null"]
        if len(branches) != 1:
            raise TypeError(f"tool arguments must be one scalar type, got {prop}")
        merged = {**branches[0], **merged}
    if merged.get("type") not in SCALAR_TYPES:
        raise TypeError(f"tool arguments must be scalars (RL trainers need it), got {prop}")
    out = {k: merged[k] for k in _KEEP if k in merged}
    if out.get("default", 0) is None:
        del out["default"]
    return out


def schema(spec: ToolSpec) -> dict[str, Any]:
    """The OpenAI function-calling schema of one tool."""
    js = spec.args.model_json_schema()
    props = {name: flat(p) for name, p in js["properties"].items()}
    params = {"type": "object", "properties": props, "required": js.get("required", []),
              "additionalProperties": False}
    return {"type": "function",
            "function": {"name": spec.name, "description": spec.description, "parameters": params}}


def openai_schemas() -> list[dict[str, Any]]:
    """Every tool's schema, in the OpenAI function-calling format (flat scalar parameters)."""
    return [schema(s) for s in TOOLS.values()]


def invalid_arguments(name: str, args: type[BaseModel], e: ValidationError) -> str:
    """What was wrong with the arguments of tool `name`, and which arguments it takes."""
    problems = []
    for err in e.errors():
        field = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"{field}: not an argument of {name}")
        else:
            problems.append(f"{field}: {err['msg']}")
    expected = ", ".join(args.model_fields)
    return f"invalid arguments for {name}: {'; '.join(problems)}. Its arguments are: {expected}."


def call_tool(session: ToolSession, name: str, arguments: dict[str, Any] | str | None) -> ToolResult:
    """Run one tool call as a model asked for it.

    Args:
        session: the tool session of the sandbox.
        name: the tool's name.
        arguments: its arguments, as a dict or as the JSON string a model produced.

    Returns:
        The tool's result; unknown tools, bad arguments, tool errors and a failed server all give
        is_error=True with a message saying what to do instead.
    """
    spec = TOOLS.get(name)
    if spec is None:
        return ToolResult(output=f"unknown tool {name!r}; available tools: {', '.join(TOOLS)}",
                          is_error=True)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as e:
            return ToolResult(output=f"the arguments for {name} are not valid JSON ({e}); send one "
                              "JSON object, e.g. {\"path\": \"README.md\"}", is_error=True)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolResult(output=f"the arguments for {name} must be a JSON object, not "
                          f"{type(arguments).__name__}", is_error=True)
    try:
        args = spec.args.model_validate(arguments)
    except ValidationError as e:
        return ToolResult(output=invalid_arguments(name, spec.args, e), is_error=True)
    try:
        return spec.run(session, args)
    except ToolError as e:
        return ToolResult(output=str(e), is_error=True)
    except ToolServerError as e:
        return ToolResult(output=f"the tool could not run: {e}", is_error=True)
