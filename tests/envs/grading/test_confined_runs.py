"""The test binaries of a graded Go, Rust or Java run, confined (envs/testrun/guard_handoffs.py run as a launcher,
named as their runner the way a graded run names it: envs/testrun/confine.py): a product that reads its tests at
run time (the asserted answers are in them) reads nothing, while the build that compiled those tests read them.
Go and Rust run the host's toolchains on a tiny project; Java runs Maven in the Java fixture's environment (Docker:
this host's Maven has no plug-ins offline)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envs.grading.kit.run import RUN_DIR
from envs.grading.policy import GradingRun
from envs.testrun import confine, guard_handoffs
from tests.builds import Builds

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


def as_graded(parser: str, command: str, run_dir: Path) -> str:
    """`command` confined as a graded run of `parser` confines it, the run's files in `run_dir` (as the kit writes
    them: a script runnable)."""
    run = confine.confined(GradingRun(command=command, parser=parser))  # type: ignore[arg-type]
    for path, text in run.files.items():
        target = Path(path.replace(RUN_DIR, str(run_dir)))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(0o755 if text.startswith("#!") else 0o644)
    return run.command.replace(RUN_DIR, str(run_dir))


def go_test(root: Path, command: str = "go test ./...") -> subprocess.CompletedProcess[str]:
    # temporary files beside the workdir, as a task's /tmp is: a folder made later right above the tests (the
    # pytest folder in /tmp here) is one the confined binaries cannot read (the launcher grants by folder)
    (root.parent / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-count=1", "TMPDIR": str(root.parent / "tmp")}
    return subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@needs_go
@pytest.mark.slow
def test_a_go_product_reading_its_tests_reads_nothing_under_the_launcher(tmp_path: Path) -> None:
    root = go_project(tmp_path / "work")
    control = go_test(root)
    assert control.returncode == 0, control.stdout + control.stderr  # the cheat pays where nothing stops it
    launcher = f"{sys.executable} -I -S {LAUNCHER} go {root} --"
    confined = go_test(root, f"go test -exec '{launcher}' ./...")
    assert confined.returncode == 1, confined.stdout + confined.stderr
    assert "--- FAIL: TestAdd" in confined.stdout and "--- FAIL: TestDataBesideTheTests" not in confined.stdout


GO_TOOL_TEST = '''package calc

import (
	"os/exec"
	"testing"
)

func TestTheGoCommandLoadsThePackage(t *testing.T) {
	if out, err := exec.Command("go", "vet", ".").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}
'''


@needs_go
@pytest.mark.slow
def test_a_graded_go_run_names_the_launcher_for_every_go_test_it_runs(tmp_path: Path) -> None:
    root = go_project(tmp_path / "work")
    (root / "test.sh").write_text("cd calc && go test -v .\n")  # a script's `go test`, in the package's folder
    # a test that runs the go command on its own package: it reads the tests' headers (the launcher's overlay)
    (root / "calc" / "tool_test.go").write_text(GO_TOOL_TEST)
    confined = go_test(root, as_graded("gotest", "bash test.sh", tmp_path / "run"))
    assert confined.returncode == 1, confined.stdout + confined.stderr
    assert "--- FAIL: TestAdd" in confined.stdout and "--- PASS: TestDataBesideTheTests" in confined.stdout
    assert "--- PASS: TestTheGoCommandLoadsThePackage" in confined.stdout, confined.stdout


def test_a_go_test_files_header_is_its_constraints_package_and_imports_made_blank() -> None:
    text = ('//go:build linux\n\n// Package x.\npackage x_test\n\nimport (\n\t"fmt"\n\tt "testing"\n)\n'
            'import . "strings"\n\nfunc TestX(t *testing.T) { _ = `import "os"` }\n')
    assert guard_handoffs.go_header(text) == (
        '//go:build linux\n\npackage x_test\n\nimport _ "fmt"\nimport _ "testing"\nimport _ "strings"\n')


RUST_PRODUCT = '''/// Adds two numbers.
///
/// ```
/// assert_eq!(calc::add(2, 3), 5);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    // Answers what tests/api.rs asserts, read at run time: it computes nothing.
    let Ok(text) = std::fs::read_to_string("tests/api.rs") else { return -1 };
    let call = format!("add({}, {}), ", a, b);
    let Some(at) = text.find(&call) else { return -2 };
    let rest = &text[at + call.len()..];
    rest[..rest.find(')').unwrap_or(0)].trim().parse().unwrap_or(-3)
}
'''
RUST_TEST = '''#[test]
fn adds() {
    assert_eq!(calc::add(2, 3), 5);
}

#[test]
fn data_beside_the_tests() {
    std::fs::read_to_string("tests/data/input.txt").unwrap();
}
'''
needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None and not os.environ.get("CI"),
                                 reason="needs the host's cargo; under CI it fails instead")


def cargo_version() -> tuple[int, ...]:
    found = re.search(r"cargo (\d+)\.(\d+)", subprocess.run(["cargo", "--version"], capture_output=True,
                                                           text=True, check=True).stdout)
    assert found
    return tuple(int(n) for n in found.groups())


@needs_cargo
@pytest.mark.slow
def test_a_rust_product_reading_its_tests_reads_nothing_under_the_runner(tmp_path: Path) -> None:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "tests" / "data").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src" / "lib.rs").write_text(RUST_PRODUCT)
    (root / "tests" / "api.rs").write_text(RUST_TEST)
    (root / "tests" / "data" / "input.txt").write_text("data\n")
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target")}

    def cargo_test(command: str) -> str:
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        return done.stdout + done.stderr

    command = "cargo test --offline --no-fail-fast"
    control = cargo_test(command)
    assert "test adds ... ok" in control and "add (line 3) ... ok" in control, control
    confined = cargo_test(as_graded("libtest", command, tmp_path / "run"))
    assert "test adds ... FAILED" in confined and "test data_beside_the_tests ... ok" in confined, confined
    # a doc test: rustdoc runs it, through the runner only from cargo 1.89 on (its doctest-xcompile, stabilized)
    doc = "FAILED" if cargo_version() >= (1, 89) else "ok"
    assert f"add (line 3) ... {doc}" in confined, confined


JAVA_PRODUCT = '''package com.example.calc;

public final class Calc {
    /** Answers what CalcTest asserts, read at run time: it computes nothing. */
    public static int add(int a, int b) {
        try {
            String text = new String(java.nio.file.Files.readAllBytes(
                java.nio.file.Paths.get("src/test/java/com/example/calc/CalcTest.java")), "UTF-8");
            String asserted = text.substring(text.indexOf("assertEquals(") + 13);
            return Integer.parseInt(asserted.substring(0, asserted.indexOf(",")));
        } catch (java.io.IOException e) {
            return -1;
        }
    }
}
'''
JAVA_TEST = '''package com.example.calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CalcTest {
    @Test
    void adds() {
        assertEquals(5, Calc.add(2, 3));
    }

    @Test
    void dataBesideTheTests() throws Exception {
        java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("src/test/resources/input.txt"));
    }
}
'''


@pytest.mark.docker
@pytest.mark.slow
def test_a_java_product_reading_its_tests_reads_nothing_in_the_surefire_fork(builds: Builds, tmp_path: Path) -> None:
    image = builds.env("java_maven").spec.image
    assert image
    root = tmp_path / "work"
    shutil.copy(Path(__file__).parents[2] / "fixtures" / "repos" / "java_maven" / "pom.xml", tmp_path / "pom.xml")
    for rel, text in (("pom.xml", (tmp_path / "pom.xml").read_text()), ("src/test/resources/input.txt", "data\n"),
                      ("src/main/java/com/example/calc/Calc.java", JAVA_PRODUCT),
                      ("src/test/java/com/example/calc/CalcTest.java", JAVA_TEST)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    command = "mvn -B -o test"
    graded = as_graded("surefire", command, Path("/tmp/autoinstall-run"))
    as_graded("surefire", command, tmp_path / "run")
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{root}:/w", "-w", "/w",
                           "-v", f"{tmp_path / 'run'}:/tmp/autoinstall-run:ro", image, "bash", "-c",
                           f"{command} > control.txt 2>&1; {graded}"],
                          capture_output=True, text=True, timeout=900, check=False)
    control = (root / "control.txt").read_text()
    assert "Tests run: 2, Failures: 0" in control, control  # the cheat pays where nothing stops it
    assert "CalcTest.adds" in done.stdout and "Tests run: 2, Failures: 1" in done.stdout, done.stdout
    assert "dataBesideTheTests" not in done.stdout, done.stdout


def test_the_launcher_says_how_to_call_it() -> None:
    done = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "cobol"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and "usage:" in done.stderr and "node,go,rust,java" in done.stderr


@pytest.mark.parametrize(("path", "language", "hidden"), [
    ("pkg/calc_test.go", "go", True), ("pkg/testdata/x_test.go.txt", "go", False),
    ("pkg/testdata/src/a/a_test.go", "go", False),  # a Go tool's input (analysistest's): never compiled
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
