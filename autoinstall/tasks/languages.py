"""What the mutation operators need to know of a language's tree-sitter grammar: one `Grammar` per language.

A language plugs in with one `Grammar` entry in GRAMMARS (the node types of its functions, binary expressions,
literals and statements); the operators in mutation.py only read these tables. Parsers come from
tools/lint.py, the grammars the agent tools already load.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

C_COMPARISON_FLIPS = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "==",
                      "===": "!==", "!==": "==="}
"""Comparisons of the C family (JavaScript's strict ones too): `in`/`instanceof` have no negated operator."""
COMPARISON_FLIPS = {**C_COMPARISON_FLIPS, "in": "not in", "not in": "in", "is": "is not", "is not": "is"}
BOOLEAN_OP_FLIPS = {"and": "or", "or": "and", "&&": "||", "||": "&&"}
NON_COMMUTATIVE = frozenset({"-", "/", "//", "%", "<<", ">>", ">>>", "**", "<", "<=", ">", ">="})
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
    comparisons: dict[str, str] = field(default_factory=lambda: COMPARISON_FLIPS)
    """Comparison operator -> its negation."""
    blocks: frozenset[str] = field(default=frozenset({"block", "statement_list"}))
    """Statement lists a statement may be removed from."""
    skipped: frozenset[str] = field(default=frozenset())
    """Nodes never mutated, nor anything under them (TypeScript's types, Java's annotations)."""
    skip_calls: frozenset[bytes] = field(default=frozenset())
    """Calls never mutated, by their function's text (JavaScript's `require(...)`, `import(...)`)."""
    test_dirs: frozenset[str] = field(default=frozenset())
    """Folders of this language's tests and build output, besides the shared ones (lower case)."""
    test_name: re.Pattern[str] | None = None
    """A file name (as written) that is a test or a build script in this language."""
    package_root: str = ""
    """The folder below which folders are package names (Java's `src/main/java`: `com/example/tools` is no
    test folder): only the folders down to it can make a file a test."""
    implicit_calls: dict[str, frozenset[str]] = field(default_factory=dict)
    """What calls a method without naming it -> the methods (trait methods an operator dispatches to): an
    operator token (`==` -> eq), a node type (`try_expression` -> from) or a name (`format` -> fmt)."""
    doc_tests: bool = False
    """The code blocks of its doc comments run as tests (rustdoc): each is a test function of the code index,
    placed by its block (doctests.py)."""


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
_ORDER = frozenset({"partial_cmp", "cmp", "lt", "le", "gt", "ge"})
_RUST_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "&": "bitand", "|": "bitor",
                   "^": "bitxor", "<<": "shl", ">>": "shr"}
RUST_IMPLICIT_CALLS: dict[str, frozenset[str]] = {
    "==": frozenset({"eq"}), "!=": frozenset({"ne", "eq"}),
    **{op: _ORDER for op in ("<", ">", "<=", ">=")},
    **{op: frozenset({method}) for op, method in _RUST_OPERATORS.items()},
    **{f"{op}=": frozenset({f"{method}_assign"}) for op, method in _RUST_OPERATORS.items()},
    "try_expression": frozenset({"from"}), "index_expression": frozenset({"index", "index_mut"}),
    **{m: frozenset({"eq", "ne", "fmt"}) for m in ("assert_eq", "assert_ne", "debug_assert_eq", "debug_assert_ne")},
    **{m: frozenset({"fmt"}) for m in ("format", "format_args", "print", "println", "eprint", "eprintln", "write",
                                       "writeln", "panic", "to_string")},
    **{m: _ORDER for m in ("sort", "sort_unstable", "binary_search", "max", "min", "clamp")},
    **{m: frozenset({"eq"}) for m in ("contains", "dedup")},
}
"""Rust's operators, formatting macros (`{}` is Display::fmt, `{:?}` Debug::fmt), `?` (From::from) and the std
methods that compare (sort, max, contains): the trait methods they call."""
RUST = Grammar(
    name="rust", suffixes=(".rs",),
    functions=frozenset({"function_item"}), scopes=frozenset({"impl_item", "mod_item", "trait_item"}),
    binary=frozenset({"binary_expression"}), booleans={"true": "false", "false": "true"},
    boolean_nodes=frozenset({"boolean_literal"}), integers=frozenset({"integer_literal"}),
    strings=frozenset({"string_literal"}), negations=frozenset({"unary_expression"}),
    removable=frozenset({"expression_statement"}), guards=frozenset(),
    exits=frozenset({"return_expression"}), empty_statement="", arguments=frozenset({"arguments"}),
    skip_scopes=("tests", "test"), implicit_calls=RUST_IMPLICIT_CALLS, doc_tests=True,
)
_JS_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function",
                           "method_definition", "generator_function_declaration", "generator_function"})
_JS_TEST_DIRS = frozenset({"__tests__", "__mocks__", "__fixtures__", "e2e", "cypress", "node_modules", "dist",
                           "build", "coverage", "vendor", "bower_components"})
_JS_TEST_NAME = re.compile(r"(?i)(\..*|tests?|spec|test[-_.].*|.*[-_.](tests?|spec|e2e)|"
                           r".*\.(stories|story|bench|d|min|config|conf)|gulpfile|gruntfile|jakefile)"
                           r"\.[cm]?[jt]sx?$")
