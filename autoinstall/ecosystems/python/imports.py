"""The modules a Python file imports, read with tree-sitter (the file is never run)."""

from __future__ import annotations

import sys
from functools import cache

import tree_sitter_python
from pydantic import BaseModel
from tree_sitter import Language, Node, Parser

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}


class Import(BaseModel):
    """One absolute import: the dotted module name and where it is."""

    name: str
    line: int
    text: str
    optional: bool = False
    """Inside a try block or an `if TYPE_CHECKING:` block: the code copes without it."""

    @property
    def top(self) -> str:
        return self.name.split(".", 1)[0]


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_python.language()))


def _is_optional(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "try_statement":
            return True
        if parent.type == "if_statement":
            condition = parent.child_by_field_name("condition")
            if condition is not None and b"TYPE_CHECKING" in (condition.text or b""):
                return True
        if parent.type in ("function_definition", "class_definition"):
            return False
        parent = parent.parent
    return False


def _names(node: Node) -> list[str]:
    if node.type == "import_statement":
        names = []
        for child in node.named_children:
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if target is not None and target.type == "dotted_name":
                names.append((target.text or b"").decode())
        return names
    module = node.child_by_field_name("module_name")
    if module is None or module.type != "dotted_name":
        return []  # relative import: the project's own code
    return [(module.text or b"").decode()]


def extract_imports(source: bytes) -> list[Import]:
    """Absolute imports in the source, in order, with 1-based line numbers."""
    tree = _parser().parse(source)
    lines = source.splitlines()
    found: list[Import] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("import_statement", "import_from_statement"):
            line = node.start_point[0]
            text = lines[line].decode(errors="replace").strip() if line < len(lines) else ""
            for name in _names(node):
                found.append(Import(name=name, line=line + 1, text=text[:200], optional=_is_optional(node)))
            continue
        stack.extend(reversed(node.children))
    return found


def is_stdlib(name: str) -> bool:
    """True if the module (dotted or top-level) belongs to the standard library."""
    return name.split(".", 1)[0] in STDLIB
