"""Procedural bugs: tree-sitter rewrites of one spot in one function of a non-test source file.

Operators (each an edit of one node's bytes): flip_comparison (`<` -> `>=`), flip_boolean (True/False,
and/or, dropped `not`), swap_operands (non-commutative `a - b` -> `b - a`), swap_arguments (`f(a, b)` ->
`f(b, a)`), off_by_one (integer n -> n+1, n-1), change_constant (integer -> 0, string -> empty),
remove_statement (a call or assignment removed, or `pass`), remove_early_return (a guard `if ...: return`
removed). The order is deterministic for a seed, and spreads over functions so the first candidates do
not all come from one function.
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import NamedTuple

import tree_sitter

from autoinstall.tasks.candidate import Candidate, mutation_candidate
from autoinstall.tasks.languages import (
    BOOLEAN_OP_FLIPS,
    NON_COMMUTATIVE,
    Grammar,
    grammar_for,
    is_test_path,
)
from envs.task import MutationInfo
from tools.lint import parse

_DECIMAL = re.compile(rb"^(?!0[xob])([0-9][0-9_]*)([a-z0-9]*)$")  # not hex, octal or binary
MAX_FILE_BYTES = 400_000


class Site(NamedTuple):
    """One possible rewrite: replace bytes [start, end) of the file with `replacement`."""

    operator: str
    start: int
    end: int
    replacement: bytes
    line: int
    function: str


def sites(path: str, text: str) -> list[Site]:
    """Every rewrite the operators offer in the functions of one file (none for tests, unknown languages)."""
    grammar = grammar_for(path)
    if grammar is None or is_test_path(path) or len(text) > MAX_FILE_BYTES:
        return []
    tree = parse(path, text)
    if tree is None:
        return []
    found: list[Site] = []
    for function, body in functions(tree.root_node, grammar, ()):
        found.extend(_body_sites(body, grammar, function))
    return found


def functions(node: tree_sitter.Node, g: Grammar, scope: tuple[str, ...], tests: bool = False
              ) -> Iterator[tuple[str, tree_sitter.Node]]:
    """(qualified name, body) of every function under `node`, not descending into skipped scopes (Rust's
    test modules and `#[test]` functions, unless `tests`)."""
    for child in node.children:
        name = _name(child)
        if child.type in g.scopes:
            if not tests and (name in g.skip_scopes or _is_cfg_test(child)):
                continue
            yield from functions(child, g, (*scope, name) if name else scope, tests)
        elif child.type in g.functions:
            body = child.child_by_field_name("body")
            qualified = (*scope, name or _holder_name(child) or "<anonymous>")
            if body is not None and (tests or not _is_cfg_test(child)):
                yield ".".join(qualified), body
                yield from functions(body, g, qualified, tests)
        else:
            yield from functions(child, g, scope, tests)


def _name(node: tree_sitter.Node) -> str:
    named = node.child_by_field_name("name") or node.child_by_field_name("type")
    return named.text.decode("utf-8", "replace") if named is not None and named.text else ""


def _holder_name(node: tree_sitter.Node) -> str:
    """What an unnamed function is bound to: `const add = (a, b) => ...`, `{add: function () {}}`,
    `exports.add = ...` (a JavaScript variable, key, assignment target or class field)."""
    parent = node.parent
    if parent is None:
        return ""
    holder = next((h for f in ("name", "key", "left", "property") if (h := parent.child_by_field_name(f))
                   is not None and h.id != node.id), None)
    return holder.text.decode("utf-8", "replace") if holder is not None and holder.text else ""


def _is_cfg_test(node: tree_sitter.Node) -> bool:
    """A Rust item marked `#[cfg(test)]` or `#[test]` (the attribute is its previous sibling)."""
    prev = node.prev_named_sibling
    return prev is not None and prev.type == "attribute_item" and prev.text is not None and \
        (b"cfg(test)" in prev.text or prev.text.strip() == b"#[test]")


def _body_sites(body: tree_sitter.Node, g: Grammar, function: str) -> Iterator[Site]:
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type in g.functions:
            continue  # nested functions are visited as functions of their own
        if node.type in g.skipped or _skipped_call(node, g):
            continue  # types, annotations, module loads
        yield from _node_sites(node, g, function)
        stack.extend(reversed(node.children))


def _skipped_call(node: tree_sitter.Node, g: Grammar) -> bool:
    function = node.child_by_field_name("function") if g.skip_calls else None
    return function is not None and function.text in g.skip_calls


def _site(op: str, node: tree_sitter.Node, replacement: bytes, function: str,
          start: int | None = None, end: int | None = None) -> Site:
    return Site(op, node.start_byte if start is None else start, node.end_byte if end is None else end,
                replacement, node.start_point[0] + 1, function)


def _node_sites(node: tree_sitter.Node, g: Grammar, function: str) -> Iterator[Site]:
    text = node.text or b""
    if not node.is_named:
        return  # keyword tokens (TypeScript's `string` and `number` types) are no literals
    if node.type in g.binary:
        yield from _binary_sites(node, g, function)
    elif node.type in g.boolean_nodes and text.decode() in g.booleans:
        yield _site("flip_boolean", node, g.booleans[text.decode()].encode(), function)
    elif node.type in g.negations and node.child_count == 2 and node.children[0].type in ("not", "!"):
        yield _site("flip_boolean", node, node.children[1].text or b"", function)
    elif node.type in g.arguments:
        yield from _argument_sites(node, function)
    elif node.type in g.integers:
        yield from _integer_sites(node, function)
    elif node.type in g.strings:
        yield from _string_sites(node, g, function)
    elif node.type in g.removable and not _is_docstring(node, g) and _in_block(node, g):
        yield _removal("remove_statement", node, g, function)
    elif node.type in g.guards and _is_guard(node, g) and _in_block(node, g):
        yield _removal("remove_early_return", node, g, function)


def _removal(op: str, node: tree_sitter.Node, g: Grammar, function: str) -> Site:
    """Remove a statement: its whole lines when the block keeps another statement, else `pass` (Python)."""
    parent = node.parent
    siblings = [c for c in parent.named_children if c.type != "comment"] if parent is not None else []
    root = node
    while root.parent is not None:
        root = root.parent
    source = root.text or b""
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    line_end = source.find(b"\n", node.end_byte)
    whole_lines = not source[line_start:node.start_byte].strip() and \
        (line_end < 0 or not source[node.end_byte:line_end].strip())
    if len(siblings) > 1 and whole_lines:
        return _site(op, node, b"", function, line_start, len(source) if line_end < 0 else line_end + 1)
    return _site(op, node, g.empty_statement.encode(), function)


def _binary_sites(node: tree_sitter.Node, g: Grammar, function: str) -> Iterator[Site]:
    operands = node.named_children
    operators = [c for c in node.children if not c.is_named]
    for op in operators:
        token = b" ".join((op.text or b"").split()).decode()
        if token in g.comparisons:
            yield _site("flip_comparison", op, g.comparisons[token].encode(), function)
        elif token in BOOLEAN_OP_FLIPS:
            yield _site("flip_boolean", op, BOOLEAN_OP_FLIPS[token].encode(), function)
    if len(operands) == 2 and len(operators) == 1:
        token = (operators[0].text or b"").decode()
        left, right = operands
        if token in NON_COMMUTATIVE and left.text != right.text:
            swapped = b"%s %s %s" % (_operand(right), token.encode(), _operand(left))
            yield _site("swap_operands", node, swapped, function)


_NOT_POSITIONAL = ("keyword_argument", "list_splat", "dictionary_splat", "comment",
                   "parenthesized_expression", "generator_expression", "variadic_argument", "spread_element")


def _argument_sites(node: tree_sitter.Node, function: str) -> Iterator[Site]:
    """Swap the first two positional arguments of a call when they differ."""
    args = node.named_children
    if len(args) < 2 or any(a.type in _NOT_POSITIONAL for a in args[:2]) or args[0].text == args[1].text:
        return
    first, second = args[0], args[1]
    between = (node.text or b"")[first.end_byte - node.start_byte:second.start_byte - node.start_byte]
    yield _site("swap_arguments", first, (second.text or b"") + between + (first.text or b""), function,
                first.start_byte, second.end_byte)


def _operand(node: tree_sitter.Node) -> bytes:
    """An operand's text, parenthesised when it is itself an operation (precedence stays as written)."""
    text = node.text or b""
    return b"(%s)" % text if node.named_child_count > 1 and node.type.endswith(("operator", "expression")) \
        and not node.type.startswith(("call", "parenthesized", "member", "subscript")) else text


