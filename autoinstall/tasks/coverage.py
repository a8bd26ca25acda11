"""Which tests reach which functions, from one traced run of a pytest suite, so that a candidate is searched
with only the tests that call the function it changes (the kept ones are validated with the whole suite).

A small pytest plugin (written into the container, loaded with `-p`) records, per test, the functions of
the workdir's files that were called (a profile hook, calls only: cheap); a candidate's run then selects
those tests by the runner's own selection (its record's `select`). A runner without `coverage_map`, or a map
whose test ids do not match the runner's results, means no map (staticreach.py answers instead).
"""
from __future__ import annotations

import json
import shlex
from collections.abc import Callable

from pydantic import BaseModel, Field

from autoinstall.tasks.candidate import Candidate
from envs.base import Sandbox, read_capped

PLUGIN_DIR = "/var/tmp/autoinstall-tasks"
PLUGIN = "autoinstall_tasks_plugin"
MIN_MATCHED = 0.8
"""Share of the baseline's tests the traced ids must cover, else the map is not used."""
PLUGIN_SOURCE = '''"""Per-test calls into the workdir ($AUTOINSTALL_TRACE)"""
import json
import os
import sys
import threading

import pytest

TRACE = os.environ.get("AUTOINSTALL_TRACE")
ROOT = os.getcwd().rstrip(os.sep) + os.sep
_calls = set()
_tests = {}


def _profile(frame, event, arg):
    if event == "call":
        name = frame.f_code.co_filename
        if name.startswith(ROOT):
            _calls.add(name[len(ROOT):] + "::" + frame.f_code.co_name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if TRACE:
        _calls.clear()
        sys.setprofile(_profile)
        threading.setprofile(_profile)
    try:
        yield
    finally:
        if TRACE:
            sys.setprofile(None)
            threading.setprofile(None)
            _tests[item.nodeid] = sorted(_calls)


def pytest_sessionfinish(session):
    if TRACE:
        with open(TRACE, "w") as f:
            json.dump(_tests, f)
'''


class CoverageMap(BaseModel):
    """test id -> the `file::function` names it called (function: the code object's own name)."""

    tests: dict[str, list[str]] = Field(default_factory=dict)

    def reaching(self, candidate: Candidate) -> list[str]:
        """The tests that call the mutated function (mutations) or any function of the changed files, and
        (history) the tests of the test files the commit touched."""
        if candidate.mutation is not None:
            wanted = {f"{candidate.mutation.file}::{candidate.mutation.function.split('.')[-1]}"}
            return sorted(t for t, calls in self.tests.items() if wanted.intersection(calls))
        files = tuple(f"{f}::" for f in candidate.files)
        touched = tuple(f"{f}::" for f in candidate.test_files)
        return sorted(t for t, calls in self.tests.items()
                      if (touched and t.startswith(touched)) or any(c.startswith(files) for c in calls))


    def selection(self, candidate: Candidate) -> list[str] | None:
        """The tests to search `candidate` with; None (the whole suite) for a history commit that touched
        tests but whose changed files no test calls into (module-level tables and constants run at import,
        before any test, so the map cannot see them)."""
        reaching = self.reaching(candidate)
        return None if not reaching and candidate.kind == "history" and candidate.test_files else reaching


def install(sandbox: Sandbox) -> None:
    sandbox.write_file(f"{PLUGIN_DIR}/{PLUGIN}.py", PLUGIN_SOURCE.encode())


def with_plugin(command: str, variables: dict[str, str]) -> str:
    """`command` with the plugin importable and loaded, and `variables` exported before it."""
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    return (f'export PYTHONPATH={PLUGIN_DIR}"${{PYTHONPATH:+:$PYTHONPATH}}" {exports}; '
            f"{command} -p {PLUGIN}")


def folder_prefix(project: str) -> str:
    """"pkg/core/" for a nested plan's folder, "" for the checkout itself: what turns a path from the project's
    folder into one from the checkout's root."""
    return "" if project.strip("/.") == "" else project.strip("/") + "/"


def read_map(sandbox: Sandbox, path: str, passing: list[str], project: str = ".",
             log: Callable[[str], None] | None = None) -> CoverageMap | None:
    """The traced map, or None when it is missing, past REPORT_CAP_BYTES (said in `log`) or its ids do not
    match the baseline's. The plugin names files from where pytest runs, `project` (a nested plan's folder):
    they are named from the checkout."""
    try:
        data, note = read_capped(sandbox, path)
        if note:
            if log:
                log(f"no coverage map: {note}")
            return None
        traced = json.loads(data)
    except (FileNotFoundError, IsADirectoryError, ValueError):
        return None
    if not isinstance(traced, dict):
        return None
    wanted = set(passing)
    inside = folder_prefix(project)
    tests = {t: [inside + c for c in calls if isinstance(c, str)] for t, calls in traced.items()
             if t in wanted and isinstance(calls, list)}
    if not passing or len(tests) < MIN_MATCHED * len(passing):
        return None
    return CoverageMap(tests=tests)
