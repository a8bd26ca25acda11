"""The grader's lexers never take live code for a comment (envs/grading/kit/scanners.py; spelling.py
`in_every_reading`), checked against tree-sitter's grammars on snippets strung together from the pieces that
mislead lexers (JavaScript: comment markers inside strings, templates, regular expressions and JSX; `of`,
`await` and `yield`; HTML-like comments; divisions after every kind of operand. Rust: nested comments, raw
strings, lifetimes and chars. Java and Go: chars, text blocks, raw strings): wherever tree-sitter parses a
snippet without an error, every character the screens drop as a comment lies in one of its comments. Seeded:
the same snippets every run. (bench/lexer_soundness.py checks real files against acorn and go/scanner.)"""
from __future__ import annotations

import random

import pytest
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_rust
from tree_sitter import Language, Node, Parser

from envs.grading.kit import scanners, spelling

JS_PIECES = ("x", "y", "1", " ", "\n", "/", "/*", "*/", "//", '"', "'", "`", "${", "}", "{", "(", ")", "[", "]", ";",
             "=", "+", "if", "return", "of", "await", "yield", "<p>", "</p>", "<", ">", "!", "?", ":", ",", ".", "\\",
             "a", "=>", '"/*"', "'//'", "`/*`", "/x/", "/[/*]/", "process", "const z = ", "function f() {",
             "class K {", "<!--", "-->", "`${", "}`", "`a${x}b`", "`${`/*`}`", "{a: 1}", "x!", "#!")
LANGUAGES = {  # our lexer's name: (tree-sitter's grammar, the pieces, how many snippets, how many must parse)
    "js": (tree_sitter_javascript, JS_PIECES, 30_000, 1_500),
    "rust": (tree_sitter_rust, ("x", "'a", "'a'", "'\"'", 'b"', 'r#"', '"#', 'r"', '"', "/*", "*/", "//", "\n", " ",
                                "{", "}", "(", ")", ";", "fn f() {", "let a = ", "'static", "<", ">", "&",
                                "#[doc = ", "]", '"/*"', "'/'", 'r#"/*"#', "b'\"'", "/// d", "//!", "1", ",", "::",
                                "\\", "'\\''", "fn g<'a>(x: &'a str) {", "/* /* */", '/* /* */ " */'), 20_000, 1_000),
    "java": (tree_sitter_java, ("x", '"', "'", '"""\n', '"""', "/*", "*/", "//", "\n", " ", "{", "}", "(", ")", ";",
                                "class K {", "int a = ", "'\"'", '"/*"', "'/'", '"//"', "1", "+", "@A", "<T>",
                                "char c = ", "'\\''", '"\\""', "String s = "), 20_000, 400),
    "go": (tree_sitter_go, ("x", '"', "'", "`", "/*", "*/", "//", "\n", " ", "{", "}", "(", ")", ";", "func f() {",
                            "a := ", "'\"'", '"/*"', "'/'", "`//`", "1", "+", "'\\''", '"\\""', "var s = ", "`/*`"),
           20_000, 600),
}
WRAPPED = {"rust": ("fn m() {\n", "\n}\n"), "java": ("class M { void m() {\n", "\n} }\n"),
           "go": ("package p\n\nfunc m() {\n", "\n}\n")}
"""Where a snippet goes in a file (statements are not items): the text before and after it."""


def _comments(node: Node, found: list) -> None:
    if node.type in ("comment", "html_comment", "hash_bang_line", "line_comment", "block_comment"):
        found.append((node.start_byte, node.end_byte))
    for child in node.children:
        _comments(child, found)


def _multiline_quote(node: Node, source: bytes) -> bool:
    """A quoted string across a line break without a continuation: JavaScript refuses it, tree-sitter's
    recovery does not always (such a snippet is no evidence)."""
    if node.type == "string" and b"\n" in source[node.start_byte:node.end_byte].replace(b"\\\n", b""):
        return True
    return any(_multiline_quote(child, source) for child in node.children)


def _unclosed(text: str, language: str) -> bool:
    """A nested block comment nothing closes (rustc refuses the file; tree-sitter's recovery does not always)."""
    if language != "rust":
        return False
    at = 0
    for kind, part in spelling.regions(text, language):
        if kind == "comment" and part.startswith("/*") and scanners.nested_comment_end(text, at) is None:
            return True
        at += len(part)
    return False


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.slow
def test_no_character_the_screens_drop_as_a_comment_is_code_to_a_parser(language: str) -> None:
    grammar, pieces, snippets, enough = LANGUAGES[language]
    parser = Parser(Language(grammar.language()))
    rng = random.Random(20261206)
    parsed, wrong = 0, []
    for _ in range(snippets):
        before, after = WRAPPED.get(language, ("", ""))
        text = before + "".join(rng.choice(pieces) for _ in range(rng.randint(3, 14))) + after
        source = text.encode()  # ASCII pieces: a byte is a character
        tree = parser.parse(source)
        if tree.root_node.has_error or _multiline_quote(tree.root_node, source) or _unclosed(text, language):
            continue
        parsed += 1
        spans: list = []
        _comments(tree.root_node, spans)
        comment = [any(s <= i < e for s, e in spans) for i in range(len(text))]
        dropped = spelling.in_every_reading(text, language, "comment")
        if any(d and not c for d, c in zip(dropped, comment)):
            wrong.append(text)
    assert parsed > enough, parsed  # enough of them parse for the check to mean something
    assert not wrong, wrong[:5]
