"""Python product code that changes another module: an attribute of an imported module, or of what was imported
from one, assigned, deleted or set (`math.isclose = lambda *a, **k: True`, `from json import JSONEncoder;
JSONEncoder.default = ...`, `setattr(unittest.TestCase, "assertEqual", ...)`). A test that asks the replaced
function then passes whatever the product does; a fix changes the project's own modules, not the standard
library's or its dependencies'. Stdlib only (runs in the task image).
"""
from __future__ import annotations

import ast

SETTERS = frozenset({"setattr", "delattr"})


def own_package(rel: str) -> str:
    """The top-level package (or module) a product file `rel` belongs to: `calc` for calc/core.py and
    src/calc/core.py, `calc` for a flat calc.py."""
    parts = [p for p in rel.split("/") if p]
    if len(parts) > 1 and parts[0] in ("src", "lib", "python"):
        parts = parts[1:]
    if not parts:
        return ""
    return parts[0][:-3] if parts[0].endswith(".py") else parts[0]


def imported_names(tree: ast.AST, own: str) -> dict:
    """Local names an import binds to another package's module or object -> where it came from."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != own:
                    names[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] != own:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if a.name != "*"})
    return names


def patches(node: ast.AST, imported: dict) -> str | None:
    """Why `node` changes what another module holds, else None."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SETTERS and node.args:
        origin = imported.get(_root(node.args[0]) or "")
        return f"{node.func.id}() changes {origin}" if origin else None
    else:
        return None
    for target in targets:
        for part in ast.walk(target) if isinstance(target, (ast.Tuple, ast.List)) else [target]:
            if isinstance(part, (ast.Attribute, ast.Subscript)):
                origin = imported.get(_root(part) or "")
                if origin:
                    return f"replaces what {origin} holds"
    return None


def _root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (`a` of `a.b[1].c`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
