"""The functions of a repository's sources and tests, by tree-sitter, for what a task's difficulty and its
statements need: which function a test id names, which functions a patch changes, and how many calls lie
between a test and a changed function.

The call graph is by name, in every language the mutation grammars know: a function refers to the names
(identifiers, fields, properties) its body holds, and a name leads to every function of that short name.
That over-approximates (a variable named like a function) but needs no type information, so the distance is
a lower bound of the real one.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

import tree_sitter

from autoinstall.tasks import doctests
from autoinstall.tasks.languages import Grammar, grammar_for
from autoinstall.tasks.mutation import functions
from tools.lint import parse

MAX_DISTANCE = 6
"""Calls followed from a test at most; a changed function farther away counts as not found."""
_NAMES = frozenset({"identifier", "field_identifier", "property_identifier", "type_identifier",
                    "shorthand_property_identifier"})
_CALLS_WITH_LABEL = frozenset({"call", "call_expression"})
_OPERATOR_PARENTS = frozenset({"binary_expression", "compound_assignment_expr", "token_tree"})
"""Where an operator token calls a method (Rust's binary and compound assignments, and a macro's arguments:
`assert!(a < b)`); elsewhere `<` is a generic's bracket."""
IMPLICIT = "implicit:"
"""Prefix of a reference to a method called without its name (`a == b` refers to `implicit:eq`): only a method
(a function of an impl or a class) is called so (staticreach.py)."""
_ID_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class Function:
    """One function: where it is, its body's text and the names its body refers to."""

    file: str
    name: str
    """Qualified (Class.method)."""
    start: int
    end: int
    """First and last line (1-based) of the definition."""
    text: str
    refs: frozenset[str]
    label: str = ""
    """An anonymous test function's description (`test("adds numbers", () => ...)`)."""
    test: bool = False
    doc: bool = False
    """A doc test: a code block of a doc comment (doctests.py), `start` its opening fence's line."""

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def key(self) -> str:
        return f"{self.file}::{self.name}"

    def called_as(self) -> set[str]:
        """The names a call of this function shows: its own; a method's as an operator or macro calls it
        (IMPLICIT: Rust's `==` calls every `eq` of an impl); and its class's for a Python method called
        implicitly (`Version(...)` calls `Version.__init__`)."""
        names = {self.short}
        if "." in self.name:
            names.add(IMPLICIT + self.short)
            if self.short.startswith("__"):
                names.add(self.name.rsplit(".", 2)[-2])
        return names


@dataclass
class CodeIndex:
    """Every function of the given sources and tests."""

    functions: list[Function] = field(default_factory=list)
    by_call: dict[str, list[Function]] = field(default_factory=dict)
    """A name a function refers to -> the functions such a reference calls (Function.called_as)."""

    @classmethod
    def build(cls, sources: dict[str, str], tests: dict[str, str]) -> CodeIndex:
        index = cls()
        for files, is_test in ((sources, False), (tests, True)):
            for path in sorted(files):
                index.functions.extend(_functions_of(path, files[path], is_test))
        for function in index.functions:
            for name in function.called_as():
                index.by_call.setdefault(name, []).append(function)
        return index

    def test_function(self, test_id: str) -> Function | None:
        """The test function a test id names: a doc test's block by its file and line (doctests.py), else its
        last token that names a function of a test file (the one in the file the id names most of, when
        several), else an anonymous test whose description ends the id."""
        tests = [f for f in self.functions if f.test]
        if (block := doctests.place(test_id)) is not None:
            path, line = block
            found = [f for f in tests if f.doc and f.start == line and (f.file == path or
                                                                        f.file.endswith(f"/{path}"))]
            return found[0] if len(found) == 1 else None
        for token in reversed(_ID_TOKEN.findall(test_id.split("[", 1)[0])):
            found = [f for f in tests if f.short == token]
            if found:
                return max(found, key=lambda f: _named_by(f.file, test_id))
        last = re.split(r" > | › ", test_id)[-1].strip()
        return next((f for f in tests if f.label and f.label == last), None)

    def changed(self, patch: str) -> list[Function]:
        """The non-test functions whose lines (in the solved tree) a bug or gold patch changes."""
        lines = changed_lines_by_file(patch)
        out = []
        for function in self.functions:
            touched = lines.get(function.file)
            if touched and not function.test and any(function.start <= n <= function.end for n in touched):
                out.append(function)
        # a nested function's lines are its parent's too: keep the innermost
        return [f for f in out if not any(o is not f and o.file == f.file and f.start <= o.start and o.end <= f.end
                                          and (o.start, o.end) != (f.start, f.end) for o in out)]

    def distance(self, start: Function, targets: set[str]) -> int | None:
        """Calls from `start` to the nearest function whose key is in `targets` (1: it refers to one
        directly, by name or through an operator or a class: Function.called_as); None when none is within
        MAX_DISTANCE."""
        seen = {start.key}
        queue = deque([(start, 0)])
        while queue:
            function, hops = queue.popleft()
            if hops >= MAX_DISTANCE:
                continue
            for name in function.refs:
                for callee in self.by_call.get(name, ()):
                    if callee.key in targets:
                        return hops + 1
                    if callee.key not in seen and not callee.test:
                        seen.add(callee.key)
                        queue.append((callee, hops + 1))
        return None


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _named_by(path: str, test_id: str) -> int:
    """How much of `test_id` names the file: its path, else the longest stem (`test_version_req-test::x` is
    tests/test_version_req.rs's, not tests/test_version.rs's); -1 when neither is in it."""
    return len(path) + 1000 if path in test_id else len(_stem(path)) if _stem(path) in test_id else -1


