"""AutoinstallTool driven the way verl drives it, against real containers built from a row of the verl export:
one container per trajectory shared by its tools, rewards before and after a fix, release, concurrent
trajectories, and ToolAgentLoop's per-call create/release."""
from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from envs.catalog import record_from_spec
from envs.export import Entry
from envs.export.verl import TOOL_CLASS, row, tools_config
from envs.spec import EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from envs.verl_tool import (
    TRAJECTORY_LABEL,
    AutoinstallTool,
    CreateKwargs,
    UnknownInstanceError,
    end_trajectory,
    open_trajectories,
)
from tests.envs.conftest import RUN_LABEL, make_sandbox

PROJECT = {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
    "tests/test_calc.py": ("from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                           "def test_sub():\n    assert sub(5, 3) == 2\n"),
}
"""test_add passes; test_sub fails until sub() is fixed."""
TESTS = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]
FIX = {"path": "calc.py", "old_str": "def sub(a, b):\n    return a + b", "new_str": "def sub(a, b):\n    return a - b"}


def make_tools(**config: Any) -> dict[str, AutoinstallTool]:
    """One tool object per tools.yaml entry, as verl's initialize_tools_from_config makes them."""
    entries = tools_config()["tools"]
    assert {e["class_name"] for e in entries} == {TOOL_CLASS}
    tools = [AutoinstallTool({**e["config"], **config}, e["tool_schema"]) for e in entries]
    return {t.name: t for t in tools}


def verl_row(image: str) -> dict[str, Any]:
    """The parquet row envs/export/verl.py writes for an environment whose verified tests are TESTS."""
    run = TestRun(exit_code=0, duration_s=1.0, results=[TestResult(test_id=t, outcome="passed") for t in TESTS])
    plan = Plan(test_command="python -m pytest tests")
    spec = EnvSpec(status="verified", source=SourceRecord(repo="https://example.org/calc.git", name="calc",
                                                          commit="ab" * 20),
                   model="embedded", base_image="base", python="3.11", image=image, plan=plan,
                   test_command=plan.test_command, verification=Verification(verified=True, runs=[run]),
                   created_at="2024-05-06T00:00:00+00:00")
    return row(Entry(record_from_spec(spec, Path("/nowhere")), spec), 0, image).model_dump(mode="json")


