"""edit_file (exact string replacement) and create_file; both write atomically in the server.

Each reports a syntax error the change introduced: Python is compiled by the sandbox's own
interpreter in the server; other languages are parsed here with tree-sitter, and only errors
that were not in the file before the edit are reported.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import Field

from tools.base import ToolArgs, ToolResult, ToolSpec, summary
from tools.lint import GRAMMARS, suffix_of, syntax_errors
from tools.session import ToolSession


class EditArgs(ToolArgs):
    path: str = Field(description="File to edit, relative to the workspace root.")
    old_str: str = Field(description="Exact text to replace, including whitespace and indentation; "
                         "it must occur exactly once unless replace_all is true.")
    new_str: str = Field(description="Text to put in its place (may be empty to delete old_str).")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring "
                              "exactly one.")


class CreateArgs(ToolArgs):
    path: str = Field(description="File to create, relative to the workspace root; missing parent "
                      "directories are created.")
    content: str = Field(description="The complete content of the file.")
    overwrite: bool = Field(False, description="Replace the file if it already exists.")


def _tree_sitter_news(path: str, before: str | None, after: str) -> list[dict[str, Any]]:
    """Errors in `after` that `before` did not have (matched by message and source line)."""
    old = Counter((d["message"], d["source"]) for d in syntax_errors(path, before)) if before else Counter()
    new = []
    for d in syntax_errors(path, after):
        key = (d["message"], d["source"])
        if old[key]:
            old[key] -= 1
        else:
            new.append(d)
    return new


def _with_syntax_report(path: str, res: dict[str, Any], before: str | None, after: str | None) -> ToolResult:
    errors: list[dict[str, Any]] = []
    if res.get("syntax_error"):
        errors = [dict(res["syntax_error"], file=path, code="E999")]
    elif after is not None:
        errors = _tree_sitter_news(path, before, after)
    text = res["output"]
    if errors:
        e = errors[0]
        text += (f"\nWarning: the file now has a syntax error at line {e['line']}, column "
                 f"{e['column']}: {e['message']}. Fix it with another edit.")
    data = {k: v for k, v in res.items() if k not in ("output", "before", "after")}
    data["syntax_errors"] = [{k: v for k, v in d.items() if k != "source"} for d in errors]
    return ToolResult(output=text, data=data)


def run_edit(session: ToolSession, args: EditArgs) -> ToolResult:
    """Replace an exact piece of text in a file. old_str must match the file exactly (copy it from
    read_file output without the line-number prefix) and be unique, or nothing changes and the
    line numbers of the matches are reported; set replace_all=true to change every occurrence.
    The result shows the edited region and any syntax error the edit introduced.

    Args:
        session: the tool session of the sandbox.
        args: the file, the text to find and its replacement.

    Returns:
        A numbered snippet around the edit; data has replacements, lines and syntax_errors.
    """
    want_text = suffix_of(args.path) in GRAMMARS and not args.path.endswith((".py", ".pyi"))
    res = session.call("edit", path=args.path, old_str=args.old_str, new_str=args.new_str,
                       replace_all=args.replace_all, want_text=want_text)
    return _with_syntax_report(args.path, res, res.get("before"), res.get("after"))


def run_create(session: ToolSession, args: CreateArgs) -> ToolResult:
    """Create a new file with the given content (parent directories are created). Refuses to
    replace an existing file unless overwrite=true; to change part of a file use edit_file.

    Args:
        session: the tool session of the sandbox.
        args: the path, the content and whether an existing file may be replaced.

    Returns:
        A confirmation with the line count, and any syntax error in the new content.
    """
    res = session.call("create", path=args.path, content=args.content, overwrite=args.overwrite)
    has_grammar = suffix_of(args.path) in GRAMMARS and not args.path.endswith((".py", ".pyi"))
    return _with_syntax_report(args.path, res, None, args.content if has_grammar else None)


EDIT_NAME, CREATE_NAME = "edit_file", "create_file"
EDIT_SPEC = ToolSpec(EDIT_NAME, summary(run_edit), EditArgs, run_edit)
CREATE_SPEC = ToolSpec(CREATE_NAME, summary(run_create), CreateArgs, run_create)
