"""SIGTERM or SIGINT (Ctrl-C) to a command that started a sandbox removes what it started and keeps finished
records: `tools call`, `run`, `batch` (whose builds run in worker threads) and `debug` (a hostile-suite case: a
batch runner killed by its scheduler must not leave containers behind)."""
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


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("wait_s", [0.0, 2.0])
def test_a_signal_during_a_tool_call_removes_its_container(base_image: str, wait_s: float,
                                                           signum: signal.Signals) -> None:
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
        call.send_signal(signum)
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


def _wait_for_pytest(proc: subprocess.Popen[str], timeout_s: float) -> None:
    """Until a container of `proc` runs the suite (its install steps are done: the build is mid-step)."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        for cid in _owned_by(proc.pid, "container"):
            top = subprocess.run(["docker", "top", cid], capture_output=True, text=True, check=False).stdout
            if "pytest" in top and "junit" in top:
                return
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_a_batch_stops_its_running_build_at_once_and_keeps_finished_records(
        base_image: str, tmp_path: Path, signum: signal.Signals) -> None:
    """A batch whose build is blocked in a step (a hanging test: 120 s until the per-test timeout) stops it
    at once, removes its container, snapshots and cache layer, keeps the record of the entry that finished,
    and leaves the interrupted one `running` for the next batch. (A worker thread of its own runs the build,
    so the signal reaches it only through the batch.)"""
    empty = tmp_path / "nothing-to-build"  # fails at once as no_build_files: a finished record
    empty.mkdir()
    (empty / "README").write_text("no build files here\n")
    batch_file = tmp_path / "batch.txt"
    batch_file.write_text(f"{empty}\n{ROOT / 'tests' / 'fixtures' / 'repos' / 'hanging_test'}\n")
    env = {**os.environ, "AUTOINSTALL_HOME": str(tmp_path / "home")}
    catalog = tmp_path / "catalog"
    batch = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "batch", str(batch_file), "--json",
                              "--catalog", str(catalog), "--jobs", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_for_pytest(batch, 600)
    signalled = time.monotonic()
    batch.send_signal(signum)
    out, err = batch.communicate(timeout=120)
    assert batch.returncode == 130, err
    assert time.monotonic() - signalled < 60, "the batch waited for its blocked step instead of stopping it"
    assert (_owned_by(batch.pid, "container"), _owned_by(batch.pid, "image"), _owned_by(batch.pid, "volume")) == \
        ([], [], [])
    assert not any((tmp_path / "home" / "cache-layers").iterdir())
    summary = json.loads(out)
    assert [(r["line"], r["outcome"]) for r in summary["results"]] == [(1, "failed"), (2, "interrupted")]
    assert summary["interrupted"] and "next batch builds it again" in summary["results"][1]["message"]
    from envs.catalog import Catalog, owner_alive  # noqa: PLC0415 (the catalog's module is sqlite's; after the run)

    records = {r.repo: r for r in Catalog(catalog).list()}
    assert records[str(empty)].failure_class == "no_build_files"
    hanging = records[str(ROOT / "tests" / "fixtures" / "repos" / "hanging_test")]
    assert hanging.status == "running" and not owner_alive(hanging.owner)  # the next batch builds it again


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_a_recording_debug_session_removes_its_container_and_frees_the_lock(
        base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: signal.Signals,
        request: pytest.FixtureRequest) -> None:
    from envs.catalog import Catalog  # noqa: PLC0415 (sqlite's module: only the Docker tests here need it)
    from envs.spec import EnvSpec, Plan, SourceRecord  # noqa: PLC0415 (pydantic: as above)

    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    catalog = Catalog(tmp_path / "catalog")
    image = f"autoinstall-test-debug:{uuid.uuid4().hex[:8]}"  # its own tag: never the shared base image's
    subprocess.run(["docker", "tag", base_image, image], check=True)
    request.addfinalizer(lambda: subprocess.run(["docker", "rmi", image], capture_output=True, check=False))
    spec = EnvSpec(status="failed", source=SourceRecord(repo=f"/src/demo-{uuid.uuid4().hex[:8]}", name="demo",
                                                        commit="c0ffee" * 6), model="embedded", plan=Plan(),
                   image=image)
    record = catalog.upsert_spec(spec, tmp_path / "env")
    before = catalog.get_spec(record.id)
    label = f"label=autoinstall.debug={record.id}"
    debug = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "debug", record.id, "--catalog",
                              str(catalog.root), "--record", "--yes", "--command", "touch made && sleep 120"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "AUTOINSTALL_HOME": str(tmp_path / "home")})
    deadline = time.monotonic() + 60
    while not subprocess.run(["docker", "ps", "-q", "--filter", label], capture_output=True, text=True,
                             check=True).stdout.strip():
        assert debug.poll() is None and time.monotonic() < deadline, debug.communicate()
        time.sleep(0.2)
    time.sleep(2)  # the command is running
    debug.send_signal(signum)
    _, err = debug.communicate(timeout=60)
    assert debug.returncode == 130, err
    assert subprocess.run(["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True,
                          check=True).stdout.strip() == ""
    assert catalog.get_spec(record.id) == before  # nothing recorded from an interrupted session
    from autoinstall.record.lock import build_lock  # noqa: PLC0415 (after AUTOINSTALL_HOME is set)

    with build_lock(spec.source.repo, spec.source.revision, spec.model, record.id):
        pass  # free: no BuildLockedError
