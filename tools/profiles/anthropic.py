"""Anthropic's profile: `bash` and `str_replace_based_edit_tool` (alias `str_replace_editor`)."""

from __future__ import annotations

from pydantic import Field

from tools.base import ToolResult
from tools.profiles.base import BASH_DESCRIPTION, Call, Profile, ProfileArgs, ProfileTool, Translation, need
from tools.profiles.editor import EDITOR_DESCRIPTION, EDITOR_NAME, EditorArgs, editor


class BashArgs(ProfileArgs):
    command: str | None = Field(None, description="The bash command to run.")
    restart: bool = Field(False, description="Restart the shell (each command already gets a fresh one).")


def _bash(a: BashArgs) -> Translation:
    if a.restart:
        return ToolResult(output="tool has been restarted.")
    return Call("terminal", {"command": need(a.command, "a command", "bash")})


PROFILE = Profile(
    "anthropic",
    {
        "bash": ProfileTool("bash", BASH_DESCRIPTION, BashArgs, _bash),
        EDITOR_NAME: ProfileTool(EDITOR_NAME, EDITOR_DESCRIPTION, EditorArgs, editor),
    },
    aliases={"str_replace_editor": EDITOR_NAME},
)