"""Tests (node:test's defaults `test.js`, `test-*.js`, `*-test.js`, `*.test.js`, and `*.spec.ts`),
declarations (`*.d.ts`), minified files, stories and tool configuration (`jest.config.js`, `.eslintrc.js`)."""
_TS_TYPES = frozenset({
    "type_annotation", "type_arguments", "type_parameters", "type_alias_declaration", "interface_declaration",
    "predefined_type", "literal_type", "union_type", "intersection_type", "tuple_type", "generic_type",
    "object_type", "array_type", "function_type", "constructor_type", "conditional_type", "lookup_type",
    "template_literal_type", "index_type_query", "type_query", "parenthesized_type", "readonly_type",
    "optional_type", "rest_type", "infer_type", "type_predicate_annotation", "asserts_annotation",
    "opting_type_annotation", "omitting_type_annotation", "adding_type_annotation", "ambient_declaration"})
"""TypeScript's types: `x: 'a' | 2`, `as 3`, `f<5>()` are never mutated (nor what a type names)."""


def _javascript(name: str, suffixes: tuple[str, ...], skipped: frozenset[str] = frozenset()) -> Grammar:
    """JavaScript, and TypeScript with its types skipped: one tree-sitter grammar family."""
    return Grammar(
        name=name, suffixes=suffixes, functions=_JS_FUNCTIONS,
        scopes=frozenset({"class_declaration", "class", "abstract_class_declaration"}),
        binary=frozenset({"binary_expression"}), booleans={"true": "false", "false": "true"},
        boolean_nodes=frozenset({"true", "false"}), integers=frozenset({"number"}),
        strings=frozenset({"string"}),
        negations=frozenset({"unary_expression"}), removable=frozenset({"expression_statement"}),
        guards=frozenset({"if_statement"}),
        exits=frozenset({"return_statement", "throw_statement", "continue_statement", "break_statement"}),
        empty_statement="", arguments=frozenset({"arguments"}), comparisons=C_COMPARISON_FLIPS,
        blocks=frozenset({"statement_block"}), skipped=frozenset({"decorator", *skipped}),
        skip_calls=frozenset({b"require", b"import"}), test_dirs=_JS_TEST_DIRS, test_name=_JS_TEST_NAME,
    )


JAVASCRIPT = _javascript("javascript", (".js", ".mjs", ".cjs", ".jsx"))
TYPESCRIPT = _javascript("typescript", (".ts", ".mts", ".cts", ".tsx"), _TS_TYPES)
JAVA = Grammar(
    name="java", suffixes=(".java",),
    functions=frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"}),
    scopes=frozenset({"class_declaration", "interface_declaration", "enum_declaration",
                      "record_declaration"}),
    binary=frozenset({"binary_expression"}), booleans={"true": "false", "false": "true"},
    boolean_nodes=frozenset({"true", "false"}), integers=frozenset({"decimal_integer_literal"}),
    strings=frozenset({"string_literal"}), negations=frozenset({"unary_expression"}),
    removable=frozenset({"expression_statement"}), guards=frozenset({"if_statement"}),
    exits=frozenset({"return_statement", "throw_statement", "continue_statement", "break_statement"}),
    empty_statement="", arguments=frozenset({"argument_list"}), comparisons=C_COMPARISON_FLIPS,
    blocks=frozenset({"block", "constructor_body"}), skipped=frozenset({"annotation", "marker_annotation"}),
    test_dirs=frozenset({"testfixtures", "integrationtest", "it", "jmh", "androidtest", "target", "build"}),
    test_name=re.compile(r"(Test\w*|\w+(Test|Tests|TestCase|IT))\.java$"), package_root="java",
)
"""Java: `src/test/` is a test folder (shared), Surefire's default test names (`*Test.java`, `Test*.java`,
`*Tests.java`, `*TestCase.java`) and failsafe's `*IT.java` are tests."""
GRAMMARS: dict[str, Grammar] = {g.name: g for g in (PYTHON, GO, RUST, JAVASCRIPT, TYPESCRIPT, JAVA)}
"""The languages mutation supports; a new one is a Grammar here (and its parser in tools/lint.py)."""


def grammar_for(path: str) -> Grammar | None:
    """The Grammar for a file by its suffix; None when no grammar is registered."""
    return next((g for g in GRAMMARS.values() if path.endswith(g.suffixes)), None)


def is_test_path(path: str) -> bool:
    """Tests, fixtures, docs, examples and build scripts: never mutated, never counted as the fix."""
    parts = path.split("/")
    grammar = grammar_for(path)
    dirs = _TEST_DIRS | grammar.test_dirs if grammar else _TEST_DIRS
    folders = parts[:-1]
    if grammar and grammar.package_root in folders:
        folders = folders[:folders.index(grammar.package_root)]
    own = grammar is not None and grammar.test_name is not None and bool(grammar.test_name.match(parts[-1]))
    return any(p.lower() in dirs for p in folders) or own or bool(_TEST_NAME.match(parts[-1].lower()))


def is_source_path(path: str) -> bool:
    """A non-test file in a language mutation supports."""
    return grammar_for(path) is not None and not is_test_path(path)
