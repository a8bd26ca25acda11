"""Per-test results: parse pytest's JUnit XML, or a custom runner's summary line."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Literal

from pydantic import BaseModel, Field

Outcome = Literal["passed", "failed", "error", "skipped"]


class TestResult(BaseModel):
    __test__ = False
    test_id: str
    """A pytest node id (path::Class::name) where it can be rebuilt from the XML."""
    outcome: Outcome
    duration_s: float = 0.0
    message: str = ""


class TestRun(BaseModel):
    """One run of the test command."""

    __test__ = False
    exit_code: int
    duration_s: float = 0.0
    results: list[TestResult] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """passed/failed/error/skipped, from results or (custom runners) from the summary line."""
    collection_ok: bool = True
    output_tail: str = ""

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def ran(self) -> int:
        return sum(self.counts.get(k, 0) for k in ("passed", "failed", "error"))

    @property
    def pass_rate(self) -> float:
        return self.passed / self.ran if self.ran else 0.0


def _node_id(case: ET.Element) -> str:
    classname, name = case.get("classname", ""), case.get("name", "")
    file = case.get("file")
    module = file.removesuffix(".py").replace("/", ".") if file else ""
    if file and (classname == module or classname.startswith(module + ".")):
        rest = classname[len(module):].lstrip(".")
        return "::".join(p for p in (file, rest.replace(".", "::"), name) if p)
    parts = classname.split(".")
    classes = next((i for i, part in enumerate(parts) if part[:1].isupper()), None)
    if file and classes:
        # The test is inherited: `file` is where it is defined, classname says where it was collected.
        return "::".join(["/".join(parts[:classes]) + ".py", *parts[classes:], name])
    # Without a file attribute: guess the module as the longest prefix starting with test_ or ending in _test.
    for i in range(len(parts), 0, -1):
        if parts[i - 1].startswith("test") or parts[i - 1].endswith("test") or parts[i - 1].endswith("tests"):
            path = "/".join(parts[:i]) + ".py"
            return "::".join(p for p in (path, "::".join(parts[i:]), name) if p)
    return "::".join(p for p in (classname.replace(".", "/"), name) if p)


def parse_junit(xml_text: str) -> list[TestResult]:
    """Test cases from a JUnit XML report (pytest's xunit1 or xunit2)."""
    root = ET.fromstring(xml_text)
    results = []
    for case in root.iter("testcase"):
        outcome: Outcome = "passed"
        message = ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]  # type: ignore[assignment]
                message = ((child.get("message") or "") + "\n" + (child.text or "")).strip()[:2000]
                break
        results.append(TestResult(test_id=_node_id(case), outcome=outcome,
                                  duration_s=float(case.get("time") or 0), message=message))
    return results


def count(results: list[TestResult]) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for r in results:
        counts[r.outcome] += 1
    return counts


_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
_PYTEST_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def parse_summary(output: str) -> dict[str, int]:
    """Counts from a unittest-style ("Ran N tests ... FAILED (failures=1)") or pytest-style summary."""
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        total = int(ran[-1])
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        ends = _UNITTEST_END.findall(output)
        if ends and ends[-1][1]:
            for part in ends[-1][1].split(","):
                key, _, value = part.strip().partition("=")
                mapped = {"failures": "failed", "errors": "error", "skipped": "skipped"}.get(key)
                if mapped and value.isdigit():
                    counts[mapped] += int(value)
        counts["passed"] = max(0, total - counts["failed"] - counts["error"] - counts["skipped"])
        return counts
    lines = [ln for ln in output.splitlines() if _PYTEST_SUMMARY.search(ln)]
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if lines:
        for n, word in _PYTEST_SUMMARY.findall(lines[-1]):
            key = {"errors": "error", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(n)
    return counts
