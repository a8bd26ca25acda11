"""The verifier's own pytest options never conflict with a project's addopts (a real pytest, a local sandbox)."""
from __future__ import annotations

import glob
import sys
import time
from pathlib import Path

import pytest

from envs.local import LocalSandbox
from envs.testrun import collect_count, run_tests

PY = sys.executable


def left_behind(before: set[str], wait_s: float = 30.0) -> set[str]:
    """The /var/tmp/autoinstall-* entries not in `before` that are still there after up to `wait_s`: tests
    running beside this one (other xdist workers, other runs on the host) make such scratch entries too,
    and remove them when their run ends; a leak stays."""
    deadline = time.monotonic() + wait_s
    while (new := set(glob.glob("/var/tmp/autoinstall-*")) - before) and time.monotonic() < deadline:
        time.sleep(0.5)
    return new


@pytest.mark.parametrize("addopts", ["--cache-clear", "--lf", "--ff --nf", "-p no:cacheprovider"])
def test_cache_options_in_addopts_still_run_and_leave_no_cache(addopts: str) -> None:
    """`-p no:cacheprovider` would remove `--cache-clear`/`--lf`/...: pytest then fails with unrecognized
    arguments before running a test. The verifier's cache goes to a scratch folder it removes instead."""
    before = set(glob.glob("/var/tmp/autoinstall-*"))
    with LocalSandbox() as sb:
        root = Path(sb.workdir)
        (root / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
        (root / "test_a.py").write_text("def test_ok():\n    pass\n\ndef test_bad():\n    assert False\n")
        run = run_tests(sb, f"{PY} -m pytest", "pytest", [], 120)
        assert {r.test_id: r.outcome for r in run.results} == {"test_a.py::test_ok": "passed",
                                                               "test_a.py::test_bad": "failed"}, run.output_tail
        assert collect_count(sb, f"{PY} -m pytest", [], 120, None, "pytest")[0] == 2
        assert not (root / ".pytest_cache").exists()
    assert left_behind(before) == set()
