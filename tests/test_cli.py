"""The command line as a user runs it: exit codes and messages, bad input, the chat-model path."""
import json
import os
import subprocess
import sys
from pathlib import Path

import git
import pytest

from autoinstall.plan.models.replay_server import ReplayServer, tool_call

ROOT = Path(__file__).parents[1]
REPOS = ROOT / "tests" / "fixtures" / "repos"


def autoinstall(*args: str, home: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTOINSTALL_HOME": str(home)}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize(("repo", "message"), [
    ("/no/such/path", "no such directory"),
    ("http://127.0.0.1:9/nothing.git", "cannot clone"),
])
@pytest.mark.slow
def test_unreadable_repositories_get_a_clear_error(repo: str, message: str, tmp_path: Path) -> None:
    done = autoinstall("plan", repo, home=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr.lower() and "Traceback" not in done.stderr


@pytest.mark.slow
def test_unknown_commit_and_empty_repository(tmp_path: Path) -> None:
    empty = git.Repo.init(tmp_path / "empty")
    done = autoinstall("plan", empty.working_dir, home=tmp_path)
    assert done.returncode == 2 and "empty repository" in done.stderr
    repo = git.Repo.init(tmp_path / "one")
    (tmp_path / "one" / "setup.py").write_text("from setuptools import setup\nsetup(name='one')\n")
    repo.index.add(["setup.py"])
    repo.index.commit("first")
    done = autoinstall("plan", str(tmp_path / "one"), "--commit", "deadbeef", home=tmp_path)
    assert done.returncode == 2 and "unknown commit 'deadbeef'" in done.stderr and "first" in done.stderr


@pytest.mark.slow
def test_plan_json_has_steps_with_evidence(tmp_path: Path) -> None:
    done = autoinstall("plan", str(REPOS / "requirements_tox"), "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["steps"] and all(s["why"] and s["evidence"] for s in plan["steps"])
    assert any("-e" in s["command"] for s in plan["steps"])


@pytest.mark.slow
def test_plan_takes_a_forced_python_as_run_does(tmp_path: Path) -> None:
    done = autoinstall("plan", str(REPOS / "pep621_extras"), "--python", "3.13", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["python"] == "3.13"
    bad = autoinstall("plan", str(REPOS / "pep621_extras"), "--python", "three", home=tmp_path)
    assert bad.returncode == 2 and "pass X.Y" in bad.stderr


@pytest.mark.slow
def test_model_endpoint_down_is_a_clear_error(tmp_path: Path) -> None:
    done = autoinstall("plan", str(REPOS / "setup_py_only"), "--model", "openai:m", "--base-url",
                       "http://127.0.0.1:9/v1", home=tmp_path)
    assert done.returncode == 2 and "did not answer" in done.stderr and "Traceback" not in done.stderr


def test_tools_schema_prints_flat_function_schemas(tmp_path: Path) -> None:
    done = autoinstall("tools", "schema", home=tmp_path)
    schemas = json.loads(done.stdout)
    assert {s["function"]["name"] for s in schemas} >= {"read_file", "edit_file", "search", "lint", "terminal"}


@pytest.mark.slow
def test_chat_model_drives_both_phases_over_http(base_image: str, tmp_path: Path) -> None:
    """A scripted OpenAI-compatible server proposes a plan missing pytest; the repair comes from it too."""
    plan = {"python": "3.11", "test_command": "python -m pytest tests", "test_runner": "pytest",
            "steps": [{"command": "uv pip install -e .", "why": "install the checkout", "kind": "project",
                       "evidence": [{"file": "setup.py", "line": 1}]}],
            "checks": [{"name": "import spam", "kind": "import", "command": "python -c 'import spam'"}]}
    replies = [tool_call("read_file", {"path": "setup.py"}, "c1"),
               tool_call("submit_plan", {"plan": json.dumps(plan)}, "c2"),
               tool_call("terminal", {"command": "python -m pytest --version"}, "c3"),
               tool_call("submit_repair", {"kind": "insert_before", "reason": "pytest is missing",
                                           "command": "uv pip install pytest"}, "c4")]
    with ReplayServer(replies) as server:
        done = autoinstall(str(REPOS / "setup_py_only"), "--model", "openai:scripted", "--base-url",
                           server.base_url, "--json", "--out", str(tmp_path / "env"), home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    spec = json.loads(done.stdout)
    assert spec["status"] == "verified" and spec["model"] == "openai:scripted"
    assert [s["command"] for s in spec["steps"]] == ["uv pip install pytest", "uv pip install -e ."] or [
        s["command"] for s in spec["steps"]] == ["uv pip install -e .", "uv pip install pytest"]
    tool_results = [m for r in server.requests for m in r["messages"] if m["role"] == "tool"]
    assert any("setup(" in m["content"] for m in tool_results)  # read_file ran over the checkout
    assert any("No module named pytest" in m["content"] for m in tool_results)  # terminal ran in the sandbox


@pytest.mark.slow
def test_setup_py_that_runs_forever_hits_the_step_timeout(base_image: str, tmp_path: Path) -> None:
    repo = tmp_path / "forever"
    repo.mkdir()
    (repo / "setup.py").write_text("import time\nwhile True:\n    time.sleep(1)\n")
    (repo / "test_x.py").write_text("def test_x():\n    assert True\n")
    done = autoinstall(str(repo), "--step-timeout", "10", "--json", "--out", str(tmp_path / "env"), home=tmp_path)
    spec = json.loads(done.stdout)
    assert done.returncode == 1
    assert spec["failure"]["failure_class"] == "install_failed"
    assert any(e["timed_out"] for e in spec["log"])
    assert (tmp_path / "env" / "spec.json").is_file()


@pytest.mark.slow
def test_setup_py_writing_outside_its_directory_leaves_the_host_untouched(base_image: str, tmp_path: Path) -> None:
    marker = tmp_path / "host-marker"
    repo = tmp_path / "hostile"
    repo.mkdir()
    (repo / "setup.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('owned')\n"
        "pathlib.Path('/etc/autoinstall-owned').write_text('owned')\n"
        "from setuptools import setup\nsetup(name='hostile', version='0.1', py_modules=[])\n")
    (repo / "test_x.py").write_text("def test_x():\n    assert True\n")
    autoinstall(str(repo), "--json", "--out", str(tmp_path / "env"), home=tmp_path)
    assert not marker.exists()
    assert not Path("/etc/autoinstall-owned").exists()


@pytest.mark.slow
def test_model_that_breaks_down_mid_install_keeps_what_was_recorded(base_image: str, tmp_path: Path) -> None:
    plan = {"python": "3.11", "test_command": "python -m pytest tests",
            "steps": [{"command": "uv pip install -e .", "why": "install", "kind": "project"}]}
    replies = [tool_call("submit_plan", {"plan": json.dumps(plan)})]  # then only chatter: no repair comes
    with ReplayServer(replies) as server:
        done = autoinstall(str(REPOS / "setup_py_only"), "--model", "openai:scripted", "--base-url",
                           server.base_url, "--json", "--out", str(tmp_path / "env"), home=tmp_path)
    assert done.returncode == 1
    spec = json.loads((tmp_path / "env" / "spec.json").read_text())
    assert spec["failure"]["failure_class"] == "model_error"
    assert spec["steps"][0]["command"] == "uv pip install -e ."  # what had worked is kept
    assert any(e["phase"] == "tests" for e in spec["log"])
