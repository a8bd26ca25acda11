"""`go test -json` events -> per-test results (ids `import/path::TestName/subtest`) and per-package verdicts."""
from __future__ import annotations

import json

from .results import Result

_OUTCOMES = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def _message(lines: list) -> str:
    kept = "".join(ln for ln in lines if not ln.startswith(("=== RUN", "=== PAUSE", "=== CONT")))
    return kept.strip()[-2000:]


def events(output: str):
    """The JSON events of the output, in order (other lines skipped)."""
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def parse(output: str) -> list:
    """Per-test results. A package that fails with no failing test of its own (build failure, panic in init or
    TestMain, timeout) is one error named by its import path; a test that started and never ended is an error."""
    results: dict = {}
    logs: dict = {}
    package_logs: dict = {}
    build_logs: dict = {}
    failed_packages: dict = {}
    for event in events(output):
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if action == "build-output":
            build_logs.setdefault(event.get("ImportPath", ""), []).append(event.get("Output", ""))
        elif package and test:
            test_id = f"{package}::{test}"
            results.setdefault(test_id, None)
            if action == "output":
                logs.setdefault(test_id, []).append(event.get("Output", ""))
            elif action in _OUTCOMES:
                outcome = _OUTCOMES[action]
                message = "" if outcome == "passed" else _message(logs.get(test_id, []))
                results[test_id] = Result(test_id, outcome, float(event.get("Elapsed") or 0), message)
        elif package and action == "output":
            package_logs.setdefault(package, []).append(event.get("Output", ""))
        elif package and action == "fail":
            failed_packages[package] = event.get("FailedBuild", "")
    out = []
    for test_id, result in results.items():
        if result is None:  # started, never ended: the package died under it
            result = Result(test_id, "error", 0.0, _message(logs.get(test_id, [])))
        out.append(result)
    for package, build in failed_packages.items():
        if not any(r.test_id.startswith(package + "::") and r.outcome in ("failed", "error") for r in out):
            message = _message(build_logs.get(build, []) if build else package_logs.get(package, []))
            out.append(Result(package, "error", 0.0, message or f"{package} failed"))
    return out


def package_verdicts(output: str) -> dict:
    """import path -> "pass" / "fail" / "skip": the package-level end events `go test` itself emits."""
    verdicts = {}
    for event in events(output):
        if event.get("Package") and not event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
            verdicts[event["Package"]] = event["Action"]
    return verdicts
