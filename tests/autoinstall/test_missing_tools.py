"""A test that runs a system tool which is not installed is repaired like a missing header at build time: the
tool's name, read from the test's own failure (tests/fixtures/captured/python_missing_tools, a real run), is
looked up in Debian's Contents index and its package installed (issue 23)."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.debian_contents import ContentsIndex, parse
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.repairs import repair
from envs.spec import Diagnosis, Plan, Step
from envs.testrun.junit import parse_junit
from envs.testrun.pytest_output import with_captured

CAPTURED = Path(__file__).parents[1] / "fixtures" / "captured" / "python_missing_tools"
REPORT = gzip.decompress((CAPTURED / "junit.xml.gz").read_bytes()).decode()
OUTPUT = gzip.decompress((CAPTURED / "output.txt.gz").read_bytes()).decode()
CONTENTS = """\
usr/bin/dot                                             graphics/graphviz
usr/bin/xmllint                                         text/libxml2-utils
usr/bin/pandoc                                          text/pandoc
usr/bin/ffmpeg                                          video/ffmpeg
"""
"""Debian trixie's Contents lines for the four tools (the real index is read by test_debian_contents.py)."""


def _results() -> list:
    return with_captured(parse_junit(REPORT), OUTPUT)


def test_each_failure_names_the_tool_it_could_not_run() -> None:
    found = {r.test_id.split("::")[-1]: diagnose(r.message) for r in _results() if r.outcome == "failed"}
    assert {name: (d.kind, d.subject) for name, d in found.items()} == {
        "test_render_graph": ("missing_tool", "dot"),  # FileNotFoundError from subprocess
        "test_shell_pipeline": ("missing_tool", "xmllint"),  # exit status 127; the shell's line is only printed
        "test_tool_on_path": ("missing_tool", "pandoc"),  # assert shutil.which(...)
        "test_tool_version": ("missing_tool", "ffmpeg"),  # CalledProcessError, exit status 127
        "test_data_file": ("unknown", ""),  # a missing data file is not a missing program
    }
    shell = next(r for r in _results() if r.test_id.endswith("test_shell_pipeline"))
    assert "/bin/sh: 1: xmllint: not found" in shell.message
    assert "/bin/sh: 1: xmllint: not found" not in next(r for r in parse_junit(REPORT)
                                                         if r.test_id == shell.test_id).message


@pytest.mark.parametrize("line", ["/bin/sh: 1: jq: not found", "bash: line 1: jq: command not found",
                                  "/bin/sh: jq: command not found", "sh: 1: jq: not found"])
def test_a_shells_not_found_names_the_program(line: str) -> None:
    assert (diagnose(line).kind, diagnose(line).subject) == ("missing_tool", "jq")


def test_the_tools_are_installed_in_one_step_from_debians_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {"trixie": ContentsIndex(parse(CONTENTS.splitlines()))})
    results = _results()
    failed = [FailedTest(test_id=r.test_id, message=r.message) for r in results if r.outcome == "failed"]
    ctx = RepairContext(plan=Plan(test_command="python -m pytest"), failing=Step(command="<tests>", why="tests"),
                        phase="tests", output=OUTPUT[-20000:], diagnosis=diagnose(OUTPUT), python="3.13",
                        available_pythons=["3.13"], failed_tests=failed, test_ids=[r.test_id for r in results])
    found = repair(ctx)  # one step installs every program the failed tests could not run
    assert found is not None and found.kind == "insert_before" and found.step is not None, found
    assert found.step.command.endswith("--no-install-recommends ffmpeg graphviz libxml2-utils pandoc")
    assert repair(ctx.model_copy(update={"tried": [found]})) is None  # the data file is nothing to install


def test_a_name_no_package_ships_is_no_repair(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {"trixie": ContentsIndex(parse(CONTENTS.splitlines()))})
    ctx = RepairContext(plan=Plan(test_command="python -m pytest"), failing=Step(command="<tests>", why="tests"),
                        phase="tests", output="sh: 1: our-own-helper: not found", python="3.13",
                        diagnosis=Diagnosis(kind="missing_tool", subject="our-own-helper"), available_pythons=["3.13"])
    assert repair(ctx) is None
