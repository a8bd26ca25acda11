"""Anthropic's profile: `bash` and `str_replace_based_edit_tool` (alias `str_replace_editor`)."""

from __future__ import annotations

from pydantic import Field

from tools.profiles.base import BASH_DESCRIPTION, Call, Profile, ProfileArgs, ProfileTool, Translation, need
from tools.profiles.editor import EDITOR_DESCRIPTION, EDITOR_NAME, EditorArgs, editor


class BashArgs(ProfileArgs):
    command: str | None = Field(None, description="The bash command to run.")
    restart: bool = Field(False, description="Restart the shell (cd, variables and background jobs are reset).")


def _bash(a: BashArgs) -> Translation:
    if a.restart:  # the shell's `exit` ends it; the next command starts a new one in the workspace root
        return Call("terminal", {"command": "exit 0"})
    return Call("terminal", {"command": need(a.command, "a command", "bash")})


PROFILE = Profile(
    "anthropic",
    {
        "bash": ProfileTool("bash", BASH_DESCRIPTION, BashArgs, _bash),
        EDITOR_NAME: ProfileTool(EDITOR_NAME, EDITOR_DESCRIPTION, EditorArgs, editor),
    },
    aliases={"str_replace_editor": EDITOR_NAME},
)
