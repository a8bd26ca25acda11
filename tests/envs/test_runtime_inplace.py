"""Resets in place and forks by copying files (envs/runtime/restore.py), and the caller-reads socket path
(envs/runtime/fastcall.py): the pristine state comes back after edits and background processes, forks are
independent, concurrent calls on one session get their own answers."""

from __future__ import annotations

import os
import stat
import threading
import uuid
from pathlib import Path

import docker
import pytest

from envs.runtime import Environment, RuntimeSpec
from envs.runtime import episode as episode_module
from envs.runtime.restore import sync
from tests.envs.test_runtime import (  # noqa: F401  (pytest fixtures)
    ADD,
    RUN_LABEL,
    SUB,
    _containers,
    runtime_image,
    spec,
)
from tools.session import ToolServerError

STATE = ("cat calc.py; ls -la --time-style=+ / /opt /etc /tmp . tests | grep -v -e '^total' -e ' [.][.]*$' "
         "| awk '{print $1, $3, $4, $NF}'; ls /proc | grep -c '^[0-9]'")
"""What a reset must bring back: sources, files outside the workspace, modes and owners, /tmp, the process
count (the tool server, its shell, the init and sleep)."""
MESS = ("echo broken >> calc.py; rm -rf tests; mkdir tests; echo new > tests/other.py; echo o > /opt/marker; "
        "touch /tmp/junk; rm /etc/debian_version; chmod 700 /opt; ln -s /etc link; mkfifo fifo; "
        "chown nobody calc.py; (sleep 1000 &); setsid sleep 1001 < /dev/null > /dev/null 2>&1 &")


@pytest.mark.docker
def test_in_place_reset_brings_back_the_image_state(spec: RuntimeSpec) -> None:  # noqa: F811
    label = uuid.uuid4().hex
    with Environment(spec, in_place=True, labels=RUN_LABEL | {"autoinstall.test.env": label}) as env:
        first = env.reset()
        assert not first["in_place"]  # the first episode needs a container
        pristine = env.step("terminal", {"command": STATE}).output
        for _ in range(2):
            env.step("terminal", {"command": MESS})
            assert env.step("terminal", {"command": STATE}).output != pristine
            again = env.reset()
            assert again["in_place"] and again["container_id"] == first["container_id"]
            assert env.step("terminal", {"command": STATE}).output == pristine
        reward = env.reward([])
        assert reward.passed == 1 and {t.test_id for t in reward.tests} == {ADD, SUB}  # test_sub fails again
        assert len(_containers(label)) == 2  # the episode's and the pristine one
    assert _containers(label) == []


@pytest.mark.docker
def test_fork_by_copy_is_independent_and_carries_deletions(spec: RuntimeSpec,  # noqa: F811
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    label = uuid.uuid4().hex
    seen: list[bool] = []

    def watched_sync(*args: object, **kwargs: object) -> int:
        # The parent runs strangers' code: frozen while this host copies from it, or it could swap symlinks in.
        state = docker.from_env().api.inspect_container(env.container_id)["State"]
        seen.append(state["Paused"])
        return sync(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(episode_module, "sync", watched_sync)
    with Environment(spec, prestart=True, labels=RUN_LABEL | {"autoinstall.test.env": label}) as env:
        env.reset()
        env.step("terminal", {"command": "rm tests/test_calc.py && echo kept > notes.txt && chmod 600 notes.txt"})
        child = env.fork()
        assert seen == [True]
        assert not docker.from_env().api.inspect_container(env.container_id)["State"]["Paused"]
        try:
            info = child.step("terminal", {"command": "ls tests; stat -c %a notes.txt; cat notes.txt"}).output
            assert info.splitlines()[:2] == ["600", "kept"]
            child.step("edit_file", {"path": "notes.txt", "old_str": "kept", "new_str": "child"})
            assert env.step("read_file", {"path": "notes.txt"}).output.split("\t", 1)[1].startswith("kept")
            assert child.container_id != env.container_id
        finally:
            child.close()
    assert _containers(label) == []


@pytest.mark.docker
def test_concurrent_calls_on_one_socket_get_their_own_answers(spec: RuntimeSpec) -> None:  # noqa: F811
    with Environment(spec, labels=RUN_LABEL) as env:
        env.reset()
        for i in range(8):
            env.step("create_file", {"path": f"f{i}.txt", "content": f"file {i}\n" * 200})
        errors: list[str] = []

        def reader(i: int) -> None:
            for _ in range(40):
                out = env.step("read_file", {"path": f"f{i}.txt", "end_line": 3}).output
                if f"file {i}" not in out or any(f"file {j}" in out for j in range(8) if j != i):
                    errors.append(out)

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        slow = env.step("terminal", {"command": "sleep 0.3; echo slept"})  # one long call among them
        for t in threads:
            t.join()
        assert not errors and slow.output.startswith("slept")
        session = env._running()[1]
        assert session.transport == "socket"
        with pytest.raises(ToolServerError):
            session.call("terminal", command="sleep 5", persistent=True, call_timeout=0.2)
        assert env.step("read_file", {"path": "f1.txt", "end_line": 1}).output.endswith("file 1\n")
        session.close()
        assert env.step("read_file", {"path": "f1.txt"}).is_error


def test_sync_follows_the_guide_and_sees_whiteouts(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("whiteouts (0/0 character devices) and owners need root")
    source, target, guide = (tmp_path / n for n in ("source", "target", "guide"))
    for root in (source, target):
        (root / "d" / "sub").mkdir(parents=True)
        (root / "etc").mkdir()
        (root / "same.txt").write_text("same")
        (root / "d" / "sub" / "deep.txt").write_text("deep")
    (source / "changed.txt").write_text("pristine")
    (target / "changed.txt").write_text("edited")
    (source / "deleted.txt").write_text("was here")
    (target / "added.txt").write_text("new")
    (target / "d" / "sub" / "deep.txt").write_text("edited deep")
    os.chmod(target / "same.txt", 0o600)
    guide.mkdir()
    (guide / "d" / "sub").mkdir(parents=True)
    for name in ("changed.txt", "added.txt", "same.txt", "d/sub/deep.txt"):
        (guide / name).write_text("")
    os.mknod(guide / "deleted.txt", stat.S_IFCHR | 0o000, os.makedev(0, 0))
    (target / "untouched.txt").write_text("not in the guide, not in the source")
    (guide / "touched.txt").write_text("")  # only its mtime changed
    for root, mtime in ((source, 1_000_000_000), (target, 2_000_000_000)):
        (root / "touched.txt").write_text("same bytes")
        os.utime(root / "touched.txt", (mtime, mtime))
    sync(guide, source, target)
    assert (target / "changed.txt").read_text() == "pristine"
    assert (target / "deleted.txt").read_text() == "was here"
    assert not (target / "added.txt").exists() and not (target / "untouched.txt").exists()
    assert (target / "d" / "sub" / "deep.txt").read_text() == "deep"
    assert os.stat(target / "touched.txt").st_mtime == 1_000_000_000
    assert stat.S_IMODE(os.stat(target / "same.txt").st_mode) == stat.S_IMODE(os.stat(source / "same.txt").st_mode)
    with pytest.raises(FileNotFoundError):  # a source that is gone must not read as "delete everything"
        sync(guide, tmp_path / "gone", target)
    assert (target / "same.txt").exists()
