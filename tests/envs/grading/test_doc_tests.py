"""Tests that live in a product file's documentation (envs/grading/kit/doc_tests.py): an agent that edits a Rust
doc test or a Python doctest example instead of fixing the code keeps its fix to the code and loses its edit to
the test, through the grader's sorting of its change (changes.find) on real trees; and a doc test that the
agent's code moved keeps its start name in the verdict."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.python.grading import RULES as PYTHON
from autoinstall.ecosystems.rust.grading import RULES as RUST
from envs.grading.kit import changes, doc_tests, verdict
from tests.envs.grading.test_changes import sort

LIB = ("//! Numbers.\n//!\n//! ```\n//! assert_eq!(demo::add(1, 1), 2);\n//! ```\n\n"
       "/// Adds two numbers.\n///\n/// ```\n/// assert_eq!(demo::add(2, 3), 5);\n/// ```\n"
       "pub fn add(a: u64, b: u64) -> u64 {\n    a - b\n}\n\n/// Subtracts.\n"
       "pub fn sub(a: u64, b: u64) -> u64 {\n    a - b\n}\n")
"""A crate whose `add` is wrong: its doc test (line 9) fails until the code is fixed."""
MOD = ('"""Numbers.\n\n>>> add(1, 1)\n2\n"""\n\n\ndef add(a, b):\n    """Adds.\n\n    >>> add(2, 3)\n    5\n    """\n'
       "    return a - b\n\n\nclass Box:\n    \"\"\"A box, é.\"\"\"\n\n    def size(self):\n"
       '        """Its size.\n\n        >>> Box().size()\n        1\n        """\n        return 0\n')
"""A module whose `add` and `Box.size` are wrong: their doctests fail until the code is fixed."""


def test_rust_an_edited_doc_test_is_the_starts_and_the_fix_is_taken(tmp_path: Path) -> None:
    def cheat(agent: Path) -> None:  # the expected values made the buggy ones, and add fixed after all
        (agent / "src/lib.rs").write_text(LIB.replace("add(2, 3), 5)", "add(2, 3), 0)")
                                          .replace("add(1, 1), 2)", "add(1, 1), 0)")
                                          .replace("    a - b\n}\n\n/// Subtracts.", "    a + b\n}\n\n/// Subtracts."))

    found = sort(tmp_path, {"Cargo.toml": "[package]\n", "src/lib.rs": LIB}, cheat, RUST)
    change = found["src/lib.rs"]
    fixed = LIB.replace("    a - b\n}\n\n/// Subtracts.", "    a + b\n}\n\n/// Subtracts.")
    assert change.accepted and change.content == fixed.encode(), change.content
    assert "doc comments with doc tests" in change.reason
    only_docs = sort(tmp_path / "docs", {"src/lib.rs": LIB},
                     lambda a: (a / "src/lib.rs").write_text(LIB.replace("add(2, 3), 5)", "add(2, 3), 0)")), RUST)
    assert not only_docs["src/lib.rs"].accepted, only_docs["src/lib.rs"]


def test_rust_prose_and_other_items_docs_stay_the_agents(tmp_path: Path) -> None:
    edited = LIB.replace("/// Subtracts.", "/// Subtracts `b` from `a`.").replace("    a - b\n}\n\n/// Sub",
                                                                                 "    a + b\n}\n\n/// Sub")
    found = sort(tmp_path, {"src/lib.rs": LIB}, lambda a: (a / "src/lib.rs").write_text(edited), RUST)
    assert found["src/lib.rs"].accepted and found["src/lib.rs"].content == edited.encode()


def test_rust_a_doc_test_moved_by_the_agents_code_keeps_its_start_name(tmp_path: Path) -> None:
    moved_down = LIB.replace("//! Numbers.\n", "//! Numbers.\n").replace(
        "\n/// Adds two numbers.", "\nconst ONE: u64 = 1;\n\n/// Adds two numbers.").replace(
        "    a - b\n}\n\n/// Subtracts.", "    a + b\n}\n\n/// Subtracts.")
    found = sort(tmp_path, {"src/lib.rs": LIB}, lambda a: (a / "src/lib.rs").write_text(moved_down), RUST)
    moved = changes.moved_doc_tests(list(found.values()), str(tmp_path / "start"))
    assert moved == {"src/lib.rs": {11: 9}}
    output = ("   Doc-tests demo\n\nrunning 2 tests\ntest src/lib.rs - (line 3) ... ok\n"
              "test src/lib.rs - add (line 11) ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured;"
              " 0 filtered out; finished in 0.20s\n")
    selected = ["demo-doc::src/lib.rs - add (line 9)", "demo-doc::src/lib.rs - (line 3)"]
    seen = verdict.judge("libtest", output, "", 0, False, selected, True, moved)
    assert seen.reward == 1.0, seen
    assert verdict.judge("libtest", output, "", 0, False, selected, True).tests[selected[0]] == "missing"


def test_rust_a_doc_id_maps_only_through_the_one_file_it_names() -> None:
    moved = {"crates/a/src/lib.rs": {11: 9}, "crates/b/src/lib.rs": {11: 7}}
    assert doc_tests.start_id("a-doc::src/lib.rs - f (line 11)", moved) == "a-doc::src/lib.rs - f (line 11)"
    assert doc_tests.start_id("a-doc::src/lib.rs - f (line 11) - compile fail", {"src/lib.rs": {11: 9}}) == \
        "a-doc::src/lib.rs - f (line 9) - compile fail"
    assert doc_tests.start_id("a-lib::tests::f", {"src/lib.rs": {11: 9}}) == "a-lib::tests::f"


def test_python_an_edited_doctest_is_the_starts_and_the_fix_is_taken(tmp_path: Path) -> None:
    def cheat(agent: Path) -> None:
        (agent / "calc/core.py").write_text(MOD.replace("    5\n", "    -1\n").replace("        1\n", "        0\n")
                                            .replace(">>> add(1, 1)\n2", ">>> add(1, 1)\n0")
                                            .replace("return a - b", "return a + b"))

    found = sort(tmp_path, {"calc/__init__.py": "", "calc/core.py": MOD}, cheat, PYTHON)
    change = found["calc/core.py"]
    assert change.accepted and change.content == MOD.replace("return a - b", "return a + b").encode(), change.content
    assert "docstrings with doctest examples" in change.reason


def test_python_a_docstring_without_examples_stays_the_agents(tmp_path: Path) -> None:
    edited = MOD.replace("A box, é.", "A box that holds, é.").replace("return 0", "return 1")
    found = sort(tmp_path, {"calc/core.py": MOD}, lambda a: (a / "calc/core.py").write_text(edited), PYTHON)
    assert found["calc/core.py"].accepted and found["calc/core.py"].content == edited.encode()


def test_python_a_file_that_does_not_parse_is_left_to_the_run() -> None:
    assert doc_tests.keep_python_doctests(MOD, "def broken(:\n") == ("def broken(:\n", False)


def test_rust_block_doc_comments_are_kept_too(tmp_path: Path) -> None:
    lib = ("/*! Crate.\n * ```\n * assert!(demo::ok());\n * ```\n */\n\n/**\n * Adds.\n *\n * ```\n"
           " * assert_eq!(demo::add(2, 3), 5);\n * ```\n */\npub fn add(a: u64, b: u64) -> u64 { a - b }\n")
    cheat = lib.replace("5);", "0);").replace("assert!(demo::ok())", "let _ = 1").replace("a - b", "a + b")
    found = sort(tmp_path, {"src/lib.rs": lib}, lambda a: (a / "src/lib.rs").write_text(cheat), RUST)
    assert found["src/lib.rs"].accepted and found["src/lib.rs"].content == lib.replace("a - b", "a + b").encode()


def test_rust_documentation_added_as_an_attribute_is_refused(tmp_path: Path) -> None:
    """A doc comment made a `#[doc = "..."]` attribute holds doc tests the grader does not read: refused."""
    attr = LIB.replace("/// Adds two numbers.\n///\n/// ```\n/// assert_eq!(demo::add(2, 3), 5);\n/// ```\n",
                       '#[doc = "Adds two numbers.\\n\\n```\\nassert_eq!(demo::add(2, 3), 0);\\n```"]\n')
    for cheat in (attr, attr.replace("#[doc = ", "#[cfg_attr(all(), doc = ").replace('```"]', '```")]')):
        found = sort(tmp_path / str(len(cheat)), {"src/lib.rs": LIB},
                     lambda a, c=cheat: (a / "src/lib.rs").write_text(c), RUST)
        assert not found["src/lib.rs"].accepted and "doc=" in found["src/lib.rs"].reason, found["src/lib.rs"]


def test_python_a_second_scope_of_the_same_name_gets_the_starts_docstring_too(tmp_path: Path) -> None:
    second = MOD + '\n\ndef add(a, b):\n    """Adds.\n\n    >>> add(2, 3)\n    -1\n    """\n    return a - b\n'
    found = sort(tmp_path, {"calc/core.py": MOD}, lambda a: (a / "calc/core.py").write_text(second), PYTHON)
    kept = MOD + '\n\ndef add(a, b):\n    """Adds.\n\n    >>> add(2, 3)\n    5\n    """\n    return a - b\n'
    assert found["calc/core.py"].accepted and found["calc/core.py"].content == kept.encode()
