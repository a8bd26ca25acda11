"""One contract, every backend: these tests run against LocalSandbox and DockerSandbox alike, and FakeSandbox
(envs/fake.py) for the parts of the protocol it implements: it runs no command, so what a command does is
checked on the real ones only (`runs_commands`), and the tests that are only about commands skip it."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.base import ExecResult, Sandbox
from envs.errors import EnvNotStartedError
from tests.envs.conftest import SMALL, make_sandbox

KINDS = ["local", "fake", pytest.param("docker", marks=pytest.mark.docker)]


@pytest.fixture(scope="module", params=KINDS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A started sandbox shared by this module's tests, for each backend (a fake one takes no limits)."""
    config = {} if request.param == "fake" else {"limits": SMALL}
    with make_sandbox(request, request.param, **config) as sb:
        yield sb


def runs_commands(sandbox: Sandbox) -> bool:
    """False for FakeSandbox, whose exec answers from a script: what a command does is not its to show."""
    return sandbox.kind != "fake"


@pytest.fixture
def shell(sandbox: Sandbox) -> Sandbox:
    """The sandbox, for a test that is only about running commands (FakeSandbox skips it)."""
    if not runs_commands(sandbox):
        pytest.skip("FakeSandbox runs no command: its exec answers from a script (envs/fake.py)")
    return sandbox

CONNECT = "import socket; socket.create_connection(('pypi.org', 443), 5); print('connected')"


def test_is_a_sandbox(sandbox: Sandbox) -> None:
    assert isinstance(sandbox, Sandbox)
    assert sandbox.workdir.startswith("/")


def test_exec_argv_is_not_interpreted_by_a_shell(shell: Sandbox) -> None:
    r = shell.exec(["printf", "%s|", "a b", "$HOME", "*"])
    assert r.ok
    assert r.stdout == "a b|$HOME|*|"


def test_exec_string_runs_in_bash_and_keeps_streams_apart(shell: Sandbox) -> None:
    r = shell.exec("echo out; echo err >&2; [[ 1 == 1 ]] && exit 3")
    assert (r.exit_code, r.stdout, r.stderr, r.ok) == (3, "out\n", "err\n", False)
    assert r.duration_s > 0


def test_cwd_defaults_to_workdir_and_relative_cwd_is_under_it(shell: Sandbox) -> None:
    shell.write_file("sub/dir/marker", b"")
    assert shell.exec("pwd").stdout.strip() == shell.workdir
    assert shell.exec("pwd", cwd="sub/dir").stdout.strip() == f"{shell.workdir}/sub/dir"


def test_env_is_passed(shell: Sandbox) -> None:
    r = shell.exec('printf %s "$FOO"', env={"FOO": "bar baz"})
    assert r.stdout == "bar baz"


def test_missing_command_and_missing_cwd_are_results(shell: Sandbox) -> None:
    assert shell.exec(["no-such-command-xyz"]).exit_code == 127
    r = shell.exec(["true"], cwd="no/such/dir")
    assert r.exit_code == -1
    assert r.stderr


def test_timeout_kills_the_whole_process_group(shell: Sandbox) -> None:
    started = time.monotonic()
    r = shell.exec("(sleep 300; echo late) & echo $! > bg.pid; echo before; sleep 300", timeout=1)
    assert r.timed_out and r.exit_code == 124 and not r.ok
    assert r.stdout == "before\n"
    assert time.monotonic() - started < 8
    gone = shell.exec(
        "for i in $(seq 50); do kill -0 $(cat bg.pid) 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
    )
    assert gone.ok, "the background child of a timed-out command survived"


def test_output_cap_keeps_head_and_tail_of_100_mb(shell: Sandbox) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    r = shell.exec(
        "echo START; head -c 100000000 /dev/zero | tr '\\0' a; echo; echo END; echo done >&2",
        output_cap=65536,
    )
    assert r.ok and r.truncated
    assert time.monotonic() - started < 30
    assert r.stdout.startswith("START\naaa") and r.stdout.endswith("aaa\nEND\n")
    assert "bytes omitted by the output cap" in r.stdout
    assert len(r.stdout) < 65536 + 200
    assert r.stderr == "done\n"
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert grown_mb < 50, f"host memory grew by {grown_mb:.0f} MiB while reading 100 MB"


