"""Run inside verl's own venv (python verl_check.py OUT): load a task export the way verl does and play one
scripted trajectory with the fix and one without; print what verl saw as one JSON line.

verl's RLHFDataset reads OUT/verl.parquet, verl's registry builds the tools of OUT/tools.yaml, the calls are
made as verl's ToolAgentLoop makes them (create, execute with agent_data, release, per call; tool rewards that
are not None collected into tool_rewards), and verl's get_custom_reward_fn loads OUT/autoinstall_reward.py.
"""
from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
from verl.tools.tool_registry import initialize_tools_from_config
from verl.trainer.ppo.reward import get_custom_reward_fn
from verl.utils.dataset.rl_dataset import RLHFDataset

from envs.verl_tool import end_trajectory

FIX = {"path": "calc.py", "old_str": "def sub(a, b):\n    return a + b", "new_str": "def sub(a, b):\n    return a - b"}


class AgentData:
    """What ToolAgentLoop passes to execute(): the trajectory's request_id."""

    def __init__(self) -> None:
        self.request_id = uuid.uuid4().hex


async def trajectory(tools: dict[str, Any], tools_kwargs: dict[str, Any], calls: list[tuple[str, dict]]) -> list[float]:
    agent_data, rewards = AgentData(), []
    try:
        for name, args in calls:
            tool = tools[name]
            instance, _ = await tool.create(create_kwargs=tools_kwargs.get(name, {}).get("create_kwargs", {}))
            try:
                _, reward, _ = await tool.execute(instance, args, agent_data=agent_data)
            finally:
                await tool.release(instance)
            if reward is not None:
                rewards.append(reward)
    finally:
        await end_trajectory(agent_data.request_id)
    return rewards


def main(out: Path) -> None:
    config = OmegaConf.create({"filter_overlong_prompts": False, "tool_config_path": str(out / "tools.yaml"),
                               "cache_dir": str(out / "verl-cache")})
    item = RLHFDataset(data_files=[str(out / "verl.parquet")], tokenizer=None, config=config)[0]
    tools = {t.name: t for t in initialize_tools_from_config(str(out / "tools.yaml"))}
    reward_config = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": str(out / "autoinstall_reward.py"), "name": "compute_score"}}})
    compute_score = get_custom_reward_fn(reward_config)
    scores = []
    for calls in ([("read_file", {"path": "calc.py"}), ("edit_file", FIX), ("run_tests", {})],
                  [("read_file", {"path": "calc.py"}), ("run_tests", {})]):
        rewards = asyncio.run(trajectory(tools, item["tools_kwargs"], calls))
        result = compute_score(data_source=item["data_source"], solution_str="",
                               ground_truth=item["reward_model"]["ground_truth"], extra_info={"tool_rewards": rewards})
        scores.append(result["score"])
    print(json.dumps({"agent_name": item.get("agent_name"), "registered": item.get("agent_name") in _agent_loop_registry,
                      "tools": sorted(tools), "scores": scores}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
