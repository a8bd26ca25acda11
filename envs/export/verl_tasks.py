"""verl rows for tasks: verl.parquet, tools.yaml and the reward function autoinstall_reward.py, in OUT.

Each row names verl's tool agent loop (`agent_name`), so verl rolls it out multi-turn with the tools of
tools.yaml; every tool's create_kwargs carry the task (envs/task.py), whose bug envs.verl_tool applies when the
trajectory's container starts. The `run_tests` tool scores the trajectory's workdir (1.0 when all of the
task's FAIL_TO_PASS and PASS_TO_PASS tests pass, else 0.0); the shipped reward function (autoinstall_reward.py,
`compute_score`) gives the result of the last run_tests call.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from envs.export.common import ExportOptions, format_version, verification_counts
from envs.export.harbor import TEMPLATES
from envs.export.harbor_tasks import instruction
from envs.export.tasks import TaskEntry
from envs.export.verl import ABILITY, FILE, SYSTEM_PROMPT, TOOL_CLASS, TOOLS_FILE, VerlRow, tools_config

AGENT_LOOP = "tool_agent"
"""verl's multi-turn agent loop with tools (verl/experimental/agent_loop/tool_agent_loop.py)."""
DATA_SOURCE = "autoinstall_task"
REWARD_FILE = "autoinstall_reward.py"
REWARD_FUNCTION = "compute_score"
RUN_TESTS = "run_tests"
RUN_TESTS_SCHEMA: dict[str, Any] = {"type": "function", "function": {
    "name": RUN_TESTS,
    "description": ("Run the task's tests on the current workdir. Returns which of them pass and the reward: 1.0 "
                    "when all of them pass, else 0.0. The result of your last run_tests call is your score."),
    "parameters": {"type": "object", "properties": {}, "required": []}}}
HINT = "\n\nCall `run_tests` to check your work: the result of your last `run_tests` call is your score."


class VerlTaskRow(VerlRow):
    agent_name: str = AGENT_LOOP


def task_tools_config() -> dict[str, Any]:
    """tools.yaml: the agent tools plus run_tests."""
    entries = tools_config()["tools"]
    entries.append({"class_name": TOOL_CLASS, "config": {"type": "native", "tool": RUN_TESTS},
                    "tool_schema": RUN_TESTS_SCHEMA})
    return {"tools": entries}


def row(te: TaskEntry, index: int, image: str) -> VerlTaskRow:
    task = te.task.model_copy(update={"image": image})
    create = {"task": task.model_dump_json(), "deselected": [d.test for d in te.entry.spec.deselected]}
    names = [t["config"]["tool"] for t in task_tools_config()["tools"]]
    truth = {"FAIL_TO_PASS": task.FAIL_TO_PASS, "PASS_TO_PASS": task.PASS_TO_PASS}
    return VerlTaskRow(
        data_source=DATA_SOURCE,
        prompt=[{"role": "system", "content": SYSTEM_PROMPT.format(workdir=task.workdir)},
                {"role": "user", "content": instruction(te) + HINT}],
        ability=ABILITY,
        reward_model={"style": "rule", "ground_truth": json.dumps(truth)},
        extra_info={"index": index, "instance_id": task.instance_id, "autoinstall_id": te.entry.record.id,
                    "format": format_version("verl"), "need_tools_kwargs": True, "kind": task.kind,
                    "difficulty": task.difficulty or "unknown",
                    "verification": verification_counts(te.entry.spec),
                    "tools_kwargs": {name: {"create_kwargs": create} for name in names}})


def write(tasks: list[TaskEntry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """verl.parquet, tools.yaml and autoinstall_reward.py, in OUT."""
    # pyarrow is optional (export_tasks checked it): only the verl export loads it
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [row(te, i, refs[te.task.image]).model_dump(mode="json") for i, te in enumerate(tasks)]
    pq.write_table(pa.Table.from_pylist(rows), out / FILE)
    header = (f"# {format_version('verl')}: the agent tools and run_tests, in verl's tool-config format "
              "(actor_rollout_ref.rollout.multi_turn.tool_config_path); the reward: "
              f"reward.custom_reward_function.path={REWARD_FILE} name={REWARD_FUNCTION}.\n")
    (out / TOOLS_FILE).write_text(header + yaml.safe_dump(task_tools_config(), sort_keys=False))
    shutil.copy(TEMPLATES / "verl_reward.py", out / REWARD_FILE)
    return [FILE, TOOLS_FILE, REWARD_FILE]
