"""The OpenAI-compatible model path, against a real HTTP server on loopback replaying scripted tool calls."""
import json
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.plan.models.chat import ChatModel
from autoinstall.plan.models.chat_client import ModelError
from autoinstall.plan.models.replay_server import ReplayServer, tool_call
from envs.spec import Plan, Step

PLAN = {"python": "3.11", "test_command": "python -m pytest tests",
        "steps": [{"command": "uv pip install -e '.[test]'", "why": "install the checkout", "kind": "project",
                   "evidence": [{"file": "pyproject.toml", "line": 1}]}],
        "checks": [{"name": "import demo", "kind": "import", "command": "python -c 'import demo'"}]}


class Facts:
    def model_dump_json(self, **_: object) -> str:
        return json.dumps({"build_backend": "setuptools"})


def runner_over(repo: Path) -> tuple[list[tuple[str, str]], object]:
    calls: list[tuple[str, str]] = []

    def run(name: str, arguments: str) -> str:
        calls.append((name, arguments))
        return (repo / json.loads(arguments)["path"]).read_text()

    return calls, run


def test_propose_explores_with_tools_then_submits_a_plan(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    replies = [tool_call("read_file", {"path": "pyproject.toml"}, "c1"),
               tool_call("submit_plan", {"plan": json.dumps(PLAN)}, "c2")]
    calls, run = runner_over(tmp_path)
    with ReplayServer(replies) as server:
        plan = ChatModel("scripted", server.base_url).propose(Facts(), tmp_path, tools=run)
    assert plan == Plan.model_validate(PLAN)
    assert calls == [("read_file", '{"path": "pyproject.toml"}')]
    first, second = server.requests
    assert first["model"] == "scripted"
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "search", "submit_plan"}
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c1" and "name = 'demo'" in tool_msg["content"]


def test_invalid_plan_is_sent_back_to_the_model_to_fix(tmp_path: Path) -> None:
    bad = dict(PLAN, steps=[{"command": f"echo {i}", "why": "x"} for i in range(11)])
    replies = [tool_call("submit_plan", {"plan": json.dumps(bad)}), tool_call("submit_plan", {"plan": json.dumps(PLAN)})]
    with ReplayServer(replies) as server:
        plan = ChatModel("m", server.base_url).propose(Facts(), tmp_path)
    assert len(plan.steps) == 1
    assert "at most 10 steps" in server.requests[1]["messages"][-1]["content"]


def test_repair_returns_the_submitted_fix() -> None:
    failing = Step(command="uv pip install -e .", why="x")
    context = RepairContext(plan=Plan(steps=[failing]), failing=failing, phase="install",
                            output="fatal error: ffi.h: No such file or directory",
                            diagnosis=diagnose("fatal error: ffi.h: No such file or directory"), python="3.11",
                            available_pythons=["3.11", "3.13"])
    replies = [tool_call("submit_repair", {"kind": "insert_before", "reason": "ffi headers",
                                           "command": "apt-get install -y libffi-dev"})]
    with ReplayServer(replies) as server:
        fix = ChatModel("m", server.base_url).repair(context)
    assert fix is not None and fix.kind == "insert_before" and fix.step is not None
    assert fix.step.command == "apt-get install -y libffi-dev"
    assert "ffi.h" in server.requests[0]["messages"][1]["content"]
    with ReplayServer([tool_call("submit_repair", {"kind": "give_up", "reason": "no idea"})]) as server:
        gave_up = ChatModel("m", server.base_url).repair(context)
    assert gave_up is not None and (gave_up.kind, gave_up.reason) == ("give_up", "no idea")


def test_endpoint_down_is_a_clear_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="did not answer .*check --base-url"):
        ChatModel("m", "http://127.0.0.1:9/v1", timeout_s=5).propose(Facts(), tmp_path)


def test_garbage_answer_is_a_clear_model_error(tmp_path: Path) -> None:
    with ReplayServer([], raw_body=b"<html>not json</html>") as server, pytest.raises(
            ModelError, match="not a chat completion"):
        ChatModel("m", server.base_url).propose(Facts(), tmp_path)


def test_a_model_that_never_answers_runs_out_of_turns(tmp_path: Path) -> None:
    replies = [{"role": "assistant", "content": "thinking..."}] * 3
    with ReplayServer(replies) as server, pytest.raises(ModelError, match="within 3 turns"):
        ChatModel("m", server.base_url, max_turns=3).propose(Facts(), tmp_path)


class GoFacts(Facts):
    ecosystem = "go"


def test_the_prompts_describe_the_leading_ecosystems_container(tmp_path: Path) -> None:
    go_plan = {"test_command": "go test ./...", "test_runner": "go",
               "steps": [{"command": "go mod download", "why": "modules", "kind": "project"}]}
    with ReplayServer([tool_call("submit_plan", {"plan": json.dumps(go_plan)})]) as server:
        plan = ChatModel("m", server.base_url).propose(GoFacts(), tmp_path)
    system = server.requests[0]["messages"][0]["content"]
    assert "You set up Go repositories" in system and "go test ./..." in system and "/opt/venv" not in system
    assert plan.ecosystem == "go", "a plan that does not say its ecosystem gets the survey's"
    failing = plan.steps[0]
    context = RepairContext(plan=plan, failing=failing, phase="install", output="x", python="3.13",
                            diagnosis=diagnose("x"), available_pythons=["3.13"])
    with ReplayServer([tool_call("submit_repair", {"kind": "give_up", "reason": "no idea"})]) as server:
        ChatModel("m", server.base_url).repair(context)
    assert "Debian's Go toolchain" in server.requests[0]["messages"][0]["content"]