def _integer_sites(node: tree_sitter.Node, function: str) -> Iterator[Site]:
    match = _DECIMAL.match(node.text or b"")
    if not match:
        return
    value, suffix = int(match.group(1).replace(b"_", b"")), match.group(2)
    yield _site("off_by_one", node, b"%d%s" % (value + 1, suffix), function)
    if value > 0:
        yield _site("off_by_one", node, b"%d%s" % (value - 1, suffix), function)
    if value > 1:
        yield _site("change_constant", node, b"0%s" % suffix, function)


def _string_sites(node: tree_sitter.Node, g: Grammar, function: str) -> Iterator[Site]:
    text = node.text or b""
    if _is_docstring(node.parent, g) if node.parent is not None else False:
        return
    if any(c.type == "interpolation" for c in node.children) or len(text) < 3 or b"\n" in text:
        return
    quote = text[-1:]
    start = text.find(quote)
    if quote in (b'"', b"'") and 0 <= start < len(text) - 2:
        yield _site("change_constant", node, text[:start + 1] + quote, function)


def _is_docstring(node: tree_sitter.Node, g: Grammar) -> bool:
    """A statement that is a string alone: Python's docstrings, JavaScript's directives (`'use strict'`)."""
    return node.type == "expression_statement" and node.named_child_count == 1 and \
        node.named_children[0].type in g.strings


