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
from envs.spec import Deselection, Outcome, TestResult, TestRun
from envs.testrun.junit import count

_CARGO_TEST = re.compile(r"\bcargo\s+(?:\+\S+\s+)?test\b")
_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<src>\S+) \((?P<exe>[^)]+)\)\s*$")
_DOC = re.compile(r"^\s*Doc-tests (?P<crate>\S+)\s*$")
_RESULT = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<status>ok|FAILED|ignored(?:, .*)?|bench:.*)$")
_FAILURE_HEAD = re.compile(r"^---- (?P<name>.+) (?:stdout|stderr) ----$")
_NOT_COMPILED = re.compile(r'^error: could not compile `(?P<crate>[^`]+)`(?: \((?P<what>[^)]*)\))?')
_LISTED = re.compile(r"^(?P<name>.+): test$")
_OUTCOMES: dict[str, Outcome] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}


def _kind(src: str) -> str:
    """What a `Running` line's source path is: lib, bin, test, bench or example."""
    if "tests/" in src.replace("\\", "/"):
        return "test"
    for folder, kind in (("benches/", "bench"), ("examples/", "example"), ("src/bin/", "bin")):
        if folder in src:
            return kind
    return "bin" if src.endswith("main.rs") else "lib"


def _binary(exe: str) -> str:
    """`target/debug/deps/rust_crate-a91d78377caf60ce` -> `rust_crate`."""
    stem = exe.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"-[0-9a-f]{8,}(?:\.exe)?$", "", stem)


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
    """Per-test results from `cargo test`'s output (stdout and stderr merged, in order), failure messages
    from the `---- name stdout ----` sections; targets that did not compile become errors."""
    results: dict[str, TestResult] = {}
    prefix, section, lines = "", "", []
    messages: dict[str, str] = {}

    def close() -> None:
        if section:
            messages[f"{prefix}::{section}"] = "\n".join(lines).strip()[-2000:]

    for line in output.splitlines():
        if m := _RUNNING.match(line):
            close()
            prefix, section = f"{_binary(m['exe'])}-{_kind(m['src'])}", ""
        elif m := _DOC.match(line):
            close()
            prefix, section = f"{m['crate']}-doc", ""
        elif (m := _RESULT.match(line)) and prefix:
            status = m["status"].split(",", 1)[0]
            outcome = _OUTCOMES.get(status, "passed")
            reason = m["status"].split(", ", 1)[1] if ", " in m["status"] else ""
            test_id = f"{prefix}::{m['name']}"
            results[test_id] = TestResult(test_id=test_id, outcome=outcome, message=reason)
        elif m := _FAILURE_HEAD.match(line):
            close()
            section, lines = m["name"], []
        elif section and (line.startswith(("failures:", "test result:")) or line == "failures:"):
            close()
            section = ""
        elif section:
            lines.append(line)
        elif m := _NOT_COMPILED.match(line):
            name = _uncompiled(m["crate"], m["what"] or "lib")
            results[name] = TestResult(test_id=name, outcome="error", message=_compile_errors(output))
    close()
    for test_id, message in messages.items():
        if test_id in results and results[test_id].outcome == "failed":
            results[test_id].message = message
    return list(results.values())


def _uncompiled(crate: str, what: str) -> str:
    """`could not compile `a-b` (test "api")` -> `api-test`; `(lib test)` -> `a_b-lib`: the id prefix its
    tests would have had (artifact names use underscores)."""
    quoted = re.search(r'"([^"]+)"', what)
    return f"{(quoted[1] if quoted else crate).replace('-', '_')}-{what.split(' ', 1)[0]}"


def _compile_errors(output: str) -> str:
    """The `error[...]` blocks of a failed compilation, shortened."""
    found = re.findall(r"^error(?:\[E\d+\])?: .*(?:\n(?!error|warning).*)*", output, re.MULTILINE)
    return "\n".join(found)[-2000:]


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
