"""verl multi-turn RL data: OUT/verl.parquet rows and OUT/tools.yaml (verl's tool-config format).

Each row's extra_info.tools_kwargs gives every tool the same create_kwargs: the image, workdir, test command
and test selection, and `runtime_row` (the JSON text of a swebench row, which
`envs.runtime.RuntimeSpec.from_export_row` reads), so a tool can start the episode's container.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from envs.export import swebench
from envs.export.common import WORKDIR, Entry, ExportError, ExportOptions, format_version, verification_counts
from envs.export.harbor import instruction
from tools import openai_schemas

FILE = "verl.parquet"
TOOLS_FILE = "tools.yaml"
DATA_SOURCE = "autoinstall"
ABILITY = "software-engineering"
TOOL_CLASS = "envs.verl_tool.AutoinstallTool"
"""The verl BaseTool class tools.yaml names: an adapter running each call through envs.runtime.Environment
(envs/verl_tool.py: all tools of one trajectory share one container)."""
SYSTEM_PROMPT = ("You are a software engineer working in a repository inside a container. Use the tools to "
                 "read, search, edit and lint files and to run commands; paths are relative to {workdir}.")


class VerlRow(BaseModel):
    """One parquet row, in the layout verl's RLHFDataset and multi-turn rollout read."""

    data_source: str
    prompt: list[dict[str, str]]
    ability: str
    reward_model: dict[str, str]
    extra_info: dict[str, Any]


def require_pyarrow() -> None:
    """Raise ExportError, saying how to fix it, unless pyarrow can be imported."""
    try:  # pyarrow is optional: only the verl export needs it
        import pyarrow  # noqa: F401
    except ImportError as e:
        msg = ("The verl export writes parquet, which needs pyarrow: install it (`uv pip install pyarrow` or "
               "`pip install pyarrow`) and run the export again.")
        raise ExportError(msg) from e


def tool_names() -> list[str]:
    return [s["function"]["name"] for s in openai_schemas()]


def row(entry: Entry, index: int, image: str) -> VerlRow:
    runtime_row = swebench.row(entry, image)
    create = {"image": image, "workdir": WORKDIR, "test_cmd": entry.test_command,
              "tests": runtime_row.PASS_TO_PASS, "runtime_row": runtime_row.model_dump_json()}
    selection = {"PASS_TO_PASS": runtime_row.PASS_TO_PASS, "FAIL_TO_PASS": runtime_row.FAIL_TO_PASS}
    return VerlRow(
        data_source=DATA_SOURCE,
        prompt=[{"role": "system", "content": SYSTEM_PROMPT.format(workdir=WORKDIR)},
                {"role": "user", "content": instruction(entry, "template")}],
        ability=ABILITY,
        reward_model={"style": "rule", "ground_truth": json.dumps(selection)},
        extra_info={"index": index, "instance_id": runtime_row.instance_id, "autoinstall_id": entry.record.id,
                    "format": format_version("verl"), "need_tools_kwargs": True,
                    "verification": verification_counts(entry.spec),
                    "tools_kwargs": {name: {"create_kwargs": create} for name in tool_names()}})


def tools_config() -> dict[str, Any]:
    """tools.yaml: one entry per tool, `class_name`, `config` (type native) and its OpenAI `tool_schema`."""
    return {"tools": [{"class_name": TOOL_CLASS, "config": {"type": "native", "tool": s["function"]["name"]},
                       "tool_schema": s} for s in openai_schemas()]}


def write(entries: list[Entry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/verl.parquet and OUT/tools.yaml."""
    require_pyarrow()
    # pyarrow is optional (checked just above): only the verl export loads it
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [row(e, i, refs[e.spec.image or ""]).model_dump(mode="json") for i, e in enumerate(entries)]
    pq.write_table(pa.Table.from_pylist(rows), out / FILE)
    header = (f"# {format_version('verl')}: the agent tools, in verl's tool-config format "
              "(actor_rollout_ref.rollout.multi_turn.tool_config_path).\n")
    (out / TOOLS_FILE).write_text(header + yaml.safe_dump(tools_config(), sort_keys=False))
    return [FILE, TOOLS_FILE]
