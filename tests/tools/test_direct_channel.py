"""The direct channel: tool calls over a Unix socket in a directory shared with the container, the exec
stream as the fallback, and a channel that only ever reaches its own container's server."""
from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Iterator

import pytest

from envs.base import DirectChannel
from envs.docker import DockerSandbox
from envs.docker.channel import accept_from, listen_unix
from tests.tools.conftest import _populate
from tools import ToolSession, call_tool

pytestmark = pytest.mark.docker

CALLS: list[tuple[str, dict[str, object]]] = [
    ("read_file", {"path": "pkg/core.py", "start_line": 2, "end_line": 9}),
    ("read_file", {"path": "missing.py"}),
    ("search", {"pattern": "needle", "path": "."}),
    ("lint", {"path": "pkg/bad.py"}),
    ("terminal", {"command": "ls pkg | sort; echo err >&2; exit 2"}),
]


@pytest.fixture(scope="module")
def channel_sandbox(base_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(image=base_image, channel=True) as sb:
        _populate(sb)
        yield sb


def test_socket_and_stream_give_the_same_results(channel_sandbox: DockerSandbox) -> None:
    with ToolSession(channel_sandbox) as fast, ToolSession(channel_sandbox, direct=False) as slow:
        assert (fast.transport, slow.transport) == ("socket", "stream")
        for name, args in CALLS:
            a, b = call_tool(fast, name, args), call_tool(slow, name, args)
            assert (a.output, a.is_error) == (b.output, b.is_error), name
            assert {k: v for k, v in (a.data or {}).items() if k != "duration_s"} == {
                k: v for k, v in (b.data or {}).items() if k != "duration_s"}
        assert not call_tool(fast, "create_file", {"path": "via_socket.txt", "content": "x\n"}).is_error
        assert call_tool(slow, "read_file", {"path": "via_socket.txt"}).output.startswith("     1\tx")


def test_channel_dir_is_private_read_only_inside_and_removed_with_the_sandbox(base_image: str) -> None:
    sb = DockerSandbox(image=base_image, channel=True).start()
    host = sb._channel_host
    try:
        assert isinstance(sb, DirectChannel) and sb.channel_dir() == "/run/autoinstall-tools"
        assert host is not None and stat.S_IMODE(os.stat(host).st_mode) == 0o700
        assert os.stat(host).st_uid == os.getuid()
        with ToolSession(sb) as s:
            assert s.transport == "socket"
            assert list(host.iterdir()) == []  # the socket file goes once the server is connected
        for attempt in ("touch /run/autoinstall-tools/x", "ln -s / /run/autoinstall-tools/l",
                        "head -c 1000000 /dev/zero > /run/autoinstall-tools/big"):
            r = sb.exec(attempt)
            assert not r.ok and "Read-only file system" in r.output, attempt
    finally:
        sb.stop()
    assert not host.exists()


def test_no_channel_means_the_stream(base_image: str) -> None:
    with DockerSandbox(image=base_image) as sb, ToolSession(sb) as s:
        assert sb.channel_dir() is None and s.transport == "stream" and "socket" not in s.info
        assert call_tool(s, "terminal", {"command": "echo ok"}).output.startswith("ok")


def test_fallback_when_the_host_cannot_listen(base_image: str) -> None:
    with DockerSandbox(image=base_image, channel=True) as sb:
        assert sb._channel_host is not None
        shutil.rmtree(sb._channel_host)
        with ToolSession(sb) as s:
            assert s.transport == "stream" and "socket" not in s.info
            assert call_tool(s, "terminal", {"command": "echo ok"}).output.startswith("ok")


def test_fallback_when_the_server_cannot_connect(channel_sandbox: DockerSandbox,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel_sandbox, "channel_dir", lambda: "/nonexistent")
    with ToolSession(channel_sandbox) as s:
        assert s.transport == "stream" and "socket" not in s.info
        assert call_tool(s, "read_file", {"path": "README.md"}).output.startswith("     1\t# demo")
    assert channel_sandbox._channel_host is not None and list(channel_sandbox._channel_host.iterdir()) == []


def test_fallback_when_the_connection_is_refused(channel_sandbox: DockerSandbox,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(listener: socket.socket, timeout: float = 5.0) -> None:
        listener.close()

    monkeypatch.setattr(channel_sandbox, "accept_channel", refuse)
    with ToolSession(channel_sandbox) as s:
        assert "socket" in s.info and s.transport == "stream"
        assert call_tool(s, "read_file", {"path": "README.md"}).output.startswith("     1\t# demo")


def test_a_connection_from_outside_the_container_is_refused(channel_sandbox: DockerSandbox) -> None:
    host, cid = channel_sandbox._channel_host, channel_sandbox.container_id
    assert host is not None and cid is not None
    listener = channel_sandbox.listen_channel("tools-test.sock")
    assert listener is not None and channel_sandbox.listen_channel("../escape.sock") is None
    outsider = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # this (host) process, standing in for
    outsider.connect(str(host / "tools-test.sock"))                # another container's code
    try:
        assert channel_sandbox.accept_channel(listener, 1.0) is None
    finally:
        outsider.close()
    assert not (host / "tools-test.sock").exists()
    # and the container's own server is refused when the host expects another container
    listener = listen_unix(host, "again.sock")
    assert listener is not None
    assert channel_sandbox.exec(["python3", "-c", "import socket; socket.socket(socket.AF_UNIX)"
                                 ".connect('/run/autoinstall-tools/again.sock')"]).ok
    assert accept_from(listener, "0" * 64, 1.0) is None
