"""read_file, edit_file, create_file, search and lint through a real sandbox (local and Docker)."""
from __future__ import annotations

import time
import uuid

import pytest

from envs.base import Sandbox
from tools import ToolSession, call_tool


def _name(suffix: str) -> str:
    return f"scratch/{uuid.uuid4().hex[:8]}{suffix}"


def test_read_numbers_lines_and_honours_range(session: ToolSession) -> None:
    r = call_tool(session, "read_file", {"path": "pkg/core.py", "start_line": 3, "end_line": 4})
    assert not r.is_error
    assert r.output == "     3\tLIMIT = 10\n     4\t\n"


@pytest.mark.parametrize(("path", "expect"), [
    ("nope.py", "does not exist"),
    ("data.bin", "binary file"),
    ("../../etc/passwd", "outside the workspace"),
    ("/etc/passwd", "outside the workspace"),
    ("rootlink", "outside the workspace"),
    ("rootlink/etc/passwd", "through a symlink"),
    ("passwdlink", "through a symlink"),
])
def test_read_bad_paths_are_results(session: ToolSession, path: str, expect: str) -> None:
    r = call_tool(session, "read_file", {"path": path})
    assert expect in r.output
    assert r.is_error == (path != "data.bin")
    assert "root:" not in r.output


def test_read_directory_lists_it(session: ToolSession) -> None:
    r = call_tool(session, "read_file", {"path": "pkg"})
    assert "is a directory" in r.output and "core.py" in r.output


def test_read_symlink_inside_workspace(session: ToolSession) -> None:
    assert "class Greeter" in call_tool(session, "read_file", {"path": "corelink"}).output


def test_read_200mb_file_is_capped_and_fast(session: ToolSession, sandbox: Sandbox) -> None:
    made = sandbox.exec("yes 'a line of text in a very large file' | head -c 200000000 > big.txt")
    assert made.ok, made.output
    try:
        start = time.monotonic()
        r = call_tool(session, "read_file", {"path": "big.txt"})
        assert time.monotonic() - start < 2.0
        assert r.output.count("\n") < 2100 and "start_line=" in r.output
        assert r.data is not None and r.data["clipped"] and r.data["last_line"] <= 2000
        last = r.data["last_line"]
        nxt = call_tool(session, "read_file", {"path": "big.txt", "start_line": last + 1, "end_line": last + 2})
        assert nxt.output.startswith(f"{last + 1:6d}\t")
    finally:
        sandbox.exec(["rm", "-f", "big.txt"])


def test_edit_unique_match_writes_and_shows_snippet(session: ToolSession, sandbox: Sandbox) -> None:
    path = _name(".py")
    call_tool(session, "create_file", {"path": path, "content": "a = 1\nb = 2\nc = 3\n"})
    r = call_tool(session, "edit_file", {"path": path, "old_str": "b = 2", "new_str": "b = 20"})
    assert not r.is_error, r.output
    assert "     2\tb = 20" in r.output
    assert sandbox.read_file(path) == b"a = 1\nb = 20\nc = 3\n"


def test_edit_non_unique_changes_nothing_and_gives_lines(session: ToolSession, sandbox: Sandbox) -> None:
    before = sandbox.read_file("pkg/core.py")
    r = call_tool(session, "edit_file", {"path": "pkg/core.py", "old_str": "# needle", "new_str": "#"})
    assert r.is_error and "2 times" in r.output and "lines 14, 15" in r.output
    missing = call_tool(session, "edit_file", {"path": "pkg/core.py", "old_str": "nothing like it", "new_str": ""})
    assert missing.is_error and "not found" in missing.output
    assert sandbox.read_file("pkg/core.py") == before


def test_edit_replace_all_and_keeps_mode(session: ToolSession, sandbox: Sandbox) -> None:
    r = call_tool(session, "edit_file", {"path": "pkg/script.sh", "old_str": "one", "new_str": "two",
                                         "replace_all": True})
    assert not r.is_error, r.output
    assert sandbox.exec(["stat", "-c", "%a", "pkg/script.sh"]).stdout.strip() == "755"
    assert sandbox.exec(["pkg/script.sh"]).stdout == "two\n"


def test_edit_reports_new_python_syntax_error(session: ToolSession) -> None:
    path = _name(".py")
    call_tool(session, "create_file", {"path": path, "content": "def f():\n    return 1\n"})
    r = call_tool(session, "edit_file", {"path": path, "old_str": "return 1", "new_str": "return (1"})
    assert not r.is_error and "syntax error" in r.output
    assert r.data is not None and r.data["syntax_errors"][0]["line"] >= 2


