"""Mutation operators on JavaScript, TypeScript and Java sources: the expected rewrites, each still parsing;
test files never candidates; TypeScript's types, Java's annotations and imports, `require(...)` and directives
left alone. Pure, no Docker."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import tree_sitter

from autoinstall.tasks.coverage import read_map
from autoinstall.tasks.languages import grammar_for, is_source_path, is_test_path
from autoinstall.tasks.mutation import apply_site, mutations, sites
from autoinstall.tasks.workspace import source_files
from envs.base import ExecResult
from envs.fake import FakeSandbox
from tools.lint import parse

JS = """'use strict'
const path = require('path')

function clamp (value, low, high) {
  'use strict'
  if (value === null) return low
  log('clamping', value)
  return value < low ? low : high - 1
}

const isOn = (flags) => !flags.off && true

module.exports.join = function (a, b) {
  const sep = require('./sep')
  return path.join(a, b) + sep.end('/')
}
"""
TS = """import type { Mode } from './mode'

type Size = 'small' | 'large'

export class Box<T = number> {
  private limit: number = 10

  fits(size: number, mode: Size = 'small', extra: [1, 'x'] = [1, 'x']): boolean {
    const seen: Array<'q' | 2> = []
    if (size > this.limit) { return false }
    const n = size as unknown as 3
    record<string, 5>(size, mode)
    return size - 1 < this.limit && !this.full
  }
}
"""
JAVA = """package com.example;

import java.util.List;
import static java.lang.Math.max;

@Deprecated(since = "9")
public final class Calc {
    private final int base;

    public Calc(int base) {
        this.base = base;
    }

    @SuppressWarnings("unchecked")
    public int divide(int a, int b) {
        @SuppressWarnings("rawtypes") List raw = null;
        if (b == 0) throw new ArithmeticException("zero");
        record(a, b);
        return a / b + base;
    }

