"""The grader's JavaScript lexer never takes live code for a comment (envs/grading/kit/scanners.py; spelling.py
`in_every_reading`), checked against tree-sitter's JavaScript grammar on snippets strung together from the
pieces that mislead lexers (comment markers inside strings, templates, regular expressions and JSX; `of`, `await`
and `yield`; HTML-like comments; divisions after every kind of operand): wherever tree-sitter parses a snippet
without an error, every character the screens drop as a comment lies in one of its comments. Seeded: the same
snippets every run. (bench/lexer_soundness.py checks real files against acorn and go/scanner.)"""
from __future__ import annotations

import random

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from envs.grading.kit import spelling

PIECES = ("x", "y", "1", " ", "\n", "/", "/*", "*/", "//", '"', "'", "`", "${", "}", "{", "(", ")", "[", "]", ";", "=",
          "+", "if", "return", "of", "await", "yield", "<p>", "</p>", "<", ">", "!", "?", ":", ",", ".", "\\", "a",
          "=>", '"/*"', "'//'", "`/*`", "/x/", "/[/*]/", "process", "const z = ", "function f() {", "class K {",
          "<!--", "-->", "`${", "}`", "`a${x}b`", "`${`/*`}`", "{a: 1}", "x!", "#!")
SNIPPETS = 30_000


def _comments(node: Node, found: list) -> None:
    if node.type in ("comment", "html_comment", "hash_bang_line"):
        found.append((node.start_byte, node.end_byte))
    for child in node.children:
        _comments(child, found)


def _multiline_quote(node: Node, source: bytes) -> bool:
    """A quoted string across a line break without a continuation: JavaScript refuses it, tree-sitter's
    recovery does not always (such a snippet is no evidence)."""
    if node.type == "string" and b"\n" in source[node.start_byte:node.end_byte].replace(b"\\\n", b""):
        return True
    return any(_multiline_quote(child, source) for child in node.children)


def test_no_character_the_screens_drop_as_a_comment_is_code_to_a_parser() -> None:
    parser = Parser(Language(tree_sitter_javascript.language()))
    rng = random.Random(20261206)
    parsed, wrong = 0, []
    for _ in range(SNIPPETS):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(3, 14)))
        source = text.encode()  # ASCII pieces: a byte is a character
        tree = parser.parse(source)
        if tree.root_node.has_error or _multiline_quote(tree.root_node, source):
            continue
        parsed += 1
        spans: list = []
        _comments(tree.root_node, spans)
        comment = [any(s <= i < e for s, e in spans) for i in range(len(text))]
        dropped = spelling.in_every_reading(text, "js", "comment")
        if any(d and not c for d, c in zip(dropped, comment)):
            wrong.append(text)
    assert parsed > 1_500, parsed  # enough of them are JavaScript for the check to mean something
    assert not wrong, wrong[:5]
