"""FakeSandbox scripting, the get_sandbox factory, and the shared byte plumbing."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from envs import get_sandbox
from envs._io import CappedOutput, FrameDemuxer
from envs.base import ExecResult, Sandbox
from envs.errors import EnvError, EnvNotStartedError
from envs.fake import FakeSandbox
from envs.local import LocalSandbox


def test_factory_builds_each_kind_and_names_the_choices() -> None:
    assert isinstance(get_sandbox("fake"), FakeSandbox)
    local = get_sandbox("local", network=True)
    assert isinstance(local, LocalSandbox) and isinstance(local, Sandbox)
    with pytest.raises(ValueError, match="available: docker, local, fake"):
        get_sandbox("podman")


def test_fake_answers_from_queue_then_rules_then_default() -> None:
    fake = FakeSandbox(rules=[(r"^pip install", ExecResult(exit_code=1, stderr="No matching distribution"))])
    fake.push("queued output")
    with fake:
        assert fake.exec("anything").stdout == "queued output"
        assert fake.exec("pip install nope").exit_code == 1
        fake.add_rule(r"pytest", 5)
        assert fake.exec(["pytest", "-x"]).exit_code == 5
        assert fake.exec("ls").exit_code == 0
    assert fake.commands() == ["anything", "pip install nope", "pytest -x", "ls"]
    assert [c.method for c in fake.calls] == ["start", "exec", "exec", "exec", "exec", "stop"]


def test_fake_files_snapshots_network_and_streams(tmp_path: Path) -> None:
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "a.py").write_text("A")
    with FakeSandbox() as fake:
        fake.put(tmp_path / "repo", "repo")
        assert fake.read_file("repo/pkg/a.py") == b"A"
        snap = fake.snapshot("s")
        fake.write_file("repo/pkg/a.py", b"B")
        fake.restore(snap)
        fake.get("repo", tmp_path / "out")
        assert (tmp_path / "out" / "pkg" / "a.py").read_text() == "A"
        with pytest.raises(FileNotFoundError):
            fake.read_file("missing")
        with pytest.raises(EnvError):
            fake.restore("fake-99")
        fake.set_network(False)
        assert fake.network is False
        stream = fake.open_stream(["server"])
        stream.send(b"ping")
        assert stream.recv() == b"ping"
        stream.close()
        assert stream.recv() == b""


def test_fake_needs_start() -> None:
    with pytest.raises(EnvNotStartedError):
        FakeSandbox().exec("true")


def test_capped_output_keeps_head_and_tail() -> None:
    cap = CappedOutput(10)
    for chunk in (b"0123", b"4567", b"89ab", b"cdef"):
        cap.write(chunk)
    assert cap.truncated and cap.total == 16
    assert cap.text() == "01234\n[... 6 bytes omitted by the output cap ...]\nbcdef"
    small = CappedOutput(10)
    small.write(b"0123456789")
    assert not small.truncated and small.text() == "0123456789"


def test_frame_demuxer_handles_frames_split_anywhere() -> None:
    raw = struct.pack(">BxxxL", 1, 3) + b"out" + struct.pack(">BxxxL", 2, 4) + b"err!"
    demux = FrameDemuxer()
    frames = [f for i in range(len(raw)) for f in demux.feed(raw[i : i + 1])]
    assert frames == [(1, b"out"), (2, b"err!")]


def test_local_absolute_paths_are_host_paths_and_stop_removes_scratch(tmp_path: Path) -> None:
    with LocalSandbox() as sb:
        sb.write_file(str(tmp_path / "host.txt"), b"on the host")
        scratch = Path(sb.workdir)
        assert scratch.is_dir()
    assert (tmp_path / "host.txt").read_bytes() == b"on the host"
    assert not scratch.exists()
