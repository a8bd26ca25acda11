"""The grader's sorting of an agent's change (envs/grading/kit/changes.py), on real trees: what belongs to the
task is dropped whatever form the change takes, product code is taken, and nothing is read through a link."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from autoinstall.ecosystems.go.grading import RULES as GO
from autoinstall.ecosystems.java.grading import RULES as JAVA
from autoinstall.ecosystems.node.grading import RULES as NODE
from autoinstall.ecosystems.python.grading import RULES as PYTHON
from autoinstall.ecosystems.rust.grading import RULES as RUST
from envs.grading.kit import changes
from envs.grading.kit.globs import first_match
from envs.grading.policy import GradingRules

START = {"calc/__init__.py": "", "calc/core.py": "def sub(a, b):\n    return a + b\n", "setup.py": "",
         "tests/test_calc.py": "def test_sub():\n    assert sub(5, 3) == 2\n", "pyproject.toml": "[tool.pytest]\n"}


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def policy(rules: GradingRules) -> changes.Policy:
    return changes.Policy.from_json(rules.model_dump(mode="json"))


def sort(tmp_path: Path, start: dict[str, str], edit, rules: GradingRules = PYTHON) -> dict[str, changes.Change]:
    ours = tree(tmp_path / "start", start)
    theirs = tree(tmp_path / "agent", start)
    edit(theirs)
    return {c.path: c for c in changes.find(str(ours), str(theirs), policy(rules))}


def test_a_fix_to_product_code_is_taken_and_nothing_else_is_listed(tmp_path: Path) -> None:
    found = sort(tmp_path, START, lambda a: (a / "calc/core.py").write_text("def sub(a, b):\n    return a - b\n"))
    assert list(found) == ["calc/core.py"] and found["calc/core.py"].accepted
    assert found["calc/core.py"].content == b"def sub(a, b):\n    return a - b\n"


@pytest.mark.parametrize(("edit", "path", "why"), [
    (lambda a: (a / "conftest.py").write_text("import pytest\n"), "conftest.py", "conftest"),
    (lambda a: (a / "tests/conftest.py").write_text("x = 1\n"), "tests/conftest.py", "tests"),
    (lambda a: (a / "tests/test_calc.py").write_text("def test_sub():\n    pass\n"), "tests/test_calc.py", "tests"),
    (lambda a: (a / "tests/test_calc.py").unlink(), "tests/test_calc.py", "tests"),
    (lambda a: (a / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-p cheat'\n"),
     "pyproject.toml", "pyproject"),
    (lambda a: (a / "pytest.ini").write_text("[pytest]\naddopts = -p cheat\n"), "pytest.ini", "pytest.ini"),
    (lambda a: (a / "pytest.py").write_text("raise SystemExit(0)\n"), "pytest.py", "shadow"),
    (lambda a: (a / "cheat.py").write_text("def pytest_configure(config): pass\n"), "cheat.py", "shadow"),
    (lambda a: (a / "_pytest").mkdir() or (a / "_pytest/__init__.py").write_text(""), "_pytest/__init__.py",
     "shadow"),
    (lambda a: (a / "calc/x.pth").write_text("import cheat\n"), "calc/x.pth", "pth"),
    (lambda a: (a / "sitecustomize.py").write_text("import cheat\n"), "sitecustomize.py", "sitecustomize"),
    (lambda a: (a / "calc.egg-info").mkdir() or (a / "calc.egg-info/entry_points.txt").write_text(
        "[pytest11]\ncheat = calc.cheat\n"), "calc.egg-info/entry_points.txt", "egg-info"),
    (lambda a: (a / "calc/core.py").write_text("import _pytest.reports\ndef sub(a, b):\n    return a + b\n"),
     "calc/core.py", "reaches"),
    (lambda a: (a / "calc/core.py").write_text("open('/logs/verifier/reward.txt', 'w').write('1')\n"),
     "calc/core.py", "reaches"),
    (lambda a: (a / "calc/_speedups.so").write_bytes(b"\x7fELF\0\0"), "calc/_speedups.so", "binary"),
])
def test_what_belongs_to_the_task_is_dropped(tmp_path: Path, edit, path: str, why: str) -> None:
    found = sort(tmp_path, START, edit)
    assert not found[path].accepted, found[path]
    assert found[path].reason


def test_a_link_is_dropped_and_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")

    def edit(agent: Path) -> None:
        (agent / "calc/core.py").unlink()
        (agent / "calc/core.py").symlink_to(secret)
        (agent / "calc/new.py").symlink_to("/etc/passwd")
        os.mkfifo(agent / "calc/pipe.py")

    found = sort(tmp_path, START, edit)
    assert not found["calc/core.py"].accepted and "link" in found["calc/core.py"].reason
    assert not found["calc/new.py"].accepted and found["calc/new.py"].content is None
    assert not found["calc/pipe.py"].accepted  # a FIFO is never opened (opening one would block)


def test_a_new_module_inside_the_project_package_is_taken(tmp_path: Path) -> None:
    found = sort(tmp_path, START, lambda a: (a / "calc/helpers.py").write_text("def two():\n    return 2\n"))
    assert found["calc/helpers.py"].accepted
    nested = sort(tmp_path / "n", START, lambda a: (a / "calc/sub").mkdir() or (a / "calc/sub/m.py").write_text("x=1\n"))
    assert nested["calc/sub/m.py"].accepted


def test_an_added_line_only_counts_when_the_start_lacked_the_text(tmp_path: Path) -> None:
    start = {**START, "calc/cli.py": "import sys\n\ndef main():\n    sys.exit(0)\n"}
    found = sort(tmp_path, start, lambda a: (a / "calc/cli.py").write_text(
        "import sys\n\ndef main():\n    print('hi')\n    sys.exit(0)\n"))
    assert found["calc/cli.py"].accepted


def test_java_classes_outside_the_projects_packages_are_dropped(tmp_path: Path) -> None:
    start = {"pom.xml": "<project/>", "src/main/java/com/acme/Calc.java": "class Calc {}",
             "src/test/java/com/acme/CalcTest.java": "class CalcTest {}"}

    def edit(agent: Path) -> None:
        (agent / "src/main/java/org/junit").mkdir(parents=True)
        (agent / "src/main/java/org/junit/Assert.java").write_text("package org.junit; class Assert {}")
        (agent / "src/main/java/com/acme/Helper.java").write_text("class Helper {}")
        (agent / "src/main/resources/META-INF/services").mkdir(parents=True)
        (agent / "src/main/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener"
         ).write_text("com.acme.Cheat\n")
        (agent / "src/test/java/com/acme/CalcTest.java").write_text("class CalcTest { }")

    found = sort(tmp_path, start, edit, JAVA)
    assert found["src/main/java/com/acme/Helper.java"].accepted
    assert not found["src/main/java/org/junit/Assert.java"].accepted
    assert not found["src/test/java/com/acme/CalcTest.java"].accepted
    assert not any(c.accepted for p, c in found.items() if "META-INF" in p)


def test_node_scripts_configs_and_dependencies_belong_to_the_task(tmp_path: Path) -> None:
    start = {"package.json": '{"scripts": {"test": "mocha"}}', "index.js": "module.exports = 1;\n",
             "test/index.test.js": "it('x', () => {});\n", "node_modules/mocha/bin/mocha": "real"}

    def edit(agent: Path) -> None:
        (agent / "package.json").write_text('{"scripts": {"test": "echo ok 1 - x"}}')
        (agent / ".mocharc.json").write_text('{"require": "cheat.js"}')
        (agent / "node_modules/mocha/bin/mocha").write_text("fake")
        (agent / "index.js").write_text("module.exports = 2;\nprocess.exit(0);\n")

    found = sort(tmp_path, start, edit, NODE)
    assert not found["package.json"].accepted and not found[".mocharc.json"].accepted
    assert "node_modules/mocha/bin/mocha" not in found  # never compared: the task's as built
    assert not found["index.js"].accepted and "process.exit" in found["index.js"].reason


def test_rust_keeps_the_change_around_the_test_module_and_the_start_module(tmp_path: Path) -> None:
    lib = ("pub fn sub(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n"
           "    #[test]\n    fn subs() { assert_eq!(sub(5, 3), 2); }\n}\n")
    start = {"Cargo.toml": "[package]\n", "src/lib.rs": lib}

    def edit(agent: Path) -> None:
        cheat = lib.replace("a + b", "a - b").replace("assert_eq!(sub(5, 3), 2)", "assert!(true)")
        (agent / "src/lib.rs").write_text(cheat)
        (agent / "build.rs").write_text("fn main() {}")

    found = sort(tmp_path, start, edit, RUST)
    change = found["src/lib.rs"]
    assert change.accepted and change.content == lib.replace("a + b", "a - b").encode()
    assert not found["build.rs"].accepted
    only_tests = sort(tmp_path / "t", start, lambda a: (a / "src/lib.rs").write_text(
        lib.replace("assert_eq!(sub(5, 3), 2)", "assert!(true)")), RUST)
    assert not only_tests["src/lib.rs"].accepted


@pytest.mark.parametrize(("path", "pattern"), [("a/b/conftest.py", "**/conftest.py"), ("tests", "**/tests/**"),
                                               ("pkg/tests/x/y.py", "**/tests/**"), ("src/test_x.py", "**/test_*.py")])
def test_patterns_name_paths_at_any_depth(path: str, pattern: str) -> None:
    assert first_match(path, tuple(PYTHON.protected)) == pattern


def test_a_project_in_a_folder_keeps_its_root_files_and_its_own() -> None:
    rules = GradingRules(protected=["Cargo.toml", "**/tests/**"]).in_folder("crates/core")
    assert {"Cargo.toml", "crates/core/Cargo.toml", "**/tests/**"} <= set(rules.protected)


SPELLED = {  # language: (rules, start file, its text, a token spelled with spaces, comments or joined literals)
    "java": (JAVA, "src/main/java/a/A.java", "package a;\nclass A {}\n", "class B { void f() { System\n  . exit(0); } }\n"),
    "java-joined": (JAVA, "src/main/java/a/A.java", "package a;\nclass A {}\n",
                    'class B { String s = "org.ju" + "nit.Assert"; }\n'),
    "rust": (RUST, "src/lib.rs", "pub fn f() {}\n", "pub fn g() { std :: process :: exit(0) }\n"),
    "node": (NODE, "lib/a.js", "module.exports = {};\n", "process /* x */ .exit(0);\n"),
    "go": (GO, "a/a.go", "package a\n", "func f() { os .\n\tExit( 0 ) }\n"),
    "python": (PYTHON, "calc/core.py", "X = 1\n", "import os\nos . _exit(0)\n"),
}


@pytest.mark.parametrize("case", SPELLED.values(), ids=SPELLED.keys())
def test_a_token_spelled_with_spaces_comments_or_joined_literals_is_refused(tmp_path: Path, case) -> None:
    rules, rel, text, added = case
    found = sort(tmp_path, {rel: text, "README": ""}, lambda a: (a / rel).write_text(text + added), rules)
    assert not found[rel].accepted, found[rel].reason


BLIND = {  # language: (rules, file, start text, an equality that ignores the other side, one that looks)
    "java": (JAVA, "src/main/java/a/R.java", "package a;\nclass R {\n  int x;\n}\n",
             "class S {\n  @Override\n  public boolean equals(Object o) {\n    return true;\n  }\n}\n",
             "class S {\n  int x;\n  public boolean equals(Object o) { return o instanceof S && ((S) o).x == x; }\n}\n"),
    "go": (GO, "r/r.go", "package r\n\ntype R struct{ X int }\n",
           "func (r R) Equal(o R) bool {\n\treturn true\n}\n",
           "func (r R) Equal(o R) bool {\n\treturn r.X == o.X\n}\n"),
    "rust": (RUST, "src/lib.rs", "pub struct R(pub i32);\n",
             "impl PartialEq<i32> for R {\n    fn eq(&self, _other: &i32) -> bool {\n        true\n    }\n}\n",
             "impl PartialEq<i32> for R {\n    fn eq(&self, other: &i32) -> bool { self.0 == *other }\n}\n"),
}


BLIND.update({  # the other side named only to be dropped, or compared with itself
    "rust-dropped": (RUST, "src/lib.rs", "pub struct R(pub i32);\n",
                     "impl PartialEq<i32> for R {\n    fn eq(&self, other: &i32) -> bool {\n        let _ = (self, other);\n"
                     "        true\n    }\n}\n",
                     "impl PartialEq<i32> for R {\n    fn eq(&self, other: &i32) -> bool {\n        let a = self.0;\n"
                     "        a == *other\n    }\n}\n"),
    "go-dropped": (GO, "r/r.go", "package r\n\ntype R struct{ X int }\n",
                   "func (r R) Equal(o R) bool {\n\t_ = o\n\treturn true\n}\n",
                   "func (r R) Equal(o R) bool {\n\t_ = r.X\n\treturn r.X == o.X\n}\n"),
    "java-itself": (JAVA, "src/main/java/a/R.java", "package a;\nclass R {\n  int x;\n}\n",
                    "class S {\n  public boolean equals(Object o) { return o == o; }\n}\n",
                    "class S {\n  int x;\n  public boolean equals(Object o) { return o == this; }\n}\n"),
})
BLIND.update({  # a body with nested blocks, and the other side named only to check it against null or its type
    "java-nested": (JAVA, "src/main/java/a/R.java", "package a;\nclass R {\n  int x;\n}\n",
                    "class S {\n  int x;\n  public boolean equals(Object o) {\n    if (o == null || getClass() != "
                    "o.getClass()) {\n      return false;\n    }\n    return true;\n  }\n}\n",
                    "class S {\n  int x;\n  public boolean equals(Object o) {\n    if (o == null || getClass() != "
                    "o.getClass()) {\n      return false;\n    }\n    S s = (S) o;\n    return x == s.x;\n  }\n}\n"),
    "go-nil": (GO, "r/r.go", "package r\n\ntype R struct{ X int }\n",
               "func (r *R) Equal(o *R) bool {\n\tif r.X < 0 {\n\t\treturn false\n\t}\n\treturn o != nil\n}\n",
               "func (r *R) Equal(o *R) bool {\n\tif o == nil {\n\t\treturn false\n\t}\n\treturn r.X == o.X\n}\n"),
    "rust-matches": (RUST, "src/lib.rs", "pub struct R(pub i32);\n",
                     "impl PartialEq for R {\n    fn eq(&self, other: &Self) -> bool {\n        if self.0 < 0 "
                     "{ return false; }\n        matches!(other, Self(..))\n    }\n}\n",
                     "impl PartialEq for R {\n    fn eq(&self, other: &Self) -> bool {\n        if self.0 < 0 "
                     "{ return false; }\n        matches!(other, Self(x) if *x == self.0)\n    }\n}\n"),
})


@pytest.mark.parametrize("case", BLIND.values(), ids=BLIND.keys())
def test_an_equality_that_does_not_look_at_the_other_side_is_refused(tmp_path: Path, case) -> None:
    rules, rel, text, blind, looking = case
    refused = sort(tmp_path / "blind", {rel: text}, lambda a: (a / rel).write_text(text + blind), rules)
    said = refused[rel].reason or ""
    assert not refused[rel].accepted and "answers without looking at what it is compared with" in said, said
    taken = sort(tmp_path / "looking", {rel: text}, lambda a: (a / rel).write_text(text + looking), rules)
    assert taken[rel].accepted, taken[rel].reason


NOT_SOURCE = {  # language: (rules, a file beside the code the tests read, its start text)
    "python": (PYTHON, "calc/__snapshots__/test_calc.ambr", "# name: test_sub\n  2\n"),
    "python-golden": (PYTHON, "calc/data/expected.txt", "2\n"),
    "go": (GO, "a/golden.json", "{\"sum\": 2}\n"),
    "rust": (RUST, "src/snapshots/crate__sub.snap", "---\n2\n"),
    "java": (JAVA, "src/main/resources/expected.properties", "sum=2\n"),
    "node": (NODE, "lib/__snapshots__/index.snap", "exports[`sub 1`] = `2`;\n"),
}


@pytest.mark.parametrize("case", NOT_SOURCE.values(), ids=NOT_SOURCE.keys())
def test_a_snapshot_or_golden_file_beside_the_code_is_the_tasks(tmp_path: Path, case) -> None:
    rules, rel, text = case
    edited = sort(tmp_path / "edit", {rel: text}, lambda a: (a / rel).write_text("8\n"), rules)
    assert not edited[rel].accepted and "not a source file" in edited[rel].reason
    deleted = sort(tmp_path / "delete", {rel: text}, lambda a: (a / rel).unlink(), rules)
    assert not deleted[rel].accepted
    added = sort(tmp_path / "add", {}, lambda a: (a / rel).parent.mkdir(parents=True, exist_ok=True)
                 or (a / rel).write_text("8\n"), rules)
    assert not added[rel].accepted
