"""Node.js test scripts (npm test and the like): per-test results read from the runner's own output (TAP
from node:test, node-tap and tape; the marked lines of mocha, jest, vitest, ava and node:test's spec
reporter: see node_output.py), else counts from its summary line (uvu, dots reporters) and its exit status.
Ids are `file > suite > test` as far as the output names them."""
from __future__ import annotations

import re

from envs.base import Sandbox
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.junit import count
from envs.testrun.node_output import SEP, clean, looks_like_tap, parse_marks, parse_tap, unique

ENV = {"CI": "true", "npm_config_update_notifier": "false"}
"""Run mode, not watch mode (jest, vitest), and no update check against the registry. Colour is left alone
(colour libraries test their own output; NO_COLOR would fail them): clean() strips the codes."""
_SUMMARIES: list[tuple[str, re.Pattern[str]]] = [
    ("passed", re.compile(r"^\s*(\d+) passing\b|^[#ℹ] pass(?:ed)?\s+(\d+)|^\s*Passed:\s+(\d+)|"
                          r"^\s*(\d+) tests? passed", re.M)),
    ("failed", re.compile(r"^\s*(\d+) failing\b|^[#ℹ] fail(?:ed)?\s+(\d+)|^\s*(\d+) tests? failed", re.M)),
    ("skipped", re.compile(r"^\s*(\d+) pending\b|^[#ℹ] skip(?:ped)?\s+(\d+)|^\s*Skipped:\s+(\d+)|"
                           r"^\s*(\d+) tests? skipped", re.M)),
]
_TESTS_LINE = re.compile(r"^\s*Tests:?\s+(.*)$", re.M)
"""jest's `Tests:       1 failed, 3 passed, 4 total` and vitest's ` Tests  2 failed | 10 passed (12)`."""
_UVU_TOTAL = re.compile(r"^\s*Total:\s+(\d+)", re.M)
_JASMINE = re.compile(r"^(\d+) specs?, (\d+) failures?(?:, (\d+) pending specs?)?", re.M)


def parse_node_summary(output: str) -> dict[str, int]:
    """Counts from the last summary line the runner printed (mocha, jest, vitest, uvu, ava, TAP comments)."""
    text = clean(output)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if lines := _TESTS_LINE.findall(text):
        for n, word in re.findall(r"(\d+) (passed|failed|skipped|todo|pending)", lines[-1]):
            counts[{"todo": "skipped", "pending": "skipped"}.get(word, word)] += int(n)
        return counts
    if jasmine := _JASMINE.findall(text):
        specs, failures, pending = (int(v or 0) for v in jasmine[-1])
        return counts | {"passed": specs - failures - pending, "failed": failures, "skipped": pending}
    for key, pattern in _SUMMARIES:
        found = [next(g for g in m if g) for m in pattern.findall(text)]
        counts[key] = int(found[-1]) if found else 0
    if (total := _UVU_TOTAL.findall(text)) and not _SUMMARIES[1][1].search(text):
        counts["failed"] = max(0, int(total[-1]) - counts["passed"] - counts["skipped"])
    return counts


def parse_node_output(output: str) -> list[TestResult]:
    """Per-test results: TAP when the output is TAP, else the marked lines of a spec-like reporter."""
    results = parse_tap(output) if looks_like_tap(output) else []
    return unique(results or parse_marks(output))


def _deselect(results: list[TestResult], deselected: list[Deselection]) -> list[TestResult]:
    """Deselected tests (by id, or a file/suite id and everything under it) still run: the runners share no
    way to leave one out, so their results are recorded as skipped, with the reason."""
    reasons = {d.test: d.reason for d in deselected}
    out = []
    for result in results:
        key = next((t for t in reasons if result.test_id == t or result.test_id.startswith(t + SEP)), None)
        out.append(result if key is None else result.model_copy(
            update={"outcome": "skipped", "message": f"deselected: {reasons[key]}"}))
    return out


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run a Node.js test command and read its results; a non-zero exit that no failing test explains
    (a crash, a lint or size check after the tests) is one error named after the command."""
    result = sandbox.exec(command, timeout=timeout_s, env=ENV | (env or {}))
    results = _deselect(parse_node_output(result.output), deselected)
    counts = count(results)
    summary = parse_node_summary(result.output)
    if sum(summary.values()) > sum(counts.values()) and not looks_like_tap(result.output):  # TAP counts suites
        # The runner names only some tests (vitest's default reporter: those of failing files): per-test
        # results would judge the suite on those alone, so it is judged on the runner's own counts.
        results, counts = [], summary
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=clean(result.output)[-4000:], results=results, counts=counts)
    explained = counts.get("failed", 0) or counts.get("error", 0) or deselected
    if result.exit_code != 0 and not explained and not result.timed_out:
        tail = clean(result.output).strip().splitlines()[-3:]
        error = TestResult(test_id=f"<{command}>", outcome="error",
                           message=f"exit {result.exit_code} with no failing test: " + " | ".join(tail)[-500:])
        run.results = [*results, error] if results else []
        run.counts = count(run.results) if results else counts | {"error": counts.get("error", 0) + 1}
    run.collection_ok = run.ran > 0 or result.exit_code == 0
    return run
