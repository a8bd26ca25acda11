"""`cargo test`: libtest's plain output -> per-test results, deselections as `--skip NAME --exact`, and
`cargo test -- --list` counts.

Test ids are `<binary>-<kind>::<name as libtest prints it>`: `<binary>` is the test executable's name
(`target/debug/deps/<binary>-<hash>` in cargo's `Running` line: the library's crate name for unit tests, the
file stem for `tests/<x>.rs`), `<kind>` tells them apart: `lib` (unit tests of src/lib.rs), `bin` (src/main.rs,
src/bin/), `test` (integration tests under tests/), `bench`, `example`, and `doc` (doc tests, named by cargo's
`Doc-tests <crate>` line; their name is rustdoc's `src/lib.rs - item (line N)`). So `rust_crate-lib::tests::adds`,
`integration-test::add_is_commutative`, `rust_crate-doc::src/lib.rs - add (line 5)`. A target that does not
compile is one `error` result named by the prefix its tests would have had (`api-test`), from cargo's
`could not compile` line. A deselected name is skipped in every binary that has it (libtest knows no binary).
"""
from __future__ import annotations

import re
import shlex

from envs.base import Sandbox
from envs.grading.kit.parsers import libtest
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.convert import last_per_id
from envs.testrun.junit import count

_CARGO_TEST = re.compile(r"\bcargo\s+(?:\+\S+\s+)?test\b")
_LISTED = re.compile(r"^(?P<name>.+): test$")


def cargo_test_command(command: str, deselected: list[Deselection]) -> str:
    """`command` with stderr merged into stdout (cargo's `Running` lines are on stderr) and each deselected
    test as `--skip NAME` after `--`, with `--exact` so a name matches itself only (in every test binary that
    has it: libtest knows no binary). A whole binary (an id without "::") cannot be skipped this way."""
    names = sorted({d.test.split("::", 1)[1] for d in deselected if "::" in d.test})
    if names:
        skips = " ".join(f"--skip {shlex.quote(n)}" for n in names) + " --exact"
        command = f"{command} {skips}" if " -- " in f"{command} " else f"{command} -- {skips}"
    return f"{command} 2>&1"


def parse_libtest(output: str) -> list[TestResult]:
    """Per-test results from `cargo test`'s output (stdout and stderr merged, in order), failure messages from
    the `---- name stdout ----` sections; targets that did not compile become errors."""
    return last_per_id(libtest.parse(output))


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `cargo test`; collection failed when no test ran and the command did not succeed."""
    result = sandbox.exec(cargo_test_command(command, deselected), timeout=timeout_s, env=env)
    results = parse_libtest(result.output)
    return TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                   output_tail=result.output[-4000:], results=results, counts=count(results),
                   collection_ok=result.exit_code == 0 or any("::" in r.test_id for r in results))


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """Tests `cargo test -- --list` names (ignored ones included), less the deselected names (matched in
    every binary, as `--skip --exact` does)."""
    listing = cargo_test_command(command, []).removesuffix(" 2>&1")
    listing = f"{listing} --list" if " -- " in f"{listing} " else f"{listing} -- --list"
    result = sandbox.exec(f"{listing} 2>&1", timeout=timeout_s, env=env)
    listed = [m["name"] for line in result.stdout.splitlines() if (m := _LISTED.match(line))]
    if not listed and not result.ok:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"`cargo test -- --list` listed nothing (exit {result.exit_code}): {tail[0][:200]}"
    names = {d.test.split("::", 1)[1] for d in deselected if "::" in d.test}
    return sum(1 for name in listed if name not in names), ""