def _functions_of(path: str, text: str, is_test: bool) -> list[Function]:
    """The functions of one file; in a source file, those the grammar keeps out of mutation (Rust's
    `#[test]` functions and test modules) are tests too."""
    grammar = grammar_for(path)
    tree = parse(path, text) if grammar else None
    if grammar is None or tree is None:
        return []
    product = set() if is_test else {body.id for _, body in functions(tree.root_node, grammar, ())}
    out = []
    for name, body in functions(tree.root_node, grammar, (), tests=True):
        node = body.parent or body
        test = is_test or body.id not in product
        out.append(Function(file=path, name=name, start=node.start_point[0] + 1, end=node.end_point[0] + 1,
                            text=(node.text or b"").decode("utf-8", "replace"),
                            refs=frozenset(_refs(body, grammar.implicit_calls)),
                            label=_label(node) if test else "", test=test))
    return out + (_doc_tests(path, text, grammar) if grammar.doc_tests and not is_test else [])


def _doc_tests(path: str, text: str, grammar: Grammar) -> list[Function]:
    """The doc tests of a source file, as test functions: named `ITEM (line N)`, referring to the names of
    their code and to the item their doc comment documents."""
    out = []
    for block in doctests.doc_blocks(text):
        code = block.code.split("\n", 1)[1] if "\n" in block.code else ""
        tree = parse(path, f"fn doc_test() {{\n{code}\n}}\n")
        refs = (_refs(tree.root_node, grammar.implicit_calls) if tree is not None else set()) - {"doc_test"}
        if block.item:
            refs.add(block.item)
        out.append(Function(file=path, name=f"{block.item} (line {block.line})".strip(), start=block.line,
                            end=block.end, text=block.code, refs=frozenset(refs), test=True, doc=True))
    return out


def _refs(body: tree_sitter.Node, implicit: dict[str, frozenset[str]]) -> set[str]:
    """The names `body` refers to, and IMPLICIT + each method an operator, macro or method it holds calls
    without naming it (`implicit`, keyed by an operator token in an expression or a macro's arguments, a
    node type, or a name)."""
    names: set[str] = set()
    stack: list[tuple[tree_sitter.Node, str]] = [(body, "")]
    while stack:
        node, parent = stack.pop()
        key = node.type
        if node.type in _NAMES and node.text:
            key = node.text.decode("utf-8", "replace")
            names.add(key)
        elif not node.is_named and parent not in _OPERATOR_PARENTS:
            key = ""
        if implicit and key in implicit:
            names.update(IMPLICIT + method for method in implicit[key])
        stack.extend((child, node.type) for child in node.children)
    return names


def _label(node: tree_sitter.Node) -> str:
    """The first string argument of the call an anonymous function is passed to (`it("...", () => {})`)."""
    args = node.parent
    call = args.parent if args is not None else None
    if call is None or call.type not in _CALLS_WITH_LABEL or not args.named_children:
        return ""
    first = args.named_children[0]
    if first.type not in ("string", "template_string") or first.id == node.id:
        return ""
    return (first.text or b"").decode("utf-8", "replace").strip("'\"`")


def changed_lines_by_file(patch: str) -> dict[str, set[int]]:
    """path -> the lines of the old side a -p1 patch removes, or inserts after."""
    out: dict[str, set[int]] = {}
    path, line = "", 0
    for text in patch.splitlines():
        if text.startswith("--- "):
            path = text[4:].strip().removeprefix("a/")
        elif text.startswith("+++ "):
            if path == "/dev/null":
                path = text[4:].strip().removeprefix("b/")
        elif match := _HUNK.match(text):
            line = int(match.group(1))
        elif text.startswith("-") and path:
            out.setdefault(path, set()).add(line)
            line += 1
        elif text.startswith("+") and path:
            out.setdefault(path, set()).add(max(line - 1, 1))
        elif text.startswith(" "):
            line += 1
    return out
