"""What the mutation operators need to know of a language's tree-sitter grammar: one `Grammar` per language.

A language plugs in with one `Grammar` entry in GRAMMARS (the node types of its functions, binary expressions,
literals and statements); the operators in mutation.py only read these tables. Parsers come from
tools/lint.py, the grammars the agent tools already load.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

COMPARISON_FLIPS = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "==",
                    "in": "not in", "not in": "in", "is": "is not", "is not": "is"}
BOOLEAN_OP_FLIPS = {"and": "or", "or": "and", "&&": "||", "||": "&&"}
NON_COMMUTATIVE = frozenset({"-", "/", "//", "%", "<<", ">>", "**", "<", "<=", ">", ">="})
"""Operators whose operands, swapped, change the value (comparisons too: `a < b` vs `b < a`)."""
_TEST_DIRS = frozenset({"test", "tests", "testing", "t", "spec", "specs", "bench", "benches", "benchmarks",
                        "examples", "example", "docs", "doc", "fixtures", "testdata", "scripts", "tools"})
_TEST_NAME = re.compile(r"(^test_.*|.*_test|^conftest|^setup|^noxfile|^tasks)\.[a-z]+$|.*_test\.go$")


@dataclass(frozen=True)
class Grammar:
    """Node types of one tree-sitter grammar, as the mutation operators use them."""

    name: str
    suffixes: tuple[str, ...]
    functions: frozenset[str]
    """Definitions whose bodies are mutated."""
    scopes: frozenset[str]
    """Named definitions that qualify a function's name (classes, impls, modules)."""
    binary: frozenset[str]
    """Expressions with an operator token between two operands."""
    booleans: dict[str, str]
    """Literal text -> its opposite (True -> False)."""
    boolean_nodes: frozenset[str]
    integers: frozenset[str]
    strings: frozenset[str]
    negations: frozenset[str]
    """Unary `not x` / `!x` nodes: the operator is dropped."""
    removable: frozenset[str]
    """Statements that may be removed (replaced by `empty_statement`)."""
    guards: frozenset[str]
    """If statements: removed when their body ends in a return or raise (an early return)."""
    exits: frozenset[str]
    """Return and raise statements (what makes an `if` a guard)."""
    empty_statement: str
    arguments: frozenset[str] = field(default=frozenset())
    """Argument lists of calls: their first two positional arguments are swapped."""
    skip_scopes: tuple[str, ...] = field(default=())
    """Names of scopes that hold tests inside source files (Rust's `mod tests`)."""


PYTHON = Grammar(
    name="python", suffixes=(".py",),
    functions=frozenset({"function_definition"}), scopes=frozenset({"class_definition"}),
    binary=frozenset({"comparison_operator", "binary_operator", "boolean_operator"}),
    booleans={"True": "False", "False": "True"}, boolean_nodes=frozenset({"true", "false"}),
    integers=frozenset({"integer"}), strings=frozenset({"string"}), negations=frozenset({"not_operator"}),
    removable=frozenset({"expression_statement"}), guards=frozenset({"if_statement"}),
    exits=frozenset({"return_statement", "raise_statement", "continue_statement", "break_statement"}),
    empty_statement="pass", arguments=frozenset({"argument_list"}),
)
GO = Grammar(
    name="go", suffixes=(".go",),
    functions=frozenset({"function_declaration", "method_declaration"}), scopes=frozenset(),
    binary=frozenset({"binary_expression"}), booleans={"true": "false", "false": "true"},
    boolean_nodes=frozenset({"true", "false"}), integers=frozenset({"int_literal"}),
    strings=frozenset({"interpreted_string_literal"}), negations=frozenset({"unary_expression"}),
    removable=frozenset({"expression_statement"}), guards=frozenset({"if_statement"}),
    exits=frozenset({"return_statement"}), empty_statement="", arguments=frozenset({"argument_list"}),
)
RUST = Grammar(
    name="rust", suffixes=(".rs",),
    functions=frozenset({"function_item"}), scopes=frozenset({"impl_item", "mod_item", "trait_item"}),
    binary=frozenset({"binary_expression"}), booleans={"true": "false", "false": "true"},
    boolean_nodes=frozenset({"boolean_literal"}), integers=frozenset({"integer_literal"}),
    strings=frozenset({"string_literal"}), negations=frozenset({"unary_expression"}),
    removable=frozenset({"expression_statement"}), guards=frozenset(),
    exits=frozenset({"return_expression"}), empty_statement="", arguments=frozenset({"arguments"}),
    skip_scopes=("tests", "test"),
)
GRAMMARS: dict[str, Grammar] = {g.name: g for g in (PYTHON, GO, RUST)}
"""The languages mutation supports; a new one is a Grammar here (and its parser in tools/lint.py)."""


def grammar_for(path: str) -> Grammar | None:
    """The Grammar for a file by its suffix; None when no grammar is registered."""
    return next((g for g in GRAMMARS.values() if path.endswith(g.suffixes)), None)


def is_test_path(path: str) -> bool:
    """Tests, fixtures, docs, examples and build scripts: never mutated, never counted as the fix."""
    parts = path.split("/")
    return any(p.lower() in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.match(parts[-1].lower()))


def is_source_path(path: str) -> bool:
    """A non-test file in a language mutation supports."""
    return grammar_for(path) is not None and not is_test_path(path)
