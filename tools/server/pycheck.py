"""Python checks with the sandbox's own interpreter: syntax errors and undefined names.

The undefined-name check is a small pyflakes-like subset. It collects every name a scope binds
anywhere (so order, conditional definitions and `del` never cause false positives), then resolves
each load through enclosing function scopes (class scopes are skipped, as Python does), the
module and builtins. A module with a star import is not checked for undefined names.
"""
from __future__ import annotations

import ast
import builtins
from typing import Any

MODULE_NAMES = {"__file__", "__name__", "__doc__", "__builtins__", "__spec__", "__loader__",
                "__package__", "__path__", "__annotations__", "__cached__", "__dict__"}
CLASS_NAMES = {"__module__", "__qualname__", "__class__", "__dict__", "__doc__"}
BUILTINS = set(dir(builtins)) | MODULE_NAMES


def syntax_error(source: str, filename: str = "<file>") -> dict[str, Any] | None:
    """{line, column, message} of the first syntax error, or None when the source compiles."""
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as e:
        return {"line": e.lineno or 1, "column": e.offset or 1, "message": e.msg or "invalid syntax"}
    except ValueError as e:  # e.g. source code string cannot contain null bytes
        return {"line": 1, "column": 1, "message": str(e)}
    return None


class Scope:
    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind, self.parent = kind, parent
        self.bound: set[str] = set(CLASS_NAMES) if kind == "class" else set()
        self.globals: set[str] = set()
        self.uses: list[tuple[str, int, int]] = []


class _Collector(ast.NodeVisitor):
    """One pass: builds the scope tree, recording bindings and loads per scope."""

    def __init__(self) -> None:
        self.module = Scope("module", None)
        self.scope = self.module
        self.scopes = [self.module]
        self.star_import = False
        self.guarded = 0  # inside `try: ... except NameError`, as pyflakes allows

    def _bind(self, name: str) -> None:
        target = self.module if name in self.scope.globals else self.scope
        target.bound.add(name)

    def _push(self, kind: str) -> Scope:
        self.scope = Scope(kind, self.scope)
        self.scopes.append(self.scope)
        return self.scope

    def _pop(self, previous: Scope) -> None:
        self.scope = previous

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and not self.guarded:
            self.scope.uses.append((node.id, node.lineno, node.col_offset + 1))
        else:
            self._bind(node.id)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals.update(node.names)
        self.scope.bound.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.bound.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_import = True
            else:
                self._bind(alias.asname or alias.name)

    def visit_Try(self, node: Any) -> None:
        guards = any(_catches_name_error(h.type) for h in node.handlers)
        self.guarded += guards
        for stmt in node.body:
            self.visit(stmt)
        self.guarded -= guards
        for part in (node.handlers, node.orelse, node.finalbody):
            for stmt in part:
                self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name)
        self.generic_visit(node)

    def _visit_args(self, args: ast.arguments) -> None:
        """Defaults and annotations are evaluated in the enclosing scope."""
        for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)
        every = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for a in every:
            if a.annotation is not None:
                self.visit(a.annotation)

    def _bind_args(self, args: ast.arguments) -> None:
        every = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for a in every:
            self.scope.bound.add(a.arg)

    def _function(self, node: Any) -> None:
        for d in node.decorator_list:
            self.visit(d)
        self._visit_args(node.args)
        if getattr(node, "returns", None) is not None:
            self.visit(node.returns)
        self._bind(node.name)
        outer = self.scope
        inner = self._push("function")
        inner.bound.add("__class__")
        for p in getattr(node, "type_params", []) or []:
            inner.bound.add(p.name)
        self._bind_args(node.args)
        for stmt in node.body:
            self.visit(stmt)
        self._pop(outer)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_args(node.args)
        outer = self.scope
        self._push("function")
        self._bind_args(node.args)
        self.visit(node.body)
        self._pop(outer)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(d)
        self._bind(node.name)
        outer = self.scope
        inner = self._push("class")
        for p in getattr(node, "type_params", []) or []:
            inner.bound.add(p.name)
        for stmt in node.body:
            self.visit(stmt)
        self._pop(outer)

    def _comprehension(self, node: Any) -> None:
        gens = node.generators
        self.visit(gens[0].iter)  # the first iterable is evaluated in the enclosing scope
        outer = self.scope
        self._push("comprehension")
        for i, g in enumerate(gens):
            self.visit(g.target)
            if i:
                self.visit(g.iter)
            for cond in g.ifs:
                self.visit(cond)
        for part in ("elt", "key", "value"):
            if getattr(node, part, None) is not None:
                self.visit(getattr(node, part))
        self._pop(outer)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_NamedExpr(self, node: Any) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        (self.module if node.target.id in scope.globals else scope).bound.add(node.target.id)

    def generic_visit(self, node: ast.AST) -> None:
        kind = type(node).__name__
        if kind in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            self._bind(node.name)
        elif kind == "MatchMapping" and getattr(node, "rest", None):
            self._bind(node.rest)
        elif kind in ("TypeAlias",):
            self._bind(node.name.id)
        super().generic_visit(node)


def _catches_name_error(node: ast.AST | None) -> bool:
    if node is None:
        return True
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(isinstance(n, ast.Name) and n.id in ("NameError", "Exception", "BaseException")
               for n in names)


def _resolve(scope: Scope, name: str, module: Scope) -> bool:
    if name in scope.bound:
        return True
    s = scope.parent
    first = True
    while s is not None:
        # a comprehension directly in a class body: be lenient and let it see the class names
        if (s.kind != "class" or (first and scope.kind == "comprehension")) and name in s.bound:
            return True
        first = False
        s = s.parent
    return name in module.bound or name in BUILTINS


def undefined_names(tree: ast.AST) -> list[dict[str, Any]]:
    """Loads that no enclosing scope, the module or builtins bind; [] when a star import is used."""
    c = _Collector()
    c.visit(tree)
    if c.star_import:
        return []
    out = []
    for scope in c.scopes:
        for name, line, col in scope.uses:
            if not _resolve(scope, name, c.module):
                out.append({"line": line, "column": col, "code": "F821",
                            "message": "undefined name %r" % name})
    out.sort(key=lambda d: (d["line"], d["column"]))
    return out


def check_source(source: str, filename: str) -> list[dict[str, Any]]:
    """Diagnostics for one Python file: its syntax error, or else its undefined names."""
    err = syntax_error(source, filename)
    if err is not None:
        return [dict(err, code="E999", message="SyntaxError: " + err["message"])]
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return undefined_names(tree)
