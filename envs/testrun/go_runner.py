"""`go test -json`: per-test events (subtests included), deselections as -skip and package filters,
`go test -list` counts."""
from __future__ import annotations

import json
import re
import shlex

from envs.base import Sandbox
from envs.spec import Deselection, Outcome, TestResult, TestRun
from envs.testrun.junit import count

_GO_TEST = re.compile(r"\bgo test\b")
_GO_OUTCOMES: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def go_test_command(command: str, deselected: list[Deselection]) -> str:
    """`command` with -json (if missing) and the deselections: tests by one `-skip` regex of top-level test
    names (Go matches it in every package, and a subtest's whole parent test is left out), packages (ids
    without "::") by filtering `go list ./...` in place of `./...`."""
    flags = [] if "-json" in command.split() else ["-json"]
    names = sorted({d.test.split("::", 1)[1].split("/", 1)[0] for d in deselected if "::" in d.test})
    if names:
        flags.append("-skip=" + shlex.quote("^(" + "|".join(re.escape(n) for n in names) + ")$"))
    packages = [d.test for d in deselected if "::" not in d.test]
    if packages and " ./..." in command:
        keep = " ".join(f"-e {shlex.quote(p)}" for p in packages)
        command = command.replace(" ./...", f" $(go list ./... | grep -vxF {keep})", 1)
    return _GO_TEST.sub(lambda m: " ".join([m.group(0), *flags]), command, count=1) if flags else command


def _go_message(lines: list[str]) -> str:
    kept = "".join(ln for ln in lines if not ln.startswith(("=== RUN", "=== PAUSE", "=== CONT")))
    return kept.strip()[-2000:]


def parse_go_test_json(output: str) -> list[TestResult]:
    """Per-test results from `go test -json` events, ids `import/path::TestName/subtest`. A package that
    fails with no failing test of its own (build failure, panic in init or TestMain, timeout) is one error
    named by its import path; a test that started and never ended there is an error too."""
    results: dict[str, TestResult | None] = {}
    logs: dict[str, list[str]] = {}
    package_logs: dict[str, list[str]] = {}
    build_logs: dict[str, list[str]] = {}
    failed_packages: dict[str, str] = {}
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if action == "build-output":
            build_logs.setdefault(event.get("ImportPath", ""), []).append(event.get("Output", ""))
        elif package and test:
            test_id = f"{package}::{test}"
            results.setdefault(test_id, None)
            if action == "output":
                logs.setdefault(test_id, []).append(event.get("Output", ""))
            elif action in _GO_OUTCOMES:
                outcome = _GO_OUTCOMES[action]
                message = "" if outcome == "passed" else _go_message(logs.get(test_id, []))
                results[test_id] = TestResult(test_id=test_id, outcome=outcome, message=message,
                                              duration_s=float(event.get("Elapsed") or 0))
        elif package and action == "output":
            package_logs.setdefault(package, []).append(event.get("Output", ""))
        elif package and action == "fail":
            failed_packages[package] = event.get("FailedBuild", "")
    out = []
    for test_id, result in results.items():
        if result is None:  # started, never ended: the package died under it
            result = TestResult(test_id=test_id, outcome="error", message=_go_message(logs.get(test_id, [])))
        out.append(result)
    for package, build in failed_packages.items():
        if not any(r.test_id.startswith(package + "::") and r.outcome in ("failed", "error") for r in out):
            message = _go_message(build_logs.get(build, []) if build else package_logs.get(package, []))
            out.append(TestResult(test_id=package, outcome="error", message=message or f"{package} failed"))
    return out


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> TestRun:
    """Run a `go test` command with -json; collection failed when no test ran and it did not succeed."""
    result = sandbox.exec(go_test_command(command, deselected), timeout=timeout_s, env=env)
    results = parse_go_test_json(result.stdout)
    return TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                   output_tail=_go_tail(result.stdout, result.stderr), results=results, counts=count(results),
                   collection_ok=result.exit_code == 0 or any("::" in r.test_id for r in results))


def _go_tail(stdout: str, stderr: str) -> str:
    """The readable output: test output lines and package summaries from the events, then stderr."""
    text = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line) if line.startswith("{") else {"Output": line + "\n"}
        except ValueError:
            event = {"Output": line + "\n"}
        text.append(event.get("Output", "") if isinstance(event, dict) else "")
    return ("".join(text) + stderr)[-4000:]


_GO_LISTED = re.compile(r"^(?:Test|Example|Fuzz)\w*$")


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                      env: dict[str, str] | None) -> tuple[int | None, str]:
    """Top-level tests, examples and fuzz targets `go test -list` names, less the deselected ones (by name
    in every package, as `go_test_command`'s -skip; deselected packages wholly)."""
    listing = _GO_TEST.sub("go test -list '^(Test|Example|Fuzz)'", command, count=1)
    result = sandbox.exec(go_test_command(listing, []), timeout=timeout_s, env=env)
    listed = []
    for line in result.stdout.splitlines():
        try:
            event = json.loads(line) if line.startswith("{") else {}
        except ValueError:
            continue
        name = str(event.get("Output", "")).strip()
        if event.get("Action") == "output" and not event.get("Test") and _GO_LISTED.match(name):
            listed.append((event.get("Package", ""), name))
    if not listed and not result.ok:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"`go test -list` listed nothing (exit {result.exit_code}): {tail[0][:200]}"
    names = {d.test.split("::", 1)[1].split("/", 1)[0] for d in deselected if "::" in d.test}
    packages = {d.test for d in deselected if "::" not in d.test}
    return sum(1 for package, name in listed if package not in packages and name not in names), ""
