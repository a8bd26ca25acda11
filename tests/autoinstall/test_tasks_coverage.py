"""The per-test call map and test selection plugin, run with this machine's pytest (no Docker)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.coverage import PLUGIN, PLUGIN_SOURCE, CoverageMap
from envs.task import MutationInfo

LIB = "def double(x):\n    return 2 * x\n\n\ndef half(x):\n    return x / 2\n"
TESTS = ("from lib import double, half\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
         "def test_half():\n    assert half(4) == 2\n\n\ndef test_both():\n    assert half(double(3)) == 3\n")


def pytest_in(project: Path, plugin_dir: Path, **env: str) -> str:
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", PLUGIN, "-p", "no:cacheprovider",
                             "tests"], cwd=project, capture_output=True, text=True,
                            env={"PYTHONPATH": f"{plugin_dir}:{project}", "PATH": "/usr/bin:/bin", **env})
    return result.stdout


def test_trace_maps_tests_to_functions_and_select_runs_only_those(tmp_path: Path) -> None:
    plugin_dir, project = tmp_path / "plugin", tmp_path / "project"
    plugin_dir.mkdir()
    (plugin_dir / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    (project / "tests").mkdir(parents=True)
    (project / "lib.py").write_text(LIB)
    (project / "tests" / "test_lib.py").write_text(TESTS)
    trace = tmp_path / "trace.json"
    assert "3 passed" in pytest_in(project, plugin_dir, AUTOINSTALL_TRACE=str(trace))
    reach = CoverageMap(tests=json.loads(trace.read_text()))
    mutated = Candidate(kind="mutation", bug_patch="", gold_patch="", files=["lib.py"],
                        mutation=MutationInfo(operator="off_by_one", file="lib.py", function="half", line=6))
    assert reach.reaching(mutated) == ["tests/test_lib.py::test_both", "tests/test_lib.py::test_half"]
    whole_file = mutated.model_copy(update={"mutation": None})
    assert len(reach.reaching(whole_file)) == 3
    selected = tmp_path / "select.txt"
    selected.write_text("tests/test_lib.py::test_half\ntests/test_lib.py::test_both")
    assert "2 passed, 1 deselected" in pytest_in(project, plugin_dir, AUTOINSTALL_SELECT=str(selected))


def test_history_candidates_also_reach_the_tests_of_the_test_files_their_commit_touched() -> None:
    reach = CoverageMap(tests={"tests/test_a.py::test_calls": ["lib/a.py::f"], "tests/test_b.py::test_table": [],
                               "tests/test_c.py::test_other": ["lib/c.py::g"]})
    history = Candidate(kind="history", bug_patch="", gold_patch="", files=["lib/a.py"],
                        test_files=["tests/test_b.py"])
    assert reach.reaching(history) == ["tests/test_a.py::test_calls", "tests/test_b.py::test_table"]
    assert reach.reaching(history.model_copy(update={"test_files": []})) == ["tests/test_a.py::test_calls"]


def test_a_history_commit_that_touched_tests_but_reaches_none_searches_the_whole_suite() -> None:
    reach = CoverageMap(tests={"tests/test_a.py::test_calls": ["lib/a.py::f"]})
    tables = Candidate(kind="history", bug_patch="", gold_patch="", files=["lib/tables.py"],
                       test_files=["tests/examples.py"])
    assert reach.selection(tables) is None
    assert reach.selection(tables.model_copy(update={"test_files": []})) == []
    assert reach.selection(tables.model_copy(update={"files": ["lib/a.py"]})) == ["tests/test_a.py::test_calls"]
