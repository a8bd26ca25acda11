"""JUnit XML reports (pytest's xunit1/xunit2, and any runner that writes them) -> per-test results."""
from __future__ import annotations

from envs.grading.kit.parsers import junit
from envs.spec import TestResult
from envs.testrun.convert import models


def parse_junit(xml_text: str) -> list[TestResult]:
    """Test cases from a JUnit XML report (pytest's xunit1 or xunit2)."""
    return models(junit.parse(xml_text))


def count(results: list[TestResult]) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for r in results:
        counts[r.outcome] += 1
    return counts
