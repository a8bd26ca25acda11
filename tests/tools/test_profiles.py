"""Scaffold profiles: schemas, translation onto our tools, and the composite insert on real sessions."""

from __future__ import annotations

from typing import Any

import pytest

from tools import SCALAR_TYPES, TOOLS, ToolSession, call_tool
from tools.base import ToolResult
from tools.profiles import INSERT, PROFILES, Call, UnknownProfileError, get_profile


def _error(result: object) -> str:
    assert isinstance(result, ToolResult) and result.is_error, result
    return result.output


@pytest.mark.parametrize("name", list(PROFILES))
def test_schemas_are_openai_functions_with_flat_parameters(name: str) -> None:
    profile = get_profile(name)
    schemas = profile.schemas()
    assert [s["function"]["name"] for s in schemas] == profile.names()
    for s in schemas:
        params = s["function"]["parameters"]
        assert s["type"] == "function" and s["function"]["description"]
        assert params["additionalProperties"] is False and set(params["required"]) <= set(
            params["properties"]
        )
        for arg, prop in params["properties"].items():
            if arg == "view_range":  # the one array, as in Anthropic's and OpenHands' editors
                assert prop["type"] == "array" and prop["items"] == {"type": "integer"}
            else:
                assert prop["type"] in SCALAR_TYPES, (s["function"]["name"], arg, prop)


def test_profile_tool_names() -> None:
    assert get_profile("default").names() == list(TOOLS)
    assert get_profile("anthropic").names() == ["bash", "str_replace_based_edit_tool"]
    assert get_profile("openhands").names() == ["execute_bash", "str_replace_editor"]
    assert get_profile("cursor").names() == [
        "read_file",
        "list_dir",
        "run_terminal_cmd",
        "grep_search",
        "search_replace",
    ]


def test_unknown_profile_lists_the_available_ones() -> None:
    with pytest.raises(UnknownProfileError, match="default, anthropic, openhands, cursor"):
        get_profile("claude")


@pytest.mark.parametrize(
    ("profile", "tool"),
    [
        ("anthropic", "str_replace_based_edit_tool"),
        ("anthropic", "str_replace_editor"),
        ("openhands", "str_replace_editor"),
    ],
)
def test_editor_commands_map_onto_our_tools(profile: str, tool: str) -> None:
    p = get_profile(profile)
    assert p.translate(tool, {"command": "view", "path": "/workspace/a.py"}) == Call(
        "read_file", {"path": "/workspace/a.py", "start_line": None, "end_line": None}
    )
    assert p.translate(tool, '{"command": "view", "path": "a.py", "view_range": [3, 9]}') == Call(
        "read_file", {"path": "a.py", "start_line": 3, "end_line": 9}
    )
    assert p.translate(tool, {"command": "view", "path": "a.py", "view_range": [3, -1]}) == Call(
        "read_file", {"path": "a.py", "start_line": 3, "end_line": None}
    )
    assert p.translate(tool, {"command": "create", "path": "b.py", "file_text": "x = 1\n"}) == Call(
        "create_file", {"path": "b.py", "content": "x = 1\n"}
    )
    assert p.translate(
        tool, {"command": "str_replace", "path": "b.py", "old_str": "x", "new_str": "y"}
    ) == Call("edit_file", {"path": "b.py", "old_str": "x", "new_str": "y"})
    assert p.translate(tool, {"command": "str_replace", "path": "b.py", "old_str": "x"}) == Call(
        "edit_file", {"path": "b.py", "old_str": "x", "new_str": ""}
    )
    assert p.translate(tool, {"command": "insert", "path": "b.py", "insert_line": 2, "new_str": "z"}) == Call(
        INSERT, {"path": "b.py", "line": 2, "text": "z"}
    )
    assert "view_range" in _error(p.translate(tool, {"command": "view", "path": "a", "view_range": [0, 4]}))
    assert "file_text" in _error(p.translate(tool, {"command": "create", "path": "b.py"}))
    assert "insert_line" in _error(p.translate(tool, {"command": "insert", "path": "b.py", "new_str": "z"}))
    assert "undo_edit is not available" in _error(p.translate(tool, {"command": "undo_edit", "path": "b.py"}))
    assert "command" in _error(p.translate(tool, {"command": "delete", "path": "b.py"}))


def test_shell_tools() -> None:
    anthropic, openhands = get_profile("anthropic"), get_profile("openhands")
    assert anthropic.translate("bash", {"command": "ls"}) == Call("terminal", {"command": "ls"})
    assert anthropic.translate("bash", {"restart": True}) == Call("terminal", {"command": "exit 0"})
    assert "command" in _error(anthropic.translate("bash", {}))
    assert openhands.translate("execute_bash", {"command": "make", "timeout": 30}) == Call(
        "terminal", {"command": "make", "timeout_s": 30}
    )
    assert "is_input" in _error(openhands.translate("execute_bash", {"command": "y", "is_input": "true"}))


