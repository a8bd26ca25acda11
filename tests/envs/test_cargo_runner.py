"""The `cargo` test runner (libtest's plain output -> per-test results), its deselections and `--list`
counts, and Cargo's cache env. Fast: no Docker, no cargo; the outputs are captured from Debian trixie's
cargo 1.85."""
from __future__ import annotations

import subprocess
from pathlib import Path

from envs.base import ExecResult
from envs.docker.container import DockerSandboxConfig, container_env
from envs.fake import FakeSandbox
from envs.spec import Deselection
from envs.testrun import abilities, collect_count, run_tests
from envs.testrun.cargo_runner import cargo_test_command, parse_libtest

DATA = Path(__file__).parent / "data"
WORKSPACE = (DATA / "cargo_test_workspace.txt").read_text()
"""`cargo test --workspace --no-fail-fast --offline 2>&1` on a workspace: a library with passing, failing,
ignored and offline-network unit tests and a failing doc test; an integration test file; a binary's tests."""
COMPILE_ERROR = (DATA / "cargo_test_compile_error.txt").read_text()
"""The same workspace with an integration test file that does not compile."""
FIXTURE = (DATA / "cargo_test_rust_crate.txt").read_text()
"""tests/fixtures/repos/rust_crate before it had its dependency: unit, ignored, integration and doc tests."""


def test_libtest_output_becomes_ids_per_binary_and_kind() -> None:
    results = parse_libtest(WORKSPACE)
    assert [(r.test_id, r.outcome) for r in results] == [
        ("alpha-lib::tests::bad_one", "failed"),
        ("alpha-lib::tests::later", "skipped"),
        ("alpha-lib::tests::ok_one", "passed"),
        ("alpha-lib::tests::fetches", "failed"),
        ("api-test::nested::deep", "passed"),
        ("api-test::works", "passed"),
        ("beta-bin::tests::runs", "passed"),
        ("alpha-doc::alpha/src/lib.rs - double (line 3)", "failed"),
    ]
    by_id = {r.test_id: r for r in results}
    assert "doubling is off" in by_id["alpha-lib::tests::bad_one"].message
    assert "right: 5" in by_id["alpha-lib::tests::bad_one"].message
    assert "Temporary failure in name resolution" in by_id["alpha-lib::tests::fetches"].message
    assert "doubling" not in by_id["alpha-lib::tests::fetches"].message
    assert "Test executable failed" in by_id["alpha-doc::alpha/src/lib.rs - double (line 3)"].message
    assert by_id["alpha-lib::tests::ok_one"].message == ""


def test_the_fixtures_ignored_reason_and_doc_test() -> None:
    results = {r.test_id: r for r in parse_libtest(FIXTURE)}
    assert sorted(results) == ["integration-test::add_is_commutative", "rust_crate-doc::src/lib.rs - add (line 5)",
                               "rust_crate-lib::tests::adds", "rust_crate-lib::tests::shouts",
                               "rust_crate-lib::tests::slow_sum"]
    assert (results["rust_crate-lib::tests::slow_sum"].outcome, results["rust_crate-lib::tests::slow_sum"].message) \
        == ("skipped", "slow")


def test_a_target_that_does_not_compile_is_one_error_and_collection_failed() -> None:
    results = parse_libtest(COMPILE_ERROR)
    assert [(r.test_id, r.outcome) for r in results] == [("api-test", "error")]
    assert "cannot find value `y`" in results[0].message
    box = FakeSandbox(rules=[("cargo test", ExecResult(exit_code=101, stdout=COMPILE_ERROR))]).start()
    run = run_tests(box, "cargo test --no-fail-fast --offline", "cargo", [], 60)
    assert not run.collection_ok and run.counts["error"] == 1


def test_deselections_are_exact_skips_after_the_double_dash() -> None:
    command = "cargo test --workspace --no-fail-fast --offline"
    assert cargo_test_command(command, []) == f"{command} 2>&1"
    deselected = [Deselection(test="alpha-lib::tests::fetches", reason="r"),
                  Deselection(test="alpha-doc::alpha/src/lib.rs - double (line 3)", reason="r"),
                  Deselection(test="api-test", reason="a whole binary: not skippable by name")]
    assert cargo_test_command(command, deselected) == f"{command} -- --skip tests::fetches --exact 2>&1"
    assert cargo_test_command("cargo test -- --test-threads 1", deselected[:1]) == (
        "cargo test -- --test-threads 1 --skip tests::fetches --exact 2>&1")


def test_a_deselected_doc_test_runs_and_its_result_is_left_out() -> None:
    """rustdoc splits its arguments at whitespace: a doc test's name given to --skip would become filters that
    match no doc test, so every doc test would vanish from the run. It runs instead, and its result is dropped."""
    doc = Deselection(test="alpha-doc::alpha/src/lib.rs - double (line 3)", reason="r")
    box = FakeSandbox(rules=[("cargo test", ExecResult(exit_code=101, stdout=WORKSPACE))]).start()
    whole = run_tests(box, "cargo test --workspace --no-fail-fast --offline", "cargo", [], 60)
    run = run_tests(box, "cargo test --workspace --no-fail-fast --offline", "cargo", [doc], 60)
    assert doc.test in {r.test_id for r in whole.results} and doc.test not in {r.test_id for r in run.results}
    assert run.counts["failed"] == whole.counts["failed"] - 1 and "--skip" not in box.commands()[-1]


