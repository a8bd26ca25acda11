"""Per-test results from what Node.js test runners print: TAP (node:test, node-tap, tape) and the marked lines
of the spec-like reporters, ids `file > suite > test` (the parsing: envs/grading/kit/parsers/node.py)."""
from __future__ import annotations

from envs.grading.kit.parsers import node
from envs.grading.kit.parsers.node import SEP, clean, looks_like_tap, parse_node_summary
from envs.spec import TestResult
from envs.testrun.convert import models


def parse_tap(output: str) -> list[TestResult]:
    """Leaf tests of (nested) TAP, named under their suites."""
    return models(node.parse_tap(output))


def parse_marks(output: str) -> list[TestResult]:
    """Tests from the lines that start with a pass/fail/skip mark, named under the suites above them."""
    return models(node.parse_marks(output))


def parse_node_output(output: str) -> list[TestResult]:
    """Per-test results: TAP when the output is TAP, else the marked lines of a spec-like reporter."""
    return models(node.parse_node_output(output))


__all__ = ["SEP", "clean", "looks_like_tap", "parse_marks", "parse_node_output", "parse_node_summary", "parse_tap"]
