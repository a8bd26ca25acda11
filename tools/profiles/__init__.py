"""Scaffold profiles: the tool names and arguments a model was trained with, served by our tools.

A profile gives the OpenAI schemas a model sees (`schemas()`) and translates each call it makes into
one of our tools (`translate()`); `call()` does both and runs it. Profiles:

- "default": our own tools (read_file, edit_file, create_file, search, lint, terminal).
- "anthropic": `bash(command, restart)` and `str_replace_based_edit_tool` (alias `str_replace_editor`)
  with command view | create | str_replace | insert (undo_edit is refused with a reason).
- "openhands": `execute_bash(command, is_input, timeout)` and `str_replace_editor` as above.
- "cursor": `read_file`, `list_dir`, `run_terminal_cmd`, `grep_search`, `search_replace`.

Parameters are flat scalars except `view_range` ([start, end], an integer array in both Anthropic's
and OpenHands' editors). `insert` has no tool of its own here: it reads the file and rewrites it.
"""

from __future__ import annotations

from tools.profiles import anthropic, cursor, openhands
from tools.profiles.base import INSERT, Call, Profile, ProfileTool, Translation, UnknownProfileError

PROFILES: dict[str, Profile] = {
    "default": Profile("default"),
    "anthropic": anthropic.PROFILE,
    "openhands": openhands.PROFILE,
    "cursor": cursor.PROFILE,
}


def get_profile(name: str) -> Profile:
    """The profile called `name`; UnknownProfileError (listing the available ones) otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        msg = f"unknown tool profile {name!r}; available profiles: {', '.join(PROFILES)}"
        raise UnknownProfileError(msg) from None


__all__ = ["INSERT", "PROFILES", "Call", "Profile", "ProfileTool", "Translation", "UnknownProfileError",
           "get_profile"]
