"""The test binaries of a graded Go, Rust or Java run, confined (envs/testrun/guard_handoffs.py run as a launcher):
a product that reads its tests at run time (the asserted answers are in them) reads nothing, while the build that
compiled those tests read them. Runs the host's toolchains on a tiny project; no Docker."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envs.testrun import guard_handoffs

LAUNCHER = Path(guard_handoffs.__file__)
GO_PRODUCT = '''package calc

import (
	"os"
	"regexp"
	"strconv"
)

// Add answers what calc_test.go asserts, read at run time: it computes nothing.
func Add(a, b int) int {
	data, err := os.ReadFile("calc_test.go")
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`Add\\(\\d+, \\d+\\) != (\\d+)`).FindSubmatch(data)
	if m == nil {
		return -2
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
'''
GO_TEST = '''package calc

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("wrong")
	}
}

func TestDataBesideTheTests(t *testing.T) {
	if _, err := os.ReadFile("testdata/input.txt"); err != nil {
		t.Fatal(err)
	}
}
'''
needs_go = pytest.mark.skipif(shutil.which("go") is None and not os.environ.get("CI"),
                              reason="needs the host's go; under CI it fails instead")


def go_project(root: Path) -> Path:
    (root / "calc" / "testdata").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/calc\n\ngo 1.21\n")
    (root / "calc" / "calc.go").write_text(GO_PRODUCT)
    (root / "calc" / "calc_test.go").write_text(GO_TEST)
    (root / "calc" / "testdata" / "input.txt").write_text("data\n")
    return root


def go_test(root: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GOFLAGS": "-count=1"}
    return subprocess.run(["go", "test", *flags, "./..."], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@needs_go
def test_a_go_product_reading_its_tests_reads_nothing_under_the_launcher(tmp_path: Path) -> None:
    root = go_project(tmp_path / "work")
    control = go_test(root)
    assert control.returncode == 0, control.stdout + control.stderr  # the cheat pays where nothing stops it
    launcher = f"{sys.executable} -I -S {LAUNCHER} go {root} --"
    confined = go_test(root, "-exec", launcher)
    assert confined.returncode == 1, confined.stdout + confined.stderr
    assert "--- FAIL: TestAdd" in confined.stdout and "--- FAIL: TestDataBesideTheTests" not in confined.stdout


def test_the_launcher_says_how_to_call_it() -> None:
    done = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "cobol"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and "usage:" in done.stderr and "node,go,rust,java" in done.stderr


@pytest.mark.parametrize(("path", "language", "hidden"), [
    ("pkg/calc_test.go", "go", True), ("pkg/testdata/x_test.go.txt", "go", False),
    ("crate/tests/api.rs", "rust", True), ("crate/tests/big/main.rs", "rust", True),
    ("crate/tests/ui/fail.rs", "rust", False), ("m/src/test/java/a/CalcTest.java", "java", True),
    ("m/src/test/resources/a/input.java", "java", False), ("m/src/test/resources/a/input.txt", "java", False),
    ("m/src/main/java/a/Calc.java", "java", False), ("test/add.js", "node", True), ("src/add.test.ts", "node", True),
    ("src/add.js", "node", False), ("test/fixtures/data.json", "node", False),
])
def test_what_each_language_hides(tmp_path: Path, path: str, language: str, hidden: bool) -> None:
    file = tmp_path / path
    file.parent.mkdir(parents=True)
    file.write_text("fn helper() {}\n")
    assert guard_handoffs.TEST_SOURCES[language](str(file)) is hidden


def test_a_rust_source_holding_unit_tests_is_hidden(tmp_path: Path) -> None:
    (tmp_path / "lib.rs").write_text("pub fn add() {}\n#[cfg(test)]\nmod tests {}\n")
    (tmp_path / "main.rs").write_text("fn main() {}\n")
    assert guard_handoffs.TEST_SOURCES["rust"](str(tmp_path / "lib.rs"))
    assert not guard_handoffs.TEST_SOURCES["rust"](str(tmp_path / "main.rs"))