def test_edit_reports_only_new_tree_sitter_errors(session: ToolSession) -> None:
    path = _name(".js")
    call_tool(session, "create_file", {"path": path, "content": "const a = ;\nfunction f() {}\nconst b = 1;\n"})
    fine = call_tool(session, "edit_file", {"path": path, "old_str": "const b = 1;", "new_str": "const b = 2;"})
    assert "syntax error" not in fine.output, fine.output
    broken = call_tool(session, "edit_file", {"path": path, "old_str": "const b = 2;", "new_str": "const b = ;"})
    assert "syntax error at line 3" in broken.output


def test_create_refuses_overwrite_and_makes_parents(session: ToolSession, sandbox: Sandbox) -> None:
    path = _name("/deep/new.txt")
    assert not call_tool(session, "create_file", {"path": path, "content": "x\n"}).is_error
    again = call_tool(session, "create_file", {"path": path, "content": "y\n"})
    assert again.is_error and "already exists" in again.output
    assert sandbox.read_file(path) == b"x\n"
    assert not call_tool(session, "create_file", {"path": path, "content": "y\n", "overwrite": True}).is_error
    assert sandbox.read_file(path) == b"y\n"
    outside = call_tool(session, "create_file", {"path": "../escape.txt", "content": "x"})
    assert outside.is_error and "outside the workspace" in outside.output


def test_search_regex_skips_vendored_and_binary(session: ToolSession) -> None:
    r = call_tool(session, "search", {"pattern": r"needle\b"})
    lines = r.output.splitlines()
    assert "pkg/core.py:14:    value = x + 1  # needle" in lines
    assert "README.md:2:needle in the readme" in lines
    assert not any(s.startswith(("node_modules", "data.bin")) for s in lines)


def test_search_options(session: ToolSession) -> None:
    assert "README.md" not in call_tool(session, "search", {"pattern": "needle", "glob": "*.py"}).output
    assert call_tool(session, "search", {"pattern": "NEEDLE", "case_sensitive": False, "path": "README.md"}
                     ).output.startswith("README.md:2:")
    assert "pkg/core.py:10:" in call_tool(session, "search", {"pattern": "{self.greeting}", "fixed_string": True}).output
    capped = call_tool(session, "search", {"pattern": "e", "max_results": 2})
    assert len(capped.output.splitlines()) == 3 and "more matches" in capped.output


def test_search_invalid_regex_is_a_result(session: ToolSession) -> None:
    r = call_tool(session, "search", {"pattern": "foo(["})
    assert r.is_error and "invalid regular expression" in r.output


@pytest.mark.parametrize(("name", "expect"), [
    ("Greeter", "pkg/core.py:6: [class]"), ("greet", "pkg/core.py:9: [function]"),
    ("LIMIT", "pkg/core.py:3: [variable]"), ("render", "web/app.js:1: [function]"),
    ("Shape", "web/types.ts:1: [interface]"), ("Serve", "go/main.go:5: [function]"),
    ("Server", "go/main.go:3: [type]"), ("Parser", "rs/lib.rs:1: [struct]"), ("parse", "rs/lib.rs:3: [fn]"),
    ("Registry", "jv/Registry.java:2: [class]"), ("MAX_SIZE", "jv/Registry.java:3: [field]"),
    ("register", "jv/Registry.java:6: [method]"), ("Listener", "jv/Registry.java:8: [interface]"),
    ("Entry", "jv/Registry.java:9: [record]"),
])
def test_search_symbol_finds_definitions(session: ToolSession, name: str, expect: str) -> None:
    r = call_tool(session, "search", {"pattern": name, "mode": "symbol"})
    assert expect in r.output, r.output
    assert "node_modules" not in r.output


def test_lint_reports_undefined_names_and_syntax_errors(session: ToolSession) -> None:
    call_tool(session, "create_file", {"path": "lintme/broken.ts", "content": "let x: number = ;\n"})
    call_tool(session, "create_file", {"path": "lintme/Broken.java", "content": "class Broken {\n  void f( }\n"})
    r = call_tool(session, "lint", {"path": "."})
    assert "pkg/bad.py:2:12: F821 undefined name 'undefined_thing'" in r.output
    assert "lintme/broken.ts:1:" in r.output and "lintme/Broken.java:2:" in r.output
    assert "jv/Registry.java" not in r.output
    assert r.data is not None and {d["code"] for d in r.data["diagnostics"]} >= {"F821", "E999"}
    clean = call_tool(session, "lint", {"path": "pkg/core.py"})
    assert clean.output.startswith("No problems found in 1 file")
