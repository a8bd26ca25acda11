"""The grader kit's stdlib results (envs/grading/kit/parsers/) as the record's TestResult models."""
from __future__ import annotations

from collections.abc import Iterable

from envs.grading.kit.parsers.results import Result
from envs.spec import TestResult


def models(results: Iterable[Result]) -> list[TestResult]:
    return [TestResult(test_id=r.test_id, outcome=r.outcome, duration_s=r.duration_s,  # type: ignore[arg-type]
                       message=r.message) for r in results]


def last_per_id(results: Iterable[Result]) -> list[TestResult]:
    """One result per id, the last one printed, in the order ids first appeared."""
    by_id: dict[str, Result] = {}
    for r in results:
        by_id[r.test_id] = r
    return models(by_id.values())
