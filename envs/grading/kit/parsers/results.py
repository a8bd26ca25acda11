"""One test's result, as every parser returns it (the host turns it into envs.spec.TestResult)."""
from __future__ import annotations

from dataclasses import dataclass

OUTCOMES = ("passed", "failed", "error", "skipped")


@dataclass
class Result:
    test_id: str
    outcome: str
    """passed, failed, error or skipped."""
    duration_s: float = 0.0
    message: str = ""


def count(results: list) -> dict:
    """outcome -> how many results have it (every outcome present, 0 when none)."""
    counts = {o: 0 for o in OUTCOMES}
    for r in results:
        counts[r.outcome] += 1
    return counts


def without_prefix(text: str, prefix: str) -> str:
    """str.removeprefix, for Python 3.8 (the oldest interpreter an image may have)."""
    return text[len(prefix):] if prefix and text.startswith(prefix) else text


def without_suffix(text: str, suffix: str) -> str:
    return text[:-len(suffix)] if suffix and text.endswith(suffix) else text
