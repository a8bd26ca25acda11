"""search: a regular expression over the workspace's text files, or definitions of a symbol.

Regex mode runs entirely in the server (Python `re`). Symbol mode has the server prefilter files
that mention the name as a word, fetches them, and finds definitions here with tree-sitter.
"""
from __future__ import annotations

import re
from typing import Any, Literal

import tree_sitter
from pydantic import Field

from tools.base import ToolArgs, ToolResult, ToolSpec, result_from, summary
from tools.lint import GRAMMARS, fetch_texts, parse
from tools.session import ToolSession

MAX_SYMBOL_FILES = 200
DEFINITIONS = {
    "function_definition": "function", "class_definition": "class",
    "function_declaration": "function", "generator_function_declaration": "function",
    "class_declaration": "class", "abstract_class_declaration": "class", "method_definition": "method",
    "interface_declaration": "interface", "type_alias_declaration": "type", "enum_declaration": "enum",
    "method_declaration": "method", "type_spec": "type", "function_item": "fn",
    "function_signature_item": "fn", "struct_item": "struct", "enum_item": "enum",
    "trait_item": "trait", "type_item": "type", "const_item": "const", "static_item": "static",
    "mod_item": "mod", "union_item": "union", "macro_definition": "macro",
    "constructor_declaration": "constructor", "record_declaration": "record",
    "annotation_type_declaration": "annotation",
}
TOP_LEVEL = {"module", "program", "source_file", "export_statement"}


class SearchArgs(ToolArgs):
    pattern: str = Field(description="Python regular expression to look for (or the literal text "
                         "with fixed_string=true; or the symbol name with mode=\"symbol\").")
    path: str | None = Field(None, description="File or directory to search, relative to the "
                             "workspace root (default: the whole workspace).")
    glob: str | None = Field(None, description="Only files whose name (or, with a '/', whose path) "
                             "matches this glob, e.g. \"*.py\" or \"src/**/*.{ts,tsx}\".")
    fixed_string: bool = Field(False, description="Treat pattern as literal text, not a regex.")
    case_sensitive: bool = Field(True, description="Match case exactly (default true).")
    max_results: int | None = Field(None, ge=1, le=1000, description="Most matches to list "
                                    "(default 100, max 1000).")
    mode: Literal["regex", "symbol"] = Field("regex", description="\"regex\": matching lines; "
                                             "\"symbol\": where the name in pattern is defined "
                                             "(function, class, method, type, constant).")


def _names(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The identifier nodes a definition node defines."""
    if node.type in ("const_spec", "var_spec"):
        return node.children_by_field_name("name")
    if node.type == "variable_declarator" and node.parent is not None and node.parent.type == "field_declaration":
        name = node.child_by_field_name("name")  # a Java field (constants are `static final` ones)
        return [name] if name is not None else []
    if node.type == "variable_declarator":
        decl = node.parent
        top = decl is not None and decl.parent is not None and decl.parent.type in TOP_LEVEL
        name = node.child_by_field_name("name")
        return [name] if top and name is not None and name.type == "identifier" else []
    if node.type == "assignment":
        stmt = node.parent
        if stmt is None or stmt.type != "expression_statement" or stmt.parent is None \
                or stmt.parent.type != "module":
            return []
        left = node.child_by_field_name("left")
        if left is None:
            return []
        return [left] if left.type == "identifier" else [c for c in left.children if c.type == "identifier"]
    name = node.child_by_field_name("name")
    return [name] if name is not None else []


def _kind(node: tree_sitter.Node) -> str | None:
    if node.type in DEFINITIONS:
        return DEFINITIONS[node.type]
    if node.type == "variable_declarator" and node.parent is not None and node.parent.type == "field_declaration":
        return "field"
    return {"const_spec": "const", "var_spec": "var", "variable_declarator": "variable",
            "assignment": "variable"}.get(node.type)


def definitions(path: str, text: str, name: str) -> list[dict[str, Any]]:
    """Definitions of `name` in one file's text, found with tree-sitter."""
    tree = parse(path, text)
    if tree is None:
        return []
    lines = text.split("\n")
    found, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        kind = _kind(node)
        if kind is not None:
            for ident in _names(node):
                if ident.text == name.encode():
                    row = node.start_point.row
                    found.append({"file": path, "line": row + 1, "kind": kind,
                                  "text": lines[row].strip()[:200]})
        stack.extend(reversed(node.children))
    return sorted(found, key=lambda d: d["line"])


def _symbol(session: ToolSession, args: SearchArgs) -> ToolResult:
    name = args.pattern.strip()
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
        return ToolResult(output=f"mode=\"symbol\" needs a bare identifier such as MyClass or "
                          f"parse_args, not {name!r}; use mode=\"regex\" for patterns.", is_error=True)
    res = session.call("search", pattern=rf"(?<![\w$]){re.escape(name)}(?![\w$])", path=args.path,
                       glob=args.glob, files_only=True, suffixes=sorted(GRAMMARS),
                       max_results=MAX_SYMBOL_FILES)
    files: list[str] = res["files"]
    found: list[dict[str, Any]] = []
    for path, text in fetch_texts(session, files):
        found += definitions(path, text, name)
    limit = args.max_results or 100
    if not found:
        where = f"{len(files)} file(s) mention it" if files else "no file mentions it"
        return ToolResult(output=f"No definition of {name!r} found ({where}); try mode=\"regex\".",
                          data={"definitions": [], "files_mentioning": len(files)})
    out = "\n".join(f"{d['file']}:{d['line']}: [{d['kind']}] {d['text']}" for d in found[:limit])
    if len(found) > limit:
        out += f"\n[{len(found) - limit} more definitions not shown; narrow with path or glob]"
    if len(files) >= MAX_SYMBOL_FILES:
        out += f"\n[only the first {MAX_SYMBOL_FILES} files that mention it were parsed]"
    return ToolResult(output=out, data={"definitions": found[:limit], "files_mentioning": len(files)})


def run(session: ToolSession, args: SearchArgs) -> ToolResult:
    """Search the workspace's text files (skipping .git, node_modules, virtualenvs and binary
    files). mode="regex" lists matching lines as file:line:text; mode="symbol" lists where a
    function, class, method, type or constant named `pattern` is defined (Python, JavaScript,
    TypeScript, Go, Rust, Java).

    Args:
        session: the tool session of the sandbox.
        args: the pattern, where to look and how to match.

    Returns:
        The matches as text (capped, with a count of those left out); data has the match list.
    """
    if args.mode == "symbol":
        return _symbol(session, args)
    return result_from(session.call(
        "search", pattern=args.pattern, path=args.path, glob=args.glob,
        fixed_string=args.fixed_string, case_sensitive=args.case_sensitive,
        max_results=args.max_results))


NAME = "search"
DESCRIPTION = summary(run)
SPEC = ToolSpec(NAME, DESCRIPTION, SearchArgs, run)