def test_put_and_get_directories(sandbox: Sandbox, tmp_path: Path) -> None:
    src = tmp_path / "repo"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("VALUE = 42\n")
    (src / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (src / "run.sh").chmod(0o755)
    sandbox.put(src, "repo")
    assert sandbox.read_file("repo/pkg/__init__.py") == b"VALUE = 42\n"
    if runs_commands(sandbox):
        assert sandbox.exec("./repo/run.sh").stdout == "ran\n"
        sandbox.exec("echo made-inside > repo/new.txt")
    else:
        sandbox.write_file("repo/new.txt", b"made-inside\n")
    out = tmp_path / "out" / "copy"
    sandbox.get("repo", out)
    assert (out / "pkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert (out / "new.txt").read_text() == "made-inside\n"
    if runs_commands(sandbox):  # a fake keeps bytes only, no modes
        assert (out / "run.sh").stat().st_mode & 0o111
    with pytest.raises(FileNotFoundError):
        sandbox.get("no/such/path", tmp_path / "nothing")


def test_put_a_single_file_creates_parents(sandbox: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("one")
    sandbox.put(tmp_path / "one.txt", "fresh/parent/one.txt")
    assert sandbox.read_file("fresh/parent/one.txt") == b"one"


def test_write_and_read_binary_files(sandbox: Sandbox) -> None:
    data = bytes(range(256)) * 3
    sandbox.write_file("deep/er/blob.bin", data)
    assert sandbox.read_file("deep/er/blob.bin") == data
    assert not runs_commands(sandbox) or sandbox.exec("wc -c < deep/er/blob.bin").stdout.strip() == "768"
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("deep/er/absent.bin")


def test_snapshot_and_restore(sandbox: Sandbox) -> None:
    sandbox.write_file("state.txt", b"v1")
    snap = sandbox.snapshot("before change")
    sandbox.write_file("state.txt", b"v2")
    if runs_commands(sandbox):  # a file a command made goes too
        sandbox.exec("touch extra.txt")
    else:
        sandbox.write_file("extra.txt", b"")
    sandbox.restore(snap)
    assert sandbox.read_file("state.txt") == b"v1"
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("extra.txt")
    assert not runs_commands(sandbox) or sandbox.exec("echo still-works").stdout == "still-works\n"


def test_network_off_fails_fast_and_comes_back(shell: Sandbox) -> None:
    shell.set_network(False)
    try:
        started = time.monotonic()
        r = shell.exec(["python3", "-c", CONNECT], timeout=30)
        assert not r.ok and "connected" not in r.stdout
        assert time.monotonic() - started < 10
    finally:
        shell.set_network(True)
    assert shell.exec(["python3", "-c", CONNECT], timeout=30).stdout == "connected\n"


def test_memory_limit(shell: Sandbox) -> None:
    r = shell.exec(["python3", "-c", "b = b'x' * (1024 ** 3); print('allocated')"], timeout=60)
    assert not r.ok and "allocated" not in r.stdout
    assert r.exit_code == 137 or "MemoryError" in r.stderr
    assert shell.exec("echo alive").stdout == "alive\n"


def test_stream_round_trips_and_concurrent_writers(sandbox: Sandbox) -> None:
    stream = sandbox.open_stream(["cat"])
    try:
        started = time.monotonic()
        for i in range(200):
            stream.send(b"%d\n" % i)
            got = b""
            while not got.endswith(b"\n"):
                got += stream.recv()
            assert got == b"%d\n" % i
        per_trip_ms = (time.monotonic() - started) / 200 * 1000
        assert per_trip_ms < 20, f"{per_trip_ms:.2f} ms per round trip"

        lines = [b"w%d-%03d\n" % (w, i) for w in range(4) for i in range(100)]
        writers = [
            threading.Thread(target=lambda w=w: [stream.send(x) for x in lines if x.startswith(b"w%d" % w)])
            for w in range(4)
        ]
        for t in writers:
            t.start()
        received = b""
        while received.count(b"\n") < len(lines):
            received += stream.recv()
        for t in writers:
            t.join()
        assert sorted(received.splitlines(keepends=True)) == sorted(lines)
    finally:
        stream.close()
    assert stream.recv() == b""


@pytest.mark.parametrize("kind", KINDS)
def test_methods_need_a_started_sandbox(request: pytest.FixtureRequest, kind: str) -> None:
    sb = make_sandbox(request, kind)
    with pytest.raises(EnvNotStartedError):
        sb.exec("true")
    with sb:
        assert isinstance(sb.exec("true"), ExecResult)
    with pytest.raises(EnvNotStartedError):
        sb.exec("true")
    sb.stop()
