"""The OpenHands profile: `execute_bash(command, is_input, timeout)` and `str_replace_editor`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tools.base import ToolError
from tools.profiles.base import BASH_DESCRIPTION, Call, Profile, ProfileArgs, ProfileTool, Translation
from tools.profiles.editor import EDITOR_DESCRIPTION, EditorArgs, editor


class ExecuteBashArgs(ProfileArgs):
    command: str = Field(description="The bash command to run.")
    is_input: Literal["true", "false"] = Field(
        "false",
        description="Whether the command is input to a "
        "running process (not supported: every command is new).",
    )
    timeout: float | None = Field(None, gt=0, description="Seconds before the command is killed.")


def _execute_bash(a: ExecuteBashArgs) -> Translation:
    if a.is_input == "true":
        raise ToolError(
            "is_input is not supported: each command runs to completion; "
            "run the whole command non-interactively instead"
        )
    return Call("terminal", {"command": a.command, "timeout_s": a.timeout})


PROFILE = Profile(
    "openhands",
    {
        "execute_bash": ProfileTool("execute_bash", BASH_DESCRIPTION, ExecuteBashArgs, _execute_bash),
        "str_replace_editor": ProfileTool("str_replace_editor", EDITOR_DESCRIPTION, EditorArgs, editor),
    },
)
