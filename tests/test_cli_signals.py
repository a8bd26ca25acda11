"""SIGTERM to a command that started a sandbox removes the sandbox, as Ctrl-C does (a hostile-suite case:
a batch runner killed by its scheduler must not leave containers behind)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
pytestmark = pytest.mark.docker


def containers_from(image: str) -> list[str]:
    """Containers created from the tag `image` itself (not from other tags of the same image id, as
    `--filter ancestor=` would also count)."""
    out = subprocess.run(["docker", "ps", "-a", "--format", "{{.ID}} {{.Image}}"], capture_output=True,
                         text=True, check=True).stdout
    return [cid for cid, _, name in (line.partition(" ") for line in out.splitlines()) if name == image]


@pytest.mark.parametrize("wait_s", [0.0, 2.0])
def test_sigterm_during_a_tool_call_removes_its_container(base_image: str, wait_s: float) -> None:
    image = f"autoinstall-test/sigterm:{uuid.uuid4().hex[:8]}"
    subprocess.run(["docker", "tag", base_image, image], check=True)
    try:
        call = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "tools", "call", "terminal",
                                 json.dumps({"command": "sleep 120"}), "--image", image],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not containers_from(image):
            assert call.poll() is None and time.monotonic() < deadline, call.communicate()
            time.sleep(0.2)
        time.sleep(wait_s)  # 0: the sandbox may still be starting; 2: the command is running
        call.send_signal(signal.SIGTERM)
        _, err = call.communicate(timeout=60)
        assert call.returncode == 130, err
        assert containers_from(image) == []
    finally:
        subprocess.run(["docker", "rmi", image], capture_output=True, check=False)


def _owned_by(pid: int, kind: str) -> list[str]:
    """Containers/images/volumes that the process `pid` created (their owner label names it)."""
    label = f"label=autoinstall.owner={socket.gethostname()}:{pid}:engine"
    cmd = {"container": ["docker", "ps", "-aq"], "image": ["docker", "images", "-aq"],
           "volume": ["docker", "volume", "ls", "-q"]}[kind]
    return subprocess.run([*cmd, "--filter", label], capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.slow
def test_sigterm_during_a_build_removes_its_sandbox_snapshots_and_cache_layer_and_frees_the_lock(
        base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build killed by its scheduler mid-install (here: while its suite blocks on a hanging test, after the
    first snapshot) leaves nothing on the engine, and the next build of the same repository can start."""
    home = tmp_path / "home"
    env = {**os.environ, "AUTOINSTALL_HOME": str(home)}
    repo = ROOT / "tests" / "fixtures" / "repos" / "hanging_test"
    run = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "run", str(repo), "--out", str(tmp_path / "env")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 600
    while not _owned_by(run.pid, "image"):  # the first snapshot
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.5)
    assert _owned_by(run.pid, "container")
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert (_owned_by(run.pid, "container"), _owned_by(run.pid, "image"), _owned_by(run.pid, "volume")) == ([], [], [])
    monkeypatch.setenv("AUTOINSTALL_HOME", str(home))
    from autoinstall.record.lock import build_lock  # noqa: PLC0415 (after AUTOINSTALL_HOME is set)
    from autoinstall.source import check_out  # noqa: PLC0415

    record = check_out(str(repo), None, tmp_path / "checkout")
    with build_lock(record.repo, record.revision, "embedded", "hanging_test"):
        pass  # free: no BuildLockedError
