"""Tasks checked by the real clients, on one hand-made task (tests/envs/task_env.py): verl's own dataset and
tool classes score the gold fix 1 and no fix 0; envs.Environment.reset(task) starts from the bug and reward()
is 0 then 1. Harbor and swebench grade tasks of every language, cheats included, in
tests/adversarial/test_cheating_agents.py.

Needs Docker and verl in ~/.cache/autoinstall/tools/verl (installed by scripts/setup.sh); fails when CI is set
and it is missing.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.catalog import Catalog
from envs.export import ExportOptions, run_export
from envs.runtime import Environment, RuntimeSpec
from envs.runtime.taskstate import TaskStateError
from envs.task import Task
from tests.envs.task_env import build_image, store, tool_python

pytestmark = pytest.mark.slow
INSTANCE = "example-org__calc-mutation-0001"


@pytest.fixture(scope="module")
def image(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from build_image(request, "task-clients-test")


@pytest.fixture
def stored(image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Catalog, Task]:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    catalog = Catalog(tmp_path / "catalog")
    return catalog, store(tmp_path / "home", catalog, image, tmp_path / "envs" / "calc")[1]


def test_environment_reset_task_starts_from_the_bug(stored: tuple[Catalog, Task]) -> None:
    task = stored[1]
    with Environment(RuntimeSpec.from_task(task)) as env:
        env.reset()
        assert "a + b" in env.step("read_file", {"path": "calc.py"}).output.split("def sub")[1]
        before = env.reward()
        assert (before.value, before.passed, before.total) == (0.0, 1, 2)
        env.step("terminal", {"command": "cp -p calc.py /tmp/calc.before"})
        obs = env.step("edit_file", {"path": "calc.py", "old_str": "def sub(a, b):\n    return a + b",
                                     "new_str": "def sub(a, b):\n    return a - b"})
        assert not obs.is_error, obs.output
        # Same size and mtime as when the suite imported it: a .pyc written then would still be taken.
        env.step("terminal", {"command": "touch -r /tmp/calc.before calc.py"})
        assert env.reward().value == 1.0
        env.reset(task)  # a new episode starts from the bug again
        assert env.reward().value == 0.0
        assert env.reward(tests=[]).total == 2  # an explicit selection still scores the pass fraction
    stale = task.model_copy(update={"bug_patch": task.bug_patch.replace("a - b", "a * b")})
    with Environment(RuntimeSpec.from_task(stale)) as env, pytest.raises(TaskStateError, match="does not apply"):
        env.reset()


def test_verl_loads_the_export_and_scores_a_scripted_trajectory(stored: tuple[Catalog, Task], tmp_path: Path) -> None:
    python = tool_python("verl", "verl (with torch, CPU)")
    run_export(stored[0], ExportOptions(out=tmp_path / "out", format="verl", tasks=True))
    root = Path(__file__).parents[2]
    done = subprocess.run([python, str(Path(__file__).with_name("verl_check.py")), str(tmp_path / "out")],
                          env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["agent_name"] == "tool_agent" and seen["registered"] is True
    assert "run_tests" in seen["tools"] and "edit_file" in seen["tools"]
    assert seen["scores"] == [1.0, 0.0]  # the gold fix, then no fix
