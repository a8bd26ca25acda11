"""The persistent terminal: one shell per session whose state carries over, a timeout that kills the
command's processes and not the shell, capped output, and the fresh-shell mode still available."""
from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from envs.base import Sandbox
from tools import ToolSession, call_tool
from tools.base import ToolResult
from tools.profiles import get_profile


@pytest.fixture
def shell(sandbox: Sandbox) -> Iterator[ToolSession]:
    with ToolSession(sandbox) as s:
        yield s


def run(session: ToolSession, command: str, **extra: object) -> ToolResult:
    return call_tool(session, "terminal", {"command": command, **extra})


def out(session: ToolSession, command: str, **extra: object) -> str:
    r = run(session, command, **extra)
    assert not r.is_error, r.output
    return r.output


def test_cd_and_exported_variables_carry_over(shell: ToolSession) -> None:
    out(shell, "cd pkg && export GREETING=hi && LOCAL_ONLY=x")
    assert out(shell, "pwd; echo $GREETING $LOCAL_ONLY; sh -c 'echo $GREETING'").splitlines()[:3] == [
        f"{shell.sandbox.workdir}/pkg", "hi x", "hi"]
    assert out(shell, "pwd", cwd="web").splitlines()[0].endswith("/web")  # cwd moves the shell
    assert out(shell, "pwd").splitlines()[0].endswith("/web")


def test_an_activated_venv_stays_active(shell: ToolSession) -> None:
    out(shell, "python3 -m venv --without-pip /tmp/venv-$$ && . /tmp/venv-$$/bin/activate", timeout_s=60)
    lines = out(shell, "echo $VIRTUAL_ENV; command -v python; type deactivate | head -1").splitlines()
    assert lines[0].startswith("/tmp/venv-") and lines[1] == f"{lines[0]}/bin/python"
    assert lines[2] == "deactivate is a function"
    out(shell, "deactivate; rm -rf /tmp/venv-$$")


def test_background_jobs_keep_running_between_calls(shell: ToolSession) -> None:
    out(shell, "sleep 60 & BG=$!")
    assert out(shell, "kill -0 $BG && echo running; jobs | wc -l").splitlines()[:2] == ["running", "1"]
    # its output reaches the next call instead of blocking on a full pipe
    out(shell, "(sleep 0.2; head -c 200000 /dev/zero | tr '\\0' y; echo; echo late) &")
    time.sleep(1.0)
    later = out(shell, "echo now")
    assert "late\nnow\n" in later and "bytes of output omitted" in later
    out(shell, "kill $BG; wait $BG 2>/dev/null; true")


def test_timeout_kills_the_command_group_not_the_shell(shell: ToolSession) -> None:
    out(shell, "export KEEP=1; cd pkg; sleep 60 & OLDJOB=$!")
    shell_pid = out(shell, "echo $$").split()[0]
    start = time.monotonic()
    r = run(shell, "echo started; sleep 61 & sleep 61 | cat", timeout_s=1)
    assert time.monotonic() - start < 6
    assert r.is_error and r.data is not None and r.data["exit_code"] == 124 and "started" in r.output
    assert not r.data["shell_restarted"]
    after = out(shell, "echo $$ $KEEP $(basename $PWD); kill -0 $OLDJOB && echo old-job-alive")
    assert after.splitlines()[:2] == [f"{shell_pid} 1 pkg", "old-job-alive"]
    survivors = "for p in /proc/[0-9]*; do tr '\\0' ' ' 2>/dev/null < $p/cmdline; echo; done | grep -c '^sleep 61 $'"
    assert out(shell, survivors + "; true").startswith("0\n")
    out(shell, "kill $OLDJOB")


@pytest.mark.slow
def test_an_interrupted_builtin_loop_leaves_the_shell_usable(shell: ToolSession) -> None:
    out(shell, "export KEEP=2")
    r = run(shell, "while :; do :; done", timeout_s=1)
    assert r.data is not None and r.data["timed_out"] and not r.data["shell_restarted"]
    assert out(shell, "echo $KEEP").startswith("2\n")
    nested = run(shell, "f() { while :; do :; done; }; g() { f; f; }; g; g; while :; do :; done", timeout_s=1)
    assert nested.data is not None and nested.data["timed_out"]
    assert out(shell, "echo alive").startswith("alive")


def test_exit_restarts_the_shell_and_says_so(shell: ToolSession) -> None:
    out(shell, "cd pkg")
    r = run(shell, "echo bye; exit 3")
    assert r.output.startswith("bye\n") and "the shell exited" in r.output
    assert r.data is not None and r.data["exit_code"] == 3 and r.data["shell_restarted"]
    assert out(shell, "pwd").splitlines()[0] == shell.sandbox.workdir


def test_anthropic_restart_gives_a_new_shell(shell: ToolSession) -> None:
    out(shell, "cd pkg; export OLD=1")
    restarted = get_profile("anthropic").call(shell, "bash", {"restart": True})
    assert "the shell exited" in restarted.output
    assert out(shell, "pwd; echo ${OLD:-unset}").splitlines()[:2] == [shell.sandbox.workdir, "unset"]


def test_output_is_capped_in_the_persistent_shell(shell: ToolSession) -> None:
    start = time.monotonic()
    r = run(shell, "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END")
    assert time.monotonic() - start < 15
    assert len(r.output) < 40_000 and "bytes of output omitted" in r.output
    assert r.output.endswith("END\n[exit code 0]") and r.data is not None and r.data["truncated"]


def test_commands_cannot_read_the_shells_control_stream(shell: ToolSession) -> None:
    assert out(shell, "cat; read x; echo got=$x").startswith("got=\n")
    tricky = "printf '%s\\n' \"it's\" 'a \\\\ b' $'tab\\there' 'ünï'"
    assert out(shell, tricky).splitlines()[:4] == ["it's", "a \\\\ b", "tab\there", "ünï"]


def test_fresh_mode_keeps_no_state(sandbox: Sandbox) -> None:
    with ToolSession(sandbox, terminal="fresh") as s:
        out(s, "cd pkg; export GONE=1")
        assert out(s, "pwd; echo ${GONE:-unset}").splitlines()[:2] == [s.sandbox.workdir, "unset"]
    with pytest.raises(ValueError, match="persistent"):
        ToolSession(sandbox, terminal="tmux")
