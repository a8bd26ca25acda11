"""`cargo test` output (stdout and stderr merged, in order) -> per-test results and libtest's own counts.

Test ids are `<binary>-<kind>::<name as libtest prints it>` (see envs/testrun/cargo_runner.py): `<binary>` is
the test executable's name, `<kind>` one of lib, bin, test, bench, example, doc. A target that does not compile
is one `error` result named by the prefix its tests would have had.
"""
from __future__ import annotations

import re

from .results import Result

_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<src>\S+) \((?P<exe>[^)]+)\)\s*$")
_DOC = re.compile(r"^\s*Doc-tests (?P<crate>\S+)\s*$")
_RESULT = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<status>ok|FAILED|ignored(?:, .*)?|bench:.*)$")
_FAILURE_HEAD = re.compile(r"^---- (?P<name>.+) (?:stdout|stderr) ----$")
_NOT_COMPILED = re.compile(r'^error: could not compile `(?P<crate>[^`]+)`(?: \((?P<what>[^)]*)\))?')
_TOTALS = re.compile(r"^test result: (?:ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; "
                     r"(?P<ignored>\d+) ignored;", re.M)
_OUTCOMES = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}


def kind(src: str) -> str:
    """What a `Running` line's source path is: lib, bin, test, bench or example."""
    if "tests/" in src.replace("\\", "/"):
        return "test"
    for folder, name in (("benches/", "bench"), ("examples/", "example"), ("src/bin/", "bin")):
        if folder in src:
            return name
    return "bin" if src.endswith("main.rs") else "lib"


def binary(exe: str) -> str:
    """`target/debug/deps/rust_crate-a91d78377caf60ce` -> `rust_crate`."""
    stem = exe.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"-[0-9a-f]{8,}(?:\.exe)?$", "", stem)


def parse(output: str) -> list:
    """Every result line, in order (a name printed twice is listed twice); failure messages from the
    `---- name stdout ----` sections, whose lines are never read as results; targets that did not compile
    become errors."""
    results: list = []
    prefix, section, lines = "", "", []
    messages: dict = {}

    def close() -> None:
        if section:
            messages[f"{prefix}::{section}"] = "\n".join(lines).strip()[-2000:]

    for line in output.splitlines():
        if m := _FAILURE_HEAD.match(line):
            close()
            section, lines = m["name"], []
        elif section and line.startswith(("failures:", "test result:")):
            close()
            section = ""
        elif section and not _RUNNING.match(line) and not _DOC.match(line):
            lines.append(line)
        elif m := _RUNNING.match(line):
            close()
            prefix, section = f"{binary(m['exe'])}-{kind(m['src'])}", ""
        elif m := _DOC.match(line):
            close()
            prefix, section = f"{m['crate']}-doc", ""
        elif (m := _RESULT.match(line)) and prefix:
            status = m["status"].split(",", 1)[0]
            reason = m["status"].split(", ", 1)[1] if ", " in m["status"] else ""
            results.append(Result(f"{prefix}::{m['name']}", _OUTCOMES.get(status, "passed"), 0.0, reason))
        elif m := _NOT_COMPILED.match(line):
            name = _uncompiled(m["crate"], m["what"] or "lib")
            results.append(Result(name, "error", 0.0, _compile_errors(output)))
    close()
    for result in results:
        if result.outcome == "failed" and result.test_id in messages:
            result.message = messages[result.test_id]
    return results


def totals(output: str) -> dict | None:
    """passed/failed/skipped summed over libtest's `test result:` lines; None when there is none."""
    found = list(_TOTALS.finditer(output))
    if not found:
        return None
    return {"passed": sum(int(m["passed"]) for m in found), "failed": sum(int(m["failed"]) for m in found),
            "skipped": sum(int(m["ignored"]) for m in found)}


def _uncompiled(crate: str, what: str) -> str:
    """`could not compile `a-b` (test "api")` -> `api-test`; `(lib test)` -> `a_b-lib`."""
    quoted = re.search(r'"([^"]+)"', what)
    return f"{(quoted[1] if quoted else crate).replace('-', '_')}-{what.split(' ', 1)[0]}"


def _compile_errors(output: str) -> str:
    found = re.findall(r"^error(?:\[E\d+\])?: .*(?:\n(?!error|warning).*)*", output, re.MULTILINE)
    return "\n".join(found)[-2000:]