def _in_block(node: tree_sitter.Node, g: Grammar) -> bool:
    return node.parent is not None and node.parent.type in g.blocks


def _is_guard(node: tree_sitter.Node, g: Grammar) -> bool:
    """An `if` with no else whose body's last statement leaves (return/raise): an early exit."""
    if node.child_by_field_name("alternative") is not None:
        return False
    body = node.child_by_field_name("consequence")
    if body is None:
        return False
    stmts = [body] if body.type in g.exits else body.named_children  # `if (x) return;` without braces
    if stmts and stmts[-1].type == "statement_list":
        stmts = stmts[-1].named_children
    return bool(stmts) and stmts[-1].type in g.exits


def apply_site(text: str, site: Site) -> str:
    data = text.encode()
    return (data[:site.start] + site.replacement + data[site.end:]).decode("utf-8", "replace")


def mutations(files: dict[str, str], seed: int = 0) -> list[Candidate]:
    """Every mutation of `files` (path -> text) that parses again, in the seeded order: functions in a
    shuffled order, one site from each function in turn."""
    by_function: dict[tuple[str, str], list[Site]] = {}
    for path in sorted(files):
        for site in sites(path, files[path]):
            by_function.setdefault((path, site.function), []).append(site)
    rng = random.Random(seed)
    keys = sorted(by_function)
    rng.shuffle(keys)
    queues = []
    for key in keys:
        queue = sorted(by_function[key], key=lambda s: (s.start, s.operator, s.replacement))
        rng.shuffle(queue)
        queues.append((key[0], queue))
    out: list[Candidate] = []
    seen: set[str] = set()
    while any(q for _, q in queues):
        for path, queue in queues:
            if not queue:
                continue
            site = queue.pop(0)
            new = apply_site(files[path], site)
            if new == files[path] or _breaks_syntax(path, new):
                continue
            info = MutationInfo(operator=site.operator, file=path, function=site.function, line=site.line)
            candidate = mutation_candidate(info, files[path], new)
            if candidate.hunk_key not in seen:
                seen.add(candidate.hunk_key)
                out.append(candidate)
    return out


def _breaks_syntax(path: str, text: str) -> bool:
    tree = parse(path, text)
    return tree is None or tree.root_node.has_error
