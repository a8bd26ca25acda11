"""mini-swe-agent (from PyPI, beside the project's venv) runs an episode in an autoinstall Environment
through envs/runtime/mini_swe.py, driven by its own deterministic model; the reward is Environment.reward()."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.envs.conftest import RUN_LABEL
from tests.envs.test_runtime import runtime_image  # noqa: F401  (the fixture)

MINI_SWE_AGENT = "mini-swe-agent==2.4.6"
DRIVER = '''
import json, sys
from minisweagent.agents.default import DefaultAgent
from minisweagent.models.test_models import DeterministicModel, make_output
from envs.runtime import Environment, RuntimeSpec
from envs.runtime.mini_swe import SUBMIT_MARKER, MiniSweEnvironment

image, labels = sys.argv[1], json.loads(sys.argv[2])
steps = [
    ("look", "cd tests && export SUITE=tests && cd .. && grep -n 'a + b' calc.py"),
    ("fix sub", "sed -i '6s/a + b/a - b/' calc.py && sed -n 5,6p calc.py"),
    ("run the tests", "python -m pytest -q $SUITE 2>&1 | tail -1"),
    ("submit", "echo " + SUBMIT_MARKER + " && echo fixed sub"),
]
model = DeterministicModel(outputs=[make_output(text, [{"command": cmd}]) for text, cmd in steps])
spec = RuntimeSpec(image=image, test_command="python -m pytest tests")
with Environment(spec, labels=labels) as env:
    env.reset()
    before = env.reward().value
    agent = DefaultAgent(model, MiniSweEnvironment(env), system_template="You fix bugs.",
                         instance_template="{{task}}", step_limit=10, cost_limit=0)
    result = agent.run("Make tests/test_calc.py pass.")
    after = env.reward().value
observations = [m["content"] for m in agent.messages if m["role"] == "user"][1:]
print(json.dumps({"exit_status": result.get("exit_status"), "submission": result.get("submission"),
                  "before": before, "reward": after, "observations": observations}))
'''


@pytest.mark.docker
def test_mini_swe_agent_fixes_the_bug_and_gets_the_reward(runtime_image: str, tmp_path: Path) -> None:  # noqa: F811
    script = tmp_path / "drive.py"
    script.write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    env |= {"MSWEA_SILENT_STARTUP": "1", "MSWEA_GLOBAL_CONFIG_DIR": str(tmp_path / "mswea")}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(["uv", "run", "--quiet", "--with", MINI_SWE_AGENT, "python", str(script), runtime_image,
                           json.dumps(RUN_LABEL)], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["exit_status"] == "Submitted" and out["submission"].strip() == "fixed sub"
    assert (out["before"], out["reward"]) == (0.5, 1.0)
    look, fix, tests = out["observations"][:3]
    assert "<returncode>0</returncode>" in look and "2:    return a + b" in look
    assert "return a - b" in fix
    assert "2 passed" in tests  # $SUITE, exported in the first command, was still set: one shell throughout