    public boolean small(int a) {
        return a <= 10 && !isNegative(a) || true;
    }
}
"""


def rewrites(path: str, text: str) -> dict[str, list[str]]:
    """operator -> the rewritten texts it offers."""
    out: dict[str, list[str]] = {}
    for site in sites(path, text):
        out.setdefault(site.operator, []).append(apply_site(text, site))
    return out


def parses(path: str, text: str) -> bool:
    tree = parse(path, text)
    return tree is not None and not tree.root_node.has_error


def expect(path: str, text: str, wanted: dict[str, list[tuple[str, str]]]) -> None:
    """Each operator offers each (before -> after) rewrite of `text`, and the rewritten file still parses."""
    by_op = rewrites(path, text)
    for op, pairs in wanted.items():
        for before, after in pairs:
            assert before in text, before
            rewritten = text.replace(before, after, 1)
            assert rewritten in by_op.get(op, []), (op, before, after)
            assert parses(path, rewritten), (op, after)


def test_javascript_operators_rewrite_the_expected_spots() -> None:
    expect("lib/clamp.js", JS, {
        "flip_comparison": [("value === null", "value !== null"), ("value < low", "value >= low")],
        "flip_boolean": [("!flags.off && true", "!flags.off || true"),
                         ("!flags.off && true", "flags.off && true"), ("&& true", "&& false")],
        "swap_operands": [("high - 1", "1 - high"), ("value < low", "low < value")],
        "swap_arguments": [("log('clamping', value)", "log(value, 'clamping')"),
                           ("path.join(a, b)", "path.join(b, a)")],
        "off_by_one": [("high - 1", "high - 2"), ("high - 1", "high - 0")],
        "change_constant": [("log('clamping'", "log(''"), ("end('/')", "end('')")],
        "remove_statement": [("  log('clamping', value)\n", "")],
        "remove_early_return": [("  if (value === null) return low\n", "")],
    })


def test_javascript_names_functions_by_what_holds_them_and_leaves_loads_and_directives() -> None:
    found = sites("lib/clamp.js", JS)
    assert {s.function for s in found} == {"clamp", "isOn", "module.exports.join"}
    texts = [apply_site(JS, s) for s in found]
    assert texts and all(t.count("'use strict'") == 2 and "require('./sep')" in t for t in texts)


def test_typescript_operators_rewrite_values_never_types() -> None:
    expect("src/box.ts", TS, {
        "flip_comparison": [("size > this.limit", "size <= this.limit")],
        "flip_boolean": [("return false", "return true"), ("&& !this.full", "&& this.full")],
        "swap_operands": [("size - 1", "1 - size"), ("size - 1 < this.limit", "this.limit < (size - 1)")],
        "swap_arguments": [("(size, mode)", "(mode, size)")],
        "off_by_one": [("size - 1", "size - 2")],
        "remove_statement": [("    record<string, 5>(size, mode)\n", "")],
        "remove_early_return": [("    if (size > this.limit) { return false }\n", "")],
    })
    types = list(_spans(TS, "src/box.ts", ("type_annotation", "type_arguments", "type_parameters",
                                           "literal_type", "predefined_type", "type_alias_declaration",
                                           "import_statement")))
    assert len(types) >= 10
    for site in sites("src/box.ts", TS):
        assert not any(start <= site.start < end for _, start, end in types), site
    for tsx in ("src/view.tsx", "src/box.mts", "src/box.cts"):
        assert sites(tsx, TS), tsx


def test_java_operators_rewrite_the_expected_spots() -> None:
    expect("src/main/java/com/example/Calc.java", JAVA, {
        "flip_comparison": [("b == 0", "b != 0"), ("a <= 10", "a > 10")],
        "flip_boolean": [("|| true", "|| false"), ("&& !isNegative(a) ||", "|| !isNegative(a) ||"),
                         ("!isNegative(a)", "isNegative(a)")],
        "swap_operands": [("a / b", "b / a")],
        "swap_arguments": [("record(a, b)", "record(b, a)")],
        "off_by_one": [("a <= 10", "a <= 11"), ("a <= 10", "a <= 9"), ("b == 0", "b == 1")],
        "change_constant": [('ArithmeticException("zero")', 'ArithmeticException("")'),
                            ("a <= 10", "a <= 0")],
        "remove_statement": [("        record(a, b);\n", ""),
                             ("this.base = base;", "")],  # its only statement: the line stays
        "remove_early_return": [("        if (b == 0) throw new ArithmeticException(\"zero\");\n", "")],
    })
    assert {s.function for s in sites("src/main/java/com/example/Calc.java", JAVA)} == \
        {"Calc.Calc", "Calc.divide", "Calc.small"}


def test_java_annotations_and_imports_are_never_mutated() -> None:
    texts = [apply_site(JAVA, s) for s in sites("src/main/java/com/example/Calc.java", JAVA)]
    assert len(texts) >= 10
    for text in texts:
        assert '@SuppressWarnings("unchecked")' in text and '@SuppressWarnings("rawtypes")' in text
        assert '@Deprecated(since = "9")' in text and "import java.util.List;" in text


@pytest.mark.parametrize(("path", "text"), [("lib/clamp.js", JS), ("src/box.ts", TS),
                                            ("src/main/java/com/example/Calc.java", JAVA)])
def test_every_candidate_parses_and_names_its_file(path: str, text: str) -> None:
    candidates = mutations({path: text})
    assert len(candidates) >= 10
    assert all(c.mutation is not None and c.mutation.file == path for c in candidates)
    texts = [apply_site(text, s) for s in sites(path, text)]
    assert sum(parses(path, t) for t in texts) == len(candidates)  # the ones that break syntax are dropped


@pytest.mark.parametrize("path", [
    "test/index.test.js", "lib/index.test.js", "src/box.spec.ts", "src/view.test.tsx", "src/__tests__/box.ts",
    "test/helpers.js", "tests/box.mjs", "test.js", "lib/test-utils.cjs", "e2e/login.ts", "src/box.d.ts",
    "jest.config.js", "vite.config.mts", ".eslintrc.cjs", "dist/index.js", "node_modules/ms/index.js",
    "src/test/java/com/example/CalcTest.java", "src/main/java/com/example/CalcTest.java",
    "src/main/java/com/example/CalcTests.java", "src/main/java/com/example/CalcIT.java",
    "src/main/java/com/example/TestHelpers.java", "src/testFixtures/java/com/example/Fake.java",
])
def test_test_files_are_never_candidates(path: str) -> None:
    text = JAVA if path.endswith(".java") else TS if ".ts" in path or path.endswith(".mts") else JS
    assert is_test_path(path) and not is_source_path(path)
    assert sites(path, text) == [] and mutations({path: text}) == []


@pytest.mark.parametrize(("path", "grammar"), [
    ("lib/index.js", "javascript"), ("lib/index.mjs", "javascript"), ("lib/index.cjs", "javascript"),
    ("src/App.jsx", "javascript"), ("src/box.ts", "typescript"), ("src/box.mts", "typescript"),
    ("src/box.cts", "typescript"), ("src/App.tsx", "typescript"), ("src/config.ts", "typescript"),
    ("lib/latest.js", "javascript"), ("packages/core/src/index.ts", "typescript"),
    ("src/main/java/com/example/Calc.java", "java"), ("src/main/java/com/example/Latest.java", "java"),
])
def test_sources_get_their_grammar(path: str, grammar: str) -> None:
    found = grammar_for(path)
    assert found is not None and found.name == grammar and is_source_path(path)


def _spans(text: str, path: str, kinds: tuple[str, ...]) -> Iterator[tuple[str, int, int]]:
    """(type, start, end) of every node of those kinds."""
    tree = parse(path, text)
    assert tree is not None
    stack: list[tree_sitter.Node] = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in kinds:
            yield node.type, node.start_byte, node.end_byte
        stack.extend(node.children)



LISTED = "\n".join(["packages/web/lib/index.js", "packages/web/test/index.test.js", "packages/api/src/app.ts",
                    "packages/web/package.json", "tools/build.js", "lib/root.js"])


def test_a_nested_project_mutates_only_its_own_folder() -> None:
    """A `node@packages/web` plan: the other projects of the monorepo are no sources of its tasks."""
    sandbox = FakeSandbox(rules=[("git ls-files", ExecResult(exit_code=0, stdout=LISTED))])
    sandbox.start()
    assert source_files(sandbox, "packages/web") == ["packages/web/lib/index.js"]
    assert source_files(sandbox) == ["lib/root.js", "packages/api/src/app.ts", "packages/web/lib/index.js"]


def test_a_nested_pytest_map_names_files_from_the_checkout() -> None:
    """pytest runs in the project's folder, so its plugin names files from there; candidates name them from
    the checkout's root."""
    sandbox = FakeSandbox()
    sandbox.start()
    sandbox.write_file("/var/tmp/trace.json", b'{"tests/test_core.py::test_a": ["src/core/__init__.py::add"]}')
    nested = read_map(sandbox, "/var/tmp/trace.json", ["tests/test_core.py::test_a"], "packages/core")
    assert nested is not None
    assert nested.tests == {"tests/test_core.py::test_a": ["packages/core/src/core/__init__.py::add"]}
    root = read_map(sandbox, "/var/tmp/trace.json", ["tests/test_core.py::test_a"])
    assert root is not None and root.tests["tests/test_core.py::test_a"] == ["src/core/__init__.py::add"]
