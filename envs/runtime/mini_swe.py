"""mini-swe-agent's environment interface over an autoinstall Environment: the agent's bash actions run in
the episode's persistent terminal (through the tool server), and the episode is scored by
`Environment.reward()`.

mini-swe-agent (PyPI `mini-swe-agent`, 2.x) is not a dependency of this project: run it beside it, e.g.
`uv run --with mini-swe-agent python my_rollout.py`, where

    from minisweagent.agents.default import DefaultAgent
    with Environment(spec) as env:
        env.reset()
        agent = DefaultAgent(model, MiniSweEnvironment(env), **agent_config)
        result = agent.run("fix the failing test")
        reward = env.reward()

This module imports nothing of mini-swe-agent until the agent submits (its `Submitted` exception).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from envs.runtime.environment import Environment

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""What mini-swe-agent's agents print as the first line of a command's output to submit."""
_EXIT_LINE = re.compile(r"\n?\[exit code -?\d+\]\Z")


class MiniSweConfig(BaseModel):
    """What mini-swe-agent reads of an environment's config (templates, trajectories)."""

    cwd: str = ""
    timeout: int = 120
    image: str = ""
    environment_class: str = "autoinstall"


class MiniSweEnvironment:
    """The `minisweagent.Environment` protocol: execute(action), get_template_vars(), serialize().

    Commands run in the episode's persistent shell (cd and variables carry over, as mini-swe-agent's own
    environments do not); a timed-out command is killed and reported with returncode 124.
    """

    def __init__(self, env: Environment, *, timeout: int = 120, tool: str = "terminal") -> None:
        """Args:
            env: an Environment whose episode is running (reset() called).
            timeout: seconds per command by default.
            tool: the profile's name for our terminal tool ("terminal" in the default profile).
        """
        self.env = env
        self.tool = tool
        self.config = MiniSweConfig(cwd=env.spec.workdir, timeout=timeout, image=env.spec.image)

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run the action's bash command; returns output, returncode and exception_info as mini-swe-agent's
        environments do. Raises minisweagent.exceptions.Submitted when the output starts with SUBMIT_MARKER."""
        command = str(action.get("command", ""))
        args: dict[str, Any] = {"command": command, "timeout_s": timeout or self.config.timeout}
        if cwd:
            args["cwd"] = cwd
        obs = self.env.step(self.tool, args)
        data = obs.data or {}
        code = int(data["exit_code"]) if "exit_code" in data else -1
        output = _EXIT_LINE.sub("", obs.output)
        info = "" if "exit_code" in data else f"the command could not run: {obs.output}"
        if data.get("timed_out"):
            info = f"the command timed out after {args['timeout_s']} s and was killed"
        result = {"output": output, "returncode": code, "exception_info": info}
        self._check_finished(result)
        return result

    @staticmethod
    def _check_finished(result: dict[str, Any]) -> None:
        lines = result["output"].lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT_MARKER and result["returncode"] == 0:
            from minisweagent.exceptions import Submitted  # optional dependency, only when the agent submits

            submission = "".join(lines[1:])
            raise Submitted({"role": "exit", "content": submission,
                             "extra": {"exit_status": "Submitted", "submission": submission}})

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {**self.config.model_dump(), "system": "Linux", "workdir": self.env.spec.workdir, **kwargs}

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment": self.config.model_dump(mode="json"),
                                    "environment_type": f"{type(self).__module__}.{type(self).__name__}"}}}


__all__ = ["SUBMIT_MARKER", "MiniSweConfig", "MiniSweEnvironment"]
