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

A selection (`select_command`) is at most two runs of the command, so its ids are the whole suite's: every
selected name but the doc tests exactly (`cargo test --tests -- --exact NAME...`), and the doc tests by one
space-free piece of each name (`cargo test --doc -- PIECE...`): rustdoc splits its test-name arguments at
whitespace, so a doc test's whole name (`src/lib.rs - add (line 5)`) never matches itself.
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
_TARGETS = re.compile(r"\s--(?:lib|bins?|tests?|examples?|benches|bench|all-targets|doc)(?=[\s=]|$)")
"""Target options of a command: it already leaves doc tests out (or runs only them, `--doc`)."""
SELECT_CALL = "autoinstall_cargo_select"
"""The shell function a selecting command defines and calls: cargo_test_command's skips are its arguments."""
_DOC_ID = "^[^:]*-doc::"
_DOC_PIECE = ("awk '{ i = index($0, \" - \"); rest = substr($0, i + 3); j = index(rest, \" (line \"); "
              "item = substr(rest, 1, j - 1); if (i > 0 && j > 1 && item !~ / /) { print item; next } "
              "n = split($0, p, \" \"); best = p[1]; for (k = 2; k <= n; k++) "
              "if (length(p[k]) > length(best)) best = p[k]; print best }'")
"""A doc test's name -> the piece rustdoc filters it by: its item's path (`add`, `Version::parse`), else its
longest space-free piece (the file, for a module's or the crate's own docs)."""
_SPLIT_ARGS = ('for a in "$@"; do [ "$a" = --exact ] && continue; args+=("$a"); '
               'if [ -n "$skip" ]; then case "$a" in *" "*) ;; *) dargs+=(--skip "$a");; esac; skip=""; '
               'elif [ "$a" = --skip ]; then skip=1; else dargs+=("$a"); fi; done;')
"""The function's arguments less `--exact`: `args` for the exact run, `dargs` for the doc run (the skips of names
without a space only: rustdoc would split one with a space into filters)."""


_WHITESPACE = re.compile(r"\s")


def _names(deselected: list[Deselection]) -> set[str]:
    """The test names (an id less its `<binary>-<kind>::`) of the deselected tests."""
    return {d.test.split("::", 1)[1] for d in deselected if "::" in d.test}


def cargo_test_command(command: str, deselected: list[Deselection]) -> str:
    """`command` with stderr merged into stdout (cargo's `Running` lines are on stderr) and each deselected
    test as `--skip NAME` after `--`, with `--exact` so a name matches itself only (in every test binary that
    has it: libtest knows no binary). A whole binary (an id without "::") cannot be skipped this way, nor a name
    with a space (a doc test's `src/lib.rs - add (line 5)`): rustdoc splits its arguments at whitespace, so the
    pieces would be filters and no doc test would run; such a test runs and `run` leaves its result out."""
    names = sorted({name for name in _names(deselected) if not _WHITESPACE.search(name)})
    if names:
        skips = " ".join(f"--skip {shlex.quote(n)}" for n in names) + " --exact"
        selecting = command.endswith(SELECT_CALL)  # the selection's runs take the skips (see select_command)
        command = f"{command} {skips}" if selecting or " -- " in f"{command} " else f"{command} -- {skips}"
    return f"{command} 2>&1"


def select_command(command: str, select_file: str, folder: str) -> str:
    """`command` running only the tests the ids in `select_file` name (`<binary>-<kind>::<name>`, one a line), as
    a shell function that runs it at most twice (each in a subshell, the worse exit status kept): the names of
    every kind but `doc` exactly, with `--tests` (unless the command names its targets), and the doc tests by
    one space-free piece of each name, with `--doc`. The function's arguments (cargo_test_command's `--skip
    NAME ... --exact`) follow the filters of both runs, the `--exact` once, and not in the doc run, whose pieces
    match as substrings. A name runs in every binary that has it and a piece may match other doc tests: the
    run may report more than the ids, never fewer. `folder` is unused: cargo needs no plug-in."""
    quoted = shlex.quote(select_file)
    tests = command if _TARGETS.search(command) else _CARGO_TEST.sub(lambda m: f"{m.group(0)} --tests", command,
                                                                     count=1)
    docs = command if re.search(r"\s--doc\b", command) else _CARGO_TEST.sub(lambda m: f"{m.group(0)} --doc",
                                                                             command, count=1)
    body = (f"local -a tests docs args dargs; local a skip='' rc=0; "
            f"mapfile -t tests < <(grep -v '{_DOC_ID}' {quoted} | sed 's/^[^:]*:://' | sort -u); "
            f"mapfile -t docs < <(grep '{_DOC_ID}' {quoted} | sed 's/^[^:]*:://' | {_DOC_PIECE} | sort -u); "
            f"{_SPLIT_ARGS} "
            f"{_run_if_any(tests, 'tests', 'args', exact=True)} {_run_if_any(docs, 'docs', 'dargs', exact=False)} "
            "return $rc")
    return f"{SELECT_CALL}() {{ {body}; }}; {SELECT_CALL}"


def _run_if_any(command: str, array: str, extra: str, *, exact: bool) -> str:
    """`command` in a subshell when the bash array `array` has names: they (then the array `extra`) are
    libtest's filters, after the command's `--`; its failure is kept in `rc`."""
    filters = f'{"--exact " if exact else ""}"${{{array}[@]}}" "${{{extra}[@]}}"'
    filtered = f"{command} {filters}" if " -- " in f"{command} " else f"{command} -- {filters}"
    return f"if [ ${{#{array}[@]}} -gt 0 ]; then ( {filtered} ) || rc=$?; fi;"


def parse_libtest(output: str) -> list[TestResult]:
    """Per-test results from `cargo test`'s output (stdout and stderr merged, in order), failure messages from
    the `---- name stdout ----` sections; targets that did not compile become errors."""
    return last_per_id(libtest.parse(output))


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `cargo test`; collection failed when no test ran and the command did not succeed."""
    result = sandbox.exec(cargo_test_command(command, deselected), timeout=timeout_s, env=env)
    unskipped = {d.test for d in deselected if "::" in d.test and _WHITESPACE.search(d.test.split("::", 1)[1])}
    results = [r for r in parse_libtest(result.output) if r.test_id not in unskipped]
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
    names = _names(deselected)
    return sum(1 for name in listed if name not in names), ""
