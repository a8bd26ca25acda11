"""bench/mix.py: the benches' tool calls taken from the workspace they run in, played on workspaces of several
shapes and languages (LocalSandbox, the real tool server): every call of the rollout bench's load succeeds, and
a workspace that cannot serve it stops the bench before the run, saying why."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from bench.mix import (
    BAND,
    READ_SLIDE,
    SEARCH_PATTERN,
    Candidate,
    Mix,
    discover,
    parse_listing,
    pattern_for,
    ranked,
    read_window,
)
from bench.rollout import Load
from envs.local import LocalSandbox
from tools import ToolResult, ToolSession, call_tool


def _lines(n: int, width: int = 30, word: str = "def f") -> str:
    return "".join(f"{word}{i}(): pass  # {'x' * width}\n" for i in range(n))


TREES: dict[str, dict[str, str]] = {
    "python, one 38-line file": {"pkg/core.py": _lines(38), "pyproject.toml": "[project]\nname = 'p'\n"},
    "python, 4-40 kB file past 200 lines": {"a/small.py": "import os\n", "b/big.py": _lines(300, 60)},
    "go module": {"go.mod": "module m\n", "m/m.go": "package m\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"},
    "node, node_modules and no git": {"package.json": "{}\n", "lib/index.js": "export const add = (a, b) => a + b;\n",
                                      "node_modules/dep/index.js": _lines(400, 40)},
    "java, none of the preferred words": {"src/Color.java": "enum Color { RED, GREEN }\n"},
    "rust, a 4.5 kB file of 3 lines": {"src/lib.rs": "// " + "y" * 4500 + "\n\n" + "pub fn f() {}\n"},
    "docs only": {"README.md": "A tree with words and no code.\n", "data.bin": "\0" * 10},
}
GIT = {"go module", "python, 4-40 kB file past 200 lines"}


@pytest.fixture(scope="module")
def sessions() -> Iterator[dict[str, ToolSession]]:
    """One LocalSandbox and tool session per tree."""
    opened: dict[str, ToolSession] = {}
    boxes = []
    try:
        for name, files in TREES.items():
            sb = LocalSandbox().start()
            boxes.append(sb)
            for path, text in files.items():
                sb.write_file(path, text.encode())
            if name in GIT:
                r = sb.exec("git init -q && git add -A")
                assert r.ok, r.output
            opened[name] = ToolSession(sb).start()
        yield opened
    finally:
        for s in opened.values():
            s.close()
        for sb in boxes:
            sb.stop()


def _call(session: ToolSession) -> Any:
    def call(name: str, args: dict[str, Any]) -> ToolResult:
        return call_tool(session, name, args)

    return call


@pytest.mark.parametrize("tree", list(TREES))
@pytest.mark.slow
def test_every_call_of_the_load_succeeds(tree: str, sessions: dict[str, ToolSession]) -> None:
    call = _call(sessions[tree])
    mix = discover(call, tree)
    assert mix.path in TREES[tree] and not mix.path.startswith("node_modules/")
    assert mix.lines == TREES[tree][mix.path].count("\n")  # the real count, as the server reads it
    load = Load(SimpleNamespace(step=call), mix)  # type: ignore[arg-type]  # the bench's own load, untimed
    load.prepare()
    for _ in range(4 * READ_SLIDE + 3):  # every first line the reads take, the edit made and undone many times
        load.call()
    assert not load.errors, load.errors[:3]
    assert set(load.by_tool) == {"read_file", "search", "edit_file", "terminal"}


def test_the_file_is_the_one_the_figures_were_measured_on(sessions: dict[str, ToolSession]) -> None:
    """Source code in the 4-40 kB band first, so the pattern and windows are those of the earlier runs."""
    mix = discover(_call(sessions["python, 4-40 kB file past 200 lines"]), "big")
    assert (mix.path, mix.lines, mix.pattern) == ("b/big.py", 300, SEARCH_PATTERN)
    assert [read_window(k, mix.lines) for k in (0, 4, 48, 52)] == [(1, 80), (5, 84), (49, 128), (3, 82)]


def test_a_pattern_of_the_files_own_words_when_the_preferred_one_is_absent(sessions: dict[str, ToolSession]) -> None:
    assert discover(_call(sessions["java, none of the preferred words"]), "java").pattern == "enum"
    assert discover(_call(sessions["docs only"]), "docs").path == "README.md"


def test_a_workspace_without_a_readable_text_file_stops_the_bench_before_the_run() -> None:
    with LocalSandbox() as sb, ToolSession(sb) as session:
        sb.write_file("empty.py", b"")
        sb.write_file("blob.txt", bytes(range(256)) * 40)
        with pytest.raises(SystemExit, match="bare cannot serve the bench's load: no readable.*--env ID"):
            discover(_call(session), "bare")


def test_a_terminal_command_that_fails_stops_the_bench_before_the_run(sessions: dict[str, ToolSession]) -> None:
    with pytest.raises(SystemExit, match="terminal .*exit code 127.*--terminal-command"):
        discover(_call(sessions["go module"]), "go", command="no-such-program-here")


def test_candidates_are_ranked_source_first_then_by_nearness_to_the_band() -> None:
    rows = ("12 docs/guide.md\n5000 docs/long.md\n900 a.py\n2000 b.go\n0 empty.rs\n90000 gen.ts\n39999 c.java\n"
            "4001 d.rs\n[exit code 0]\n2000 b.go\n")
    files = parse_listing(rows)
    assert len(files) == 8 and Candidate("b.go", 2000) in files
    assert [f.path for f in ranked(files)] == ["c.java", "d.rs", "b.go", "a.py", "gen.ts", "docs/long.md",
                                               "docs/guide.md"]
    assert BAND == (4000, 40000)


@pytest.mark.parametrize(("lines", "starts"), [(1, {1}), (6, set(range(1, 7))), (38, set(range(1, 39))),
                                                (50, set(range(1, 51))), (3000, set(range(1, 51)))])
def test_reads_start_inside_the_file(lines: int, starts: set[int]) -> None:
    windows = [read_window(k, lines) for k in range(400)]
    assert {s for s, _ in windows} == starts
    assert all(e - s == 79 for s, e in windows)
    mix = Mix("f", lines, "x")
    assert {mix.call(k, 0)[1]["start_line"] for k in range(0, 400, 4)} <= starts


def test_pattern_for() -> None:
    assert pattern_for("package m\nfunc Add() {}\n", SEARCH_PATTERN) == SEARCH_PATTERN
    assert pattern_for("{\"name\": \"x\", \"name2\": 1, \"name\": 2}", SEARCH_PATTERN) == "name"
    assert pattern_for("1 2 3 ;;", SEARCH_PATTERN) is None


def test_git_is_asked_first_when_it_knows_the_files(sessions: dict[str, ToolSession]) -> None:
    """Tracked files only: an untracked larger file is not read."""
    session = sessions["go module"]
    session.sandbox.write_file("m/untracked.go", _lines(200, 40, "func g").encode())
    try:
        assert discover(_call(session), "go").path == "m/m.go"
    finally:
        assert session.sandbox.exec("rm m/untracked.go").ok
