"""JUnit XML reports (pytest's xunit1/xunit2, and any runner that writes them) -> per-test results."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .results import Result, without_suffix


def node_id(case: ET.Element) -> str:
    """The pytest node id of a <testcase> (path::Class::name) as far as the report lets it be rebuilt."""
    classname, name = case.get("classname", ""), case.get("name", "")
    file = case.get("file")
    module = without_suffix(file, ".py").replace("/", ".") if file else ""
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


def parse(xml_text: str) -> list:
    """Test cases from a JUnit XML report (pytest's xunit1 or xunit2). Raises ET.ParseError when it is not XML."""
    root = ET.fromstring(xml_text)
    results = []
    for case in root.iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = ((child.get("message") or "") + "\n" + (child.text or "")).strip()[:2000]
                break
        results.append(Result(node_id(case), outcome, float(case.get("time") or 0), message))
    return results
