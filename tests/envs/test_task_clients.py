"""Tasks checked by the real clients, on one hand-made task (tests/envs/task_env.py): Harbor scores the oracle 1
and a do-nothing agent 0; swebench's own evaluation entry point resolves the row with the gold patch and not
with a patch that fixes nothing; envs.Environment.reset(task) starts from the bug and reward() is 0 then 1.

Needs Docker, Harbor (~/.local/bin/harbor) and swebench in ~/.cache/autoinstall/tools/swebench (both installed by
scripts/setup.sh); each test fails when CI is set and its tool is missing.
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
from tests.envs.task_env import build_image, diff, store, tool_python
from tests.envs.test_harbor import harbor_executable, reward, run

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


def test_swebench_evaluates_the_rows_as_they_are(stored: tuple[Catalog, Task], tmp_path: Path) -> None:
    from envs.docker import remove_image

    python = tool_python("swebench", "swebench 5.x")
    manifest = run_export(stored[0], ExportOptions(out=tmp_path / "out", format="swebench", tasks=True))
    (artifact,) = manifest.images
    nothing = diff("NOTES.md", "", "nothing fixed\n").replace("--- a/NOTES.md", "--- /dev/null")
    preds = tmp_path / "nop.jsonl"
    preds.write_text(json.dumps({"instance_id": INSTANCE, "model_patch": nothing, "model_name_or_path": "nop"}) + "\n")
    try:
        resolved = {}
        for name, predictions in (("gold", "gold"), ("nop", str(preds))):
            done = subprocess.run([python, "-m", "swebench.harness.run_evaluation", "-d",
                                   str(tmp_path / "out" / "swebench.jsonl"), "-p", predictions, "-id", f"run-{name}",
                                   "--max_workers", "1", "--report_dir", str(tmp_path / "reports")],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
            report = tmp_path / "logs" / "run_evaluation" / f"run-{name}" / name / INSTANCE / "report.json"
            assert report.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
            resolved[name] = json.loads(report.read_text())[INSTANCE]
    finally:
        remove_image(artifact.image)
    assert resolved["gold"]["resolved"] is True, resolved
    assert resolved["nop"]["patch_successfully_applied"] is True and resolved["nop"]["resolved"] is False
    assert resolved["nop"]["tests_status"]["FAIL_TO_PASS"]["failure"] == ["tests/test_calc.py::test_sub"]


def test_harbor_scores_the_oracle_1_and_a_do_nothing_agent_0(stored: tuple[Catalog, Task], tmp_path: Path) -> None:
    harbor = harbor_executable()
    # The verifier's network stays public here: Harbor enforces no-network with an egress sidecar whose image
    # comes from Docker Hub, which this machine cannot pull. The agent runs as the non-root user `agent`.
    run_export(stored[0], ExportOptions(out=tmp_path / "out", format="harbor", tasks=True,
                                        verifier_network="public"))
    task_dir = tmp_path / "out" / INSTANCE
    lint = run(harbor, "lint", str(task_dir))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert reward(harbor, task_dir, "oracle", tmp_path / "jobs") == 1.0
    assert reward(harbor, task_dir, "nop", tmp_path / "jobs") == 0.0


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