def test_run_and_collect_with_the_cargo_runner() -> None:
    listing = ("     Running unittests src/lib.rs (target/debug/deps/alpha-1)\ntests::ok_one: test\n"
               "tests::fetches: test\n\n2 tests, 0 benchmarks\n   Doc-tests alpha\n"
               "alpha/src/lib.rs - double (line 3): test\n\n1 test, 0 benchmarks\n")
    box = FakeSandbox(rules=[("--list", ExecResult(exit_code=0, stdout=listing)),
                             ("cargo test", ExecResult(exit_code=101, stdout=WORKSPACE))]).start()
    run = run_tests(box, "cargo test --workspace --no-fail-fast --offline", "cargo", [], 60)
    assert run.collection_ok and (run.passed, run.counts["failed"], run.counts["skipped"]) == (4, 3, 1)
    deselected = [Deselection(test="alpha-lib::tests::fetches", reason="r")]
    assert collect_count(box, "cargo test --offline", [], 60, runner="cargo") == (3, "")
    assert collect_count(box, "cargo test --offline", deselected, 60, runner="cargo") == (2, "")
    assert box.commands()[-1] == "cargo test --offline -- --list 2>&1"
    broken = FakeSandbox(rules=[("cargo test", ExecResult(exit_code=101, stdout=COMPILE_ERROR))]).start()
    count, note = collect_count(broken, "cargo test --offline", [], 60, runner="cargo")
    assert count is None and "listed nothing (exit 101)" in note


def test_cargo_registry_cache_is_under_cache_in_both_modes(tmp_path: Path) -> None:
    for mode in ("layered", "shared"):
        env = container_env(DockerSandboxConfig(cache_dir=tmp_path, cache_mode=mode, ca_bundle=None))
        assert env["CARGO_HOME"] == "/cache/cargo"
    assert "CARGO_HOME" not in container_env(DockerSandboxConfig(ca_bundle=None))


SHOW = "cargo() { printf '%s|' \"$@\"; echo; [ \"$2\" != --tests ]; }; "
"""A `cargo` that prints its arguments (one line a run, `|` after each) and fails its `--tests` run."""
SELECTED = ["rust_crate-lib::tests::adds", "integration-test::add_is_commutative", "rust_crate-lib::tests::adds",
            "rust_crate-doc::src/lib.rs - add (line 5)", "rust_crate-doc::src/lib.rs - Version::parse (line 40)",
            "rust_crate-doc::src/lib.rs - (line 3)"]


def runs_of(command: str, ids: list[str], tmp_path: Path, deselected: list[Deselection] | None = None
            ) -> tuple[list[list[str]], int]:
    """The selecting command as the runner runs it (skips, stderr merged) under bash with SHOW's cargo: each
    run's arguments, and the exit status."""
    select_file = tmp_path / "select.txt"
    select_file.write_text("".join(f"{i}\n" for i in ids))
    select = abilities("cargo").select
    assert select is not None
    full = cargo_test_command(select.command(command, str(select_file), "/unused"), deselected or [])
    shown = subprocess.run(["bash", "-c", SHOW + full], capture_output=True, text=True, check=False)
    return [line.split("|")[:-1] for line in shown.stdout.splitlines()], shown.returncode


def test_a_selection_is_one_exact_run_of_its_names_and_one_doc_run_by_a_piece_of_each(tmp_path: Path) -> None:
    """Every name but doc tests after one `--exact` (`--tests`: no doc test compiles), each once; doc tests by
    their item's path, or the longest space-free piece of an item-less name (rustdoc splits names at spaces);
    the deselections' skips follow both (only names without a space: a doc test's runs, its result dropped by
    `run`), `--exact` still once,
    and the failing first run's status is kept though the second ran."""
    deselected = [Deselection(test="x-lib::slow", reason="network"),
                  Deselection(test="rust_crate-doc::src/lib.rs - fetch (line 9)", reason="network")]
    runs, status = runs_of("cargo test --offline", SELECTED, tmp_path, deselected)
    assert runs == [
        ["test", "--tests", "--offline", "--", "--exact", "add_is_commutative", "tests::adds",
         "--skip", "slow"],
        ["test", "--doc", "--offline", "--", "Version::parse", "add", "src/lib.rs", "--skip", "slow"]]
    assert status != 0
    assert sum(arg == "--exact" for run in runs for arg in run) == 1


def test_a_selection_keeps_the_commands_own_arguments_and_runs_only_what_it_has(tmp_path: Path) -> None:
    runs, status = runs_of("cargo test -- --test-threads=1", SELECTED[3:4], tmp_path)
    assert (runs, status) == ([["test", "--doc", "--", "--test-threads=1", "add"]], 0)
    (tmp_path / "crate").mkdir()  # a command that names its targets is given no `--tests`
    runs, _ = runs_of(f"cd {tmp_path}/crate && cargo +1.85 test --lib", SELECTED[:1], tmp_path)
    assert runs == [["+1.85", "test", "--lib", "--", "--exact", "tests::adds"]]
