"""terminal, call_tool's error paths, concurrency and a dead server, through real sandboxes."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from envs.base import Sandbox
from envs.fake import FakeSandbox
from tools import ToolServerError, ToolSession, call_tool
from tools.session import ToolServerTimeout


def test_terminal_runs_in_workspace_with_exit_code(session: ToolSession) -> None:
    r = call_tool(session, "terminal", {"command": "cat README.md | head -1; echo err >&2; sh -c 'exit 3'"})
    assert r.output == "# demo\nerr\n[exit code 3]"
    assert r.data is not None and r.data["exit_code"] == 3 and not r.is_error
    sub = call_tool(session, "terminal", {"command": "pwd", "cwd": "pkg"})
    assert sub.output.splitlines()[0].endswith("/pkg")
    escape = call_tool(session, "terminal", {"command": "pwd", "cwd": "../.."})
    assert escape.is_error and "outside the workspace" in escape.output


def test_terminal_timeout_kills_the_group_and_session_survives(session: ToolSession) -> None:
    start = time.monotonic()
    r = call_tool(session, "terminal", {"command": "echo started; sleep 61 & sleep 61", "timeout_s": 1})
    assert time.monotonic() - start < 5
    assert r.is_error and "timed out after 1 s" in r.output and "started" in r.output
    assert r.data is not None and r.data["exit_code"] == 124
    survivors = "for p in /proc/[0-9]*; do tr '\\0' ' ' 2>/dev/null < $p/cmdline; echo; done | grep -c '^sleep 61 $'"
    assert call_tool(session, "terminal", {"command": survivors}).output.startswith("0\n")


def test_terminal_100mb_output_is_capped_quickly(session: ToolSession) -> None:
    start = time.monotonic()
    r = call_tool(session, "terminal", {"command": "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END"})
    assert time.monotonic() - start < 10
    assert len(r.output) < 40_000 and "bytes of output omitted" in r.output
    assert r.output.startswith("xxxx") and r.output.endswith("END\n[exit code 0]")
    assert r.data is not None and r.data["truncated"]


@pytest.mark.docker
@pytest.mark.parametrize("terminal", ["fresh", "persistent"])
def test_fork_bomb_is_contained_and_server_survives(sandbox: Sandbox, terminal: str) -> None:
    if sandbox.kind != "docker":
        pytest.skip("only the Docker sandbox has a pids limit; a fork bomb on the host is not a test")
    with ToolSession(sandbox, terminal=terminal) as session:
        r = call_tool(session, "terminal", {"command": "bomb() { bomb | bomb & }; bomb; sleep 3",
                                            "timeout_s": 3})
        assert r.data is not None
        after = call_tool(session, "read_file", {"path": "README.md"})
        assert after.output.startswith("     1\t# demo"), after.output
        # (a persistent shell shows first what the dying bomb printed after the call ended)
        assert call_tool(session, "terminal", {"command": "echo alive"}).output.endswith("alive\n[exit code 0]")
    # closing the session killed the shell's whole session: the sandbox can fork again
    assert sandbox.exec("true", timeout=30).ok


@pytest.mark.parametrize(("name", "args", "expect"), [
    ("rm_rf", {}, "unknown tool 'rm_rf'; available tools: read_file"),
    ("read_file", '{"path": "README.md"', "not valid JSON"),
    ("read_file", "[1, 2]", "must be a JSON object"),
    ("read_file", {"path": "README.md", "start_line": "abc"}, "start_line: Input should be a valid integer"),
    ("read_file", {"file": "README.md"}, "file: not an argument of read_file"),
    ("edit_file", {"path": "README.md"}, "old_str: Field required"),
])
def test_call_tool_turns_bad_calls_into_error_results(session: ToolSession, name: str, args: object,
                                                       expect: str) -> None:
    r = call_tool(session, name, args)  # type: ignore[arg-type]
    assert r.is_error and expect in r.output


def test_json_string_arguments_work(session: ToolSession) -> None:
    assert "# demo" in call_tool(session, "read_file", '{"path": "README.md"}').output


def test_32_concurrent_callers_get_their_own_answers(session: ToolSession) -> None:
    errors: list[str] = []

    def worker(i: int) -> None:
        for j in range(20):
            line = (i * 20 + j) % 15 + 1
            if j % 5 == 4:
                got = session.call("terminal", command=f"echo {i}-{j}")["output"]
                want = f"{i}-{j}\n"
            else:
                got = session.call("read", path="pkg/core.py", start_line=line, end_line=line)["output"]
                want = f"{line:6d}\t"
            if not got.startswith(want):
                errors.append(f"{i}-{j}: {got!r} != {want!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]


def test_call_timeout_raises_instead_of_hanging(session: ToolSession) -> None:
    with pytest.raises(ToolServerTimeout):
        session.call("terminal", command="sleep 2", timeout_s=5, call_timeout=0.3)
    assert session.call("read", path="README.md")["output"].startswith("     1\t")


@pytest.fixture
def own_session(sandbox: Sandbox) -> Iterator[ToolSession]:
    with ToolSession(sandbox) as s:
        yield s


def test_dead_server_gives_a_clear_error(sandbox: Sandbox, own_session: ToolSession) -> None:
    caller = threading.Thread(target=lambda: pytest.raises(ToolServerError, own_session.call, "terminal",
                                                           command="sleep 30"))
    caller.start()
    time.sleep(0.3)
    assert sandbox.exec(f"kill -9 {own_session.info['pid']}").ok
    caller.join(5)
    assert not caller.is_alive()
    with pytest.raises(ToolServerError, match="not running"):
        own_session.call("read", path="README.md")
    r = call_tool(own_session, "read_file", {"path": "README.md"})
    assert r.is_error and "tool server" in r.output


def test_a_greeting_that_arrives_before_start_waits_for_it_is_not_lost() -> None:
    for _ in range(20):  # the reader thread often wins the race against start(); it must not matter
        sandbox = FakeSandbox(stream_handler=lambda data: b"", stream_greeting=b'{"id": 0, "ok": true, "result": {"v": 1}}\n')
        with sandbox, ToolSession(sandbox) as session:
            assert session.info == {"v": 1}
