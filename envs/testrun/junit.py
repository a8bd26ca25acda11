"""JUnit XML reports (pytest's xunit1/xunit2, and any runner that writes them) -> per-test results."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from envs.spec import Outcome, TestResult


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