def test_cursor_tools() -> None:
    cursor = get_profile("cursor")
    assert cursor.translate(
        "read_file",
        {
            "target_file": "a.py",
            "start_line_one_indexed": 2,
            "end_line_one_indexed_inclusive": 5,
            "explanation": "look",
        },
    ) == Call("read_file", {"path": "a.py", "start_line": 2, "end_line": 5})
    assert cursor.translate(
        "read_file", {"target_file": "a.py", "should_read_entire_file": True, "start_line_one_indexed": 2}
    ) == Call("read_file", {"path": "a.py", "start_line": None, "end_line": None})
    assert cursor.translate("list_dir", {"relative_workspace_path": "src"}) == Call(
        "read_file", {"path": "src"}
    )
    assert cursor.translate("run_terminal_cmd", {"command": "ls"}) == Call("terminal", {"command": "ls"})
    assert "background" in _error(
        cursor.translate("run_terminal_cmd", {"command": "srv", "is_background": True})
    )
    assert cursor.translate(
        "grep_search", {"query": "def f", "include_pattern": "*.py", "case_sensitive": False}
    ) == Call("search", {"pattern": "def f", "glob": "*.py", "case_sensitive": False})
    assert cursor.translate(
        "search_replace", {"file_path": "a.py", "old_string": "a", "new_string": "b"}
    ) == Call("edit_file", {"path": "a.py", "old_str": "a", "new_str": "b"})


def test_model_mistakes_are_error_results() -> None:
    cursor = get_profile("cursor")
    assert "grep_search" in _error(cursor.translate("terminal", {"command": "ls"}))
    bad = _error(cursor.translate("read_file", {"path": "a.py"}))
    assert "path: not an argument of read_file" in bad and "target_file" in bad
    assert "not valid JSON" in _error(cursor.translate("read_file", "{oops"))
    assert "JSON object" in _error(cursor.translate("read_file", "[1]"))
    assert "read_file" in _error(get_profile("default").translate("bash", {}))


def test_every_translation_is_valid_for_our_tool() -> None:
    samples: dict[str, list[tuple[str, dict[str, Any]]]] = {
        "anthropic": [
            ("str_replace_editor", {"command": "view", "path": "a", "view_range": [1, 2]}),
            ("bash", {"command": "ls"}),
        ],
        "openhands": [("execute_bash", {"command": "ls", "timeout": 5})],
        "cursor": [
            ("read_file", {"target_file": "a"}),
            ("grep_search", {"query": "x"}),
            ("search_replace", {"file_path": "a", "old_string": "x", "new_string": "y"}),
        ],
    }
    for profile, calls in samples.items():
        for name, args in calls:
            call = get_profile(profile).translate(name, args)
            assert isinstance(call, Call)
            TOOLS[call.tool].args.model_validate(call.args)


def test_calls_run_in_a_real_session(session: ToolSession) -> None:
    anthropic = get_profile("anthropic")
    editor = "str_replace_based_edit_tool"
    assert not anthropic.call(
        session, editor, {"command": "create", "path": "prof/ins.py", "file_text": "a = 1\nb = 2"}
    ).is_error
    inserted = anthropic.call(
        session,
        editor,
        {"command": "insert", "path": "prof/ins.py", "insert_line": 1, "insert_text": "between = 1.5"},
    )
    assert not inserted.is_error and "after line 1" in inserted.output
    at_end = anthropic.call(
        session, editor, {"command": "insert", "path": "prof/ins.py", "insert_line": 3, "new_str": "c = 3\n"}
    )
    assert not at_end.is_error, at_end.output
    text = call_tool(session, "read_file", {"path": "prof/ins.py"}).output
    assert [line.split("\t", 1)[1] for line in text.splitlines()] == [
        "a = 1",
        "between = 1.5",
        "b = 2",
        "c = 3",
    ]
    assert (
        "past the end"
        in anthropic.call(
            session,
            editor,
            {"command": "insert", "path": "prof/ins.py", "insert_line": 9, "insert_text": "x"},
        ).output
    )
    assert anthropic.call(
        session, editor, {"command": "insert", "path": "prof/none.py", "insert_line": 0, "insert_text": "x"}
    ).is_error
    broken = anthropic.call(
        session,
        editor,
        {"command": "insert", "path": "prof/ins.py", "insert_line": 0, "insert_text": "def ("},
    )
    assert "syntax error" in broken.output
    cursor = get_profile("cursor")
    obs = cursor.call(
        session,
        "read_file",
        {"target_file": "prof/ins.py", "start_line_one_indexed": 2, "end_line_one_indexed_inclusive": 3},
    )
    assert "between" in obs.output and "c = 3" not in obs.output