def create_kwargs(verl_row: dict[str, Any], tool: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = verl_row["extra_info"]["tools_kwargs"][tool]["create_kwargs"]
    return kwargs


def containers(trajectory: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={TRAJECTORY_LABEL}={trajectory}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


# Without Docker
def test_tools_yaml_entries_build_tools_and_a_wrong_name_is_refused() -> None:
    assert sorted(make_tools()) == sorted(e["config"]["tool"] for e in tools_config()["tools"])
    schema = tools_config()["tools"][0]["tool_schema"]
    with pytest.raises(ValueError, match="must agree"):
        AutoinstallTool({"type": "native", "tool": "terminal"}, schema)
    with pytest.raises(ValidationError):
        AutoinstallTool({"type": "native", "tol": "read_file"}, schema)


def test_create_kwargs_give_the_runtime_spec() -> None:
    runtime_row = {"image_name": "old:1", "test_cmd": "pytest", "PASS_TO_PASS": ["a"], "FAIL_TO_PASS": ["b"],
                   "deselected": ["tests/test_x.py"], "env": {"A": "1"}}
    spec = CreateKwargs(runtime_row=json.dumps(runtime_row)).runtime_spec()
    assert (spec.image, spec.tests, spec.env) == ("old:1", ["a", "b"], {"A": "1"})
    assert [d.test for d in spec.deselected] == ["tests/test_x.py"]
    spec = CreateKwargs(image="new:2", tests=["a"], runtime_row=json.dumps(runtime_row)).runtime_spec()
    assert (spec.image, spec.tests) == ("new:2", ["a"])
    with pytest.raises(ValidationError):
        CreateKwargs.model_validate({"image": "x", "imgae": "y"})


def test_unknown_instances_fail_and_release_is_idempotent() -> None:
    tool = make_tools()["terminal"]
    with pytest.raises(UnknownInstanceError, match="create"):
        asyncio.run(tool.execute("nope", {"command": "true"}))
    asyncio.run(tool.release("nope"))


# With Docker
@pytest.fixture(scope="module")
def image(request: pytest.FixtureRequest, base_image: str) -> Iterator[str]:
    """The base image plus PROJECT and pytest, snapshotted for this module and removed after it (naming
    base_image marks its tests `docker`: tests/conftest.py)."""
    from envs.docker import remove_image
    from envs.home import cache_dir

    with make_sandbox(request, "docker", network=True, cache_dir=cache_dir()) as sb:
        for path, text in PROJECT.items():
            sb.write_file(path, text.encode())
        r = sb.exec("uv pip install --python /opt/venv/bin/python3 pytest", timeout=300)
        assert r.ok, r.output
        tag = sb.snapshot("verl-tool-test")
    try:
        yield tag
    finally:
        remove_image(tag)


@pytest.fixture(scope="module")
def exported(image: str) -> dict[str, Any]:
    return verl_row(image)


@pytest.fixture
def tools() -> dict[str, AutoinstallTool]:
    return make_tools(labels=RUN_LABEL)


async def sglang_trajectory(tools: dict[str, AutoinstallTool], exported: dict[str, Any], trajectory: str,
                            fix: bool) -> tuple[float, float]:
    """The SGLang rollout's calls: create per tool with the trajectory id, execute, calc_reward, release."""
    read, terminal, edit = tools["read_file"], tools["terminal"], tools["edit_file"]
    for tool in (read, terminal, edit):
        instance, _ = await tool.create(trajectory, **create_kwargs(exported, tool.name))
        assert instance == trajectory
    assert len(containers(trajectory)) == 1
    text, step, metrics = await read.execute(trajectory, {"path": "calc.py"})
    assert "return a + b" in (text.text or "") and step == 0.0
    assert metrics["is_error"] is False and metrics["duration_s"] > 0
    before = await edit.calc_reward(trajectory)
    if fix:
        response, _, metrics = await edit.execute(trajectory, FIX)
        assert not metrics["is_error"], response.text
    response, _, _ = await terminal.execute(trajectory, {"command": "python -c 'import calc; print(calc.sub(5, 3))'"})
    assert (response.text or "").splitlines()[0] == ("2" if fix else "8")
    after = await terminal.calc_reward(trajectory)
    for tool in (read, terminal):
        await tool.release(trajectory)
    assert len(containers(trajectory)) == 1  # edit_file still holds it
    await edit.release(trajectory)
    assert containers(trajectory) == [] and trajectory not in open_trajectories()
    return before, after


def test_the_tools_of_a_trajectory_share_one_container(tools: dict[str, AutoinstallTool],
                                                       exported: dict[str, Any]) -> None:
    assert asyncio.run(sglang_trajectory(tools, exported, uuid.uuid4().hex, fix=True)) == (0.5, 1.0)
    with pytest.raises(UnknownInstanceError):
        asyncio.run(tools["terminal"].calc_reward("released"))


def test_concurrent_trajectories_get_their_own_containers(tools: dict[str, AutoinstallTool],
                                                          exported: dict[str, Any]) -> None:
    async def both() -> list[tuple[float, float]]:
        return await asyncio.gather(sglang_trajectory(tools, exported, uuid.uuid4().hex, fix=True),
                                    sglang_trajectory(tools, exported, uuid.uuid4().hex, fix=False))

    assert asyncio.run(both()) == [(0.5, 1.0), (0.5, 0.5)]


class AgentData:
    """What verl's ToolAgentLoop passes to execute(): the trajectory's request_id (and more)."""

    def __init__(self) -> None:
        self.request_id = uuid.uuid4().hex


def test_tool_agent_loop_calls_keep_the_container_for_the_trajectory(tools: dict[str, AutoinstallTool],
                                                                     exported: dict[str, Any]) -> None:
    async def call(agent_data: AgentData, name: str, args: dict[str, Any]) -> str:
        """verl's ToolAgentLoop._call_tool: create, execute, release, for every call."""
        tool = tools[name]
        instance, _ = await tool.create(create_kwargs=create_kwargs(exported, name))
        try:
            response, _, _ = await tool.execute(instance, args, agent_data=agent_data)
        finally:
            await tool.release(instance)
        return response.text or ""

    async def rollout(agent_data: AgentData) -> None:
        await call(agent_data, "edit_file", FIX)
        assert len(containers(agent_data.request_id)) == 1
        assert "1 passed" in await call(agent_data, "terminal", {"command": "python -m pytest tests -q -k sub"})

    first, second = AgentData(), AgentData()
    asyncio.run(rollout(first))
    asyncio.run(end_trajectory(first.request_id))
    assert containers(first.request_id) == []
    asyncio.run(rollout(second))
    key = second.request_id
    del second
    gc.collect()
    deadline = time.monotonic() + 30
    while containers(key) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert containers(key) == [] and key not in open_trajectories()
