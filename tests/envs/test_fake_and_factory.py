"""FakeSandbox scripting, FakeFactory's image store, the get_sandbox factory, and the shared byte plumbing."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from envs import get_sandbox
from envs._io import CappedOutput, FrameDemuxer
from envs.base import LABEL, ExecResult, Sandbox, SandboxFactory
from envs.errors import EnvError, EnvNotStartedError, ImageBuildError, ImageNotFoundError
from envs.fake import FakeFactory, FakeSandbox
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


def test_fake_behaviour_answers_before_rules_and_sees_the_sandbox_env() -> None:
    seen: list[dict[str, str]] = []

    def behaviour(sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        seen.append(env)
        sb.files["/touched"] = cmd.encode()
        return ExecResult(exit_code=3) if cmd == "make" else None

    with FakeSandbox(rules=[("make|ls", 7)], behaviour=behaviour, stream_greeting=b"hello\n") as fake:
        fake.env = {"A": "1"}
        assert fake.exec("make", env={"B": "2"}).exit_code == 3
        assert fake.exec("ls").exit_code == 7
        assert fake.read_file("/touched") == b"ls"
        stream = fake.open_stream(["server"])
        assert stream.recv() == b"hello\n"
    assert seen == [{"A": "1", "B": "2"}, {"A": "1"}]


def machine(sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
    """Installs write /venv/<name> (needing the network); `fail` fails."""
    if cmd.startswith("install "):
        if not sb.network:
            return ExecResult(exit_code=1, stderr="network unreachable")
        sb.files[f"/venv/{cmd.split()[1]}"] = env.get("MODE", "").encode()
        return ExecResult(exit_code=0)
    return ExecResult(exit_code=1, stderr="boom") if cmd == "fail" else None


def test_factory_sandboxes_start_from_images_and_snapshots_become_images() -> None:
    factory = FakeFactory(machine, base_files={"/usr/bin/python3": b"py"})
    assert isinstance(factory, SandboxFactory)
    base = factory.base_image("3.12")
    assert base == factory.base_image("3.12") == "fake-base:python3.12"
    with factory.sandbox(base, network=True, env={"MODE": "dev"}, cache=True) as sb:
        assert sb.read_file("/usr/bin/python3") == b"py"
        assert sb.exec("install attrs").ok
        first = sb.snapshot("one")
        sb.exec("install bad")
        sb.restore(first)
        assert sorted(sb.files) == ["/usr/bin/python3", "/venv/attrs"]
        sb.set_network(False)
        assert not sb.exec("install later").ok
    tag = factory.finalize(first, "env/demo:1", {"MODE": "prod"}, {"autoinstall.kind": "environment"})
    image = factory.images[tag]
    assert (image.origin, image.parent, image.env) == ("finalize", first, {"MODE": "prod"})
    assert image.labels == {LABEL: "1", "autoinstall.kind": "environment"}
    with factory.sandbox(tag, network=False) as check:
        assert check.read_file("/venv/attrs") == b"dev"
        assert not check.exec("install offline").ok
        second = check.snapshot("two")
    assert first != second and {first, second} <= set(factory.images)
    assert [(s.image, s.network_at_start, s.cache) for s in factory.sandboxes] == [
        (base, True, True), (tag, False, False)]
    assert [(e.sandbox, e.network, e.command) for e in factory.executed] == [
        (0, True, "install attrs"), (0, True, "install bad"), (0, False, "install later"),
        (1, False, "install offline")]
    assert factory.executed[-1].env == {"MODE": "prod"}
    factory.discard([first, second, "never-made"])
    assert factory.discarded == [first, second, "never-made"] and first not in factory.images
    with pytest.raises(ImageNotFoundError, match="no fake image"):
        factory.sandbox(first, network=False).start()
    with pytest.raises(ImageNotFoundError):
        factory.finalize(second, "t", {}, {})


def test_factory_build_replays_a_dockerfile_from_its_context(tmp_path: Path) -> None:
    factory = FakeFactory(machine)
    base = factory.base_image("3.11")
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "a.py").write_text("A")
    dockerfile = (f"# a comment\nFROM {base}\nCOPY repo/ /workspace/\nENV MODE=\"built\" OTHER=x\n"
                  'WORKDIR /workspace\nRUN ["bash", "-c", "install attrs"]\nRUN install \\\n  iniconfig\n')
    (tmp_path / "Dockerfile").write_text(dockerfile)
    tag = factory.build(tmp_path, "demo:rebuild", {"autoinstall.kind": "rebuild"})
    image = factory.images[tag]
    assert image.files == {"/workspace/pkg/a.py": b"A", "/venv/attrs": b"built", "/venv/iniconfig": b"built"}
    assert (image.origin, image.parent, image.dockerfile) == ("build", base, dockerfile)
    assert image.env == {"MODE": "built", "OTHER": "x"} and image.labels[LABEL] == "1"
    builder = factory.sandboxes[-1]
    assert builder.commands() == ["install attrs", "install    iniconfig"] and not builder.started

    (tmp_path / "Dockerfile").write_text(f"FROM {base}\nRUN fail\n")
    with pytest.raises(ImageBuildError, match="RUN fail exited 1: boom"):
        factory.build(tmp_path, "demo:broken", {})
    assert "demo:broken" not in factory.images and not factory.sandboxes[-1].started
    (tmp_path / "Dockerfile").write_text("RUN install x\n")
    with pytest.raises(ImageBuildError, match="does not start with FROM"):
        factory.build(tmp_path, "demo:nofrom", {})


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
