"""Docker-only behaviour: isolation from a hostile repository, limits, labels, cleanup, engine failures."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from envs.base import Limits
from envs.docker import (
    CA_PATH,
    HOST_CA_BUNDLE,
    DockerFactory,
    DockerSandbox,
    build_image,
    check_engine,
    cleanup,
    remove_image,
)
from envs.docker.snapshots import GO_ON_BYTES
from envs.docker.trust import CA_DIR, trust_dir
from envs.errors import EngineUnavailableError, EnvError, ImageBuildError, SandboxLimitError
from envs.testrun import PIDS_EVENTS, run_tests
from tests.envs.conftest import RUN_LABEL

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("remove_test_leftovers")]
HOSTILE = r"""#!/bin/bash
# A repository's "setup" script that tries to escape.
echo pwned > /etc/{m}
echo pwned > /root/{m}
echo pwned > /{m}
echo tampered >> {ca} && echo CA-WRITABLE
test -S /var/run/docker.sock && echo DOCKER-SOCKET
mount -t tmpfs none /mnt 2>/dev/null && echo MOUNTED
cat /etc/shadow
"""


def _inspect(kind: str, ref: str) -> dict:
    out = subprocess.run(["docker", kind, "inspect", ref], capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]


@pytest.fixture(scope="module")
def box(base_image: str, remove_test_leftovers: None) -> Iterator[DockerSandbox]:
    with DockerSandbox(
        image=base_image, labels=RUN_LABEL, limits=Limits(cpus=1, memory_mb=512, pids=64)
    ) as sb:
        yield sb


def test_container_is_locked_down(box: DockerSandbox) -> None:
    info = _inspect("container", box.container_id or "")
    host = info["HostConfig"]
    assert host["CapDrop"] == ["ALL"]
    assert sorted(host["CapAdd"]) == sorted(
        ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL"]
    )
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is True
    assert host["Memory"] == host["MemorySwap"] == 512 * 2**20
    assert host["PidsLimit"] == 64 and host["NanoCpus"] == 10**9
    assert host["Binds"] == [f"{trust_dir(HOST_CA_BUNDLE)}:{CA_DIR}:ro"]
    assert "/tmp" in host["Tmpfs"]
    assert info["Config"]["Labels"]["autoinstall"] == "1"
    assert info["Config"]["Labels"]["autoinstall.kind"] == "sandbox"
    status = box.exec("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status").stdout.split()
    assert status == ["CapEff:", "00000000000000fb", "NoNewPrivs:", "1"]


def test_hostile_script_cannot_touch_or_read_the_host(box: DockerSandbox, tmp_path: Path) -> None:
    marker = f"autoinstall-evil-{uuid.uuid4().hex[:8]}"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "setup.sh").write_text(HOSTILE.format(m=marker, ca=CA_PATH))
    ca_digest = hashlib.sha256(HOST_CA_BUNDLE.read_bytes()).hexdigest()
    box.put(repo, "repo")
    r = box.exec(["bash", "repo/setup.sh"])
    assert box.exec(f"cat /etc/{marker} /root/{marker} /{marker}").stdout == "pwned\n" * 3  # it did run
    for host_path in (Path("/etc", marker), Path("/root", marker), Path("/", marker)):
        assert not host_path.exists()
    assert hashlib.sha256(HOST_CA_BUNDLE.read_bytes()).hexdigest() == ca_digest
    assert "CA-WRITABLE" not in r.stdout and "DOCKER-SOCKET" not in r.stdout and "MOUNTED" not in r.stdout
    assert "root:" in r.stdout  # the container's own /etc/shadow ...
    host_shadow = Path("/etc/shadow").read_text()
    assert host_shadow and host_shadow not in r.stdout  # ... not the host's
    assert box.exec("cat /etc/hostname").stdout.strip() != socket.gethostname()


def test_apt_get_install_works_with_the_reduced_capabilities(box: DockerSandbox) -> None:
    r = box.exec(
        "apt-get update -qq && apt-get install -y -qq --no-install-recommends jq >/dev/null && jq --version",
        timeout=300,
    )
    assert r.ok, r.output[-2000:]
    assert r.stdout.startswith("jq-")


def test_uv_pip_install_uses_the_proxy_ca_and_the_host_cache(base_image: str, tmp_path: Path) -> None:
    install = "uv pip install iniconfig && python -c 'import iniconfig; print(iniconfig.__name__)'"
    with DockerSandbox(image=base_image, labels=RUN_LABEL, cache_dir=tmp_path / "cache") as sb:
        r = sb.exec(install, timeout=180)
        assert r.ok, r.output[-2000:]
        assert r.stdout == "iniconfig\n"
    assert not (tmp_path / "cache" / "uv").exists(), "an untrusted sandbox wrote into the shared cache"
    with DockerSandbox(image=base_image, labels=RUN_LABEL, cache_dir=tmp_path / "cache", cache_mode="shared") as sb:
        assert sb.exec(install, timeout=180).ok
    assert any((tmp_path / "cache" / "uv").iterdir()), "a trusted sandbox did not fill the host cache dir"


def test_sandboxes_reach_the_registries_but_not_this_machine(base_image: str) -> None:
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        addresses = ["172.17.0.1", *(a for a in _host_addresses() if not a.startswith("127."))]
        with DockerSandbox(image=base_image, labels=RUN_LABEL) as sb:
            gateway = sb.exec("ip route 2>/dev/null | awk '/default/ {print $3}' || true").stdout.split()
            probe = ("import socket, sys\nfor a in sys.argv[1:]:\n    try:\n        socket.create_connection("
                     f"(a, {port}), 3).close(); print('reached', a)\n    except OSError as e: print('refused', a)")
            seen = sb.exec(["python3", "-c", probe, *addresses, *gateway], timeout=60).stdout
            assert "reached" not in seen, seen
            assert seen.count("refused") == len(addresses) + len(gateway)
            web = "import socket; socket.create_connection(('pypi.org', 443), 10); print('connected')"
            assert sb.exec(["python3", "-c", web], timeout=30).stdout == "connected\n"
        # the listener itself works: this machine reaches it
        socket.create_connection(("127.0.0.1", port), 3).close()
    finally:
        listener.close()


def _host_addresses() -> list[str]:
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False).stdout
    return out.split()


def test_fork_bomb_is_contained_by_the_pids_limit(base_image: str) -> None:
    with DockerSandbox(
        image=base_image, labels=RUN_LABEL, limits=Limits(cpus=1, memory_mb=512, pids=64)
    ) as sb:
        started = time.monotonic()
        r = sb.exec("bomb() { bomb | bomb & }; bomb; sleep 600", timeout=5)
        assert r.timed_out and time.monotonic() - started < 30
        assert "Resource temporarily unavailable" in r.stderr
        left = sb.exec(
            "cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null;ls /proc | grep -c '^[0-9]'"
        )
        limit, processes = left.stdout.split()
        assert limit == "64"
        assert int(processes) < 10, "the timeout did not take the bomb's process group down"
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


def test_no_single_file_outgrows_the_disk_limit_written_or_sparse(base_image: str) -> None:
    """The kernel (RLIMIT_FSIZE) caps every file at Limits.disk_mb at once; a sparse file is refused too, since
    `docker commit` would turn it into real disk."""
    with DockerSandbox(image=base_image, labels=RUN_LABEL, limits=Limits(disk_mb=200)) as sb:
        r = sb.exec("dd if=/dev/zero of=big bs=1M count=8000 status=none; stat -c %s big; rm big;"
                    " truncate -s 6G sparse; echo truncate=$?", timeout=60)
        size, truncated = r.stdout.split()
        assert int(size) == 200 * 2**20
        assert truncated == "truncate=153"  # SIGXFSZ


def test_disk_limit_stops_the_sandbox_and_spares_the_host(base_image: str) -> None:
    docker_root = "/var/lib/docker" if Path("/var/lib/docker").exists() else "/"
    free_before = shutil.disk_usage(docker_root).free
    sb = DockerSandbox(image=base_image, labels=RUN_LABEL, limits=Limits(disk_mb=200), disk_poll_s=0.5)
    with sb:
        snap = sb.snapshot("before filling the disk")
        with pytest.raises(SandboxLimitError, match="disk_mb=200") as err:
            # Many files, each under the per-file cap: only the watchdog's total stops them.
            sb.exec("for i in $(seq 80); do dd if=/dev/zero of=big$i bs=1M count=100 status=none; done; "
                    "echo finished", timeout=120)
        written_mb = int(re.search(r"wrote (\d+) MiB", str(err.value)).group(1))  # type: ignore[union-attr]
        assert 200 < written_mb < 8000, "the watchdog let the loop write everything"
        with pytest.raises(SandboxLimitError):
            sb.exec("echo next call")
        sb.restore(snap)  # rolling back is the way out
        assert sb.exec("ls big1 2>/dev/null || echo clean").stdout == "clean\n"
    # Other processes may write meanwhile, hence the tolerance; without the watchdog the loop writes 8 GB.
    assert abs(shutil.disk_usage(docker_root).free - free_before) < 1024 * 2**20


def test_labels_and_cleanup_remove_a_leaked_container_and_its_snapshots(base_image: str) -> None:
    labels = {"autoinstall.test": uuid.uuid4().hex[:12]}
    leaked = DockerSandbox(image=base_image, labels=labels).start()
    snap = leaked.snapshot("leaked")
    cid = leaked.container_id or ""
    assert snap.startswith("autoinstall-snapshot:leaked-")
    snap_image = _inspect("image", snap)
    assert snap_image["Config"]["Labels"]["autoinstall.kind"] == "snapshot"
    dry = cleanup(dry_run=True, labels=labels)
    assert dry.containers == [cid] and dry.images == [snap_image["Id"]]
    assert _inspect("container", cid)["State"]["Running"]
    report = cleanup(labels=labels)
    assert report.containers == [cid] and report.images == [snap_image["Id"]] and not report.errors
    gone = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=autoinstall.test={labels['autoinstall.test']}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert gone.stdout.strip() == ""
    assert (
        subprocess.run(["docker", "image", "inspect", snap], capture_output=True, check=False).returncode != 0
    )
    leaked.stop()  # already gone: stop stays quiet


CONCURRENT_BUILD = """
import sys, time
from envs.docker import DockerSandbox
box = DockerSandbox(image=sys.argv[1], labels={"autoinstall.test": sys.argv[2]}).start()
snap = box.snapshot("concurrent")
print(box.container_id, snap, flush=True)
time.sleep(600)
"""


def test_cleanup_leaves_a_concurrent_build_alone_and_removes_it_once_its_process_is_gone(base_image: str) -> None:
    """`autoinstall sandbox cleanup` (or `catalog gc`) while another process builds must not pull its container,
    snapshots or cache layer from under it; once that process is dead, they are leftovers and go."""
    labels = {"autoinstall.test": uuid.uuid4().hex[:12]}
    other = subprocess.Popen([sys.executable, "-c", CONCURRENT_BUILD, base_image, labels["autoinstall.test"]],
                             stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        assert other.stdout is not None
        cid, snap = other.stdout.readline().split()
        snap_id = _inspect("image", snap)["Id"]
        report = cleanup(labels=labels)
        assert report.containers == [] and report.images == []
        assert cid in report.left_alone and snap_id in report.left_alone
        assert _inspect("container", cid)["State"]["Running"]
    finally:
        other.kill()
        other.wait()
    report = cleanup(labels=labels)
    assert report.containers == [cid] and report.images == [snap_id] and report.left_alone == []
    assert subprocess.run(["docker", "inspect", cid], capture_output=True, check=False).returncode != 0


class _SocketProxy:
    """A unix-socket forwarder to the real engine that the test can kill mid-session."""

    def __init__(self, path: Path, target: str = "/var/run/docker.sock") -> None:
        self.path, self.target = path, target
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        self.server.listen(16)
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def kill(self) -> None:
        self.server.close()
        self.path.unlink()
        for s in self.conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_engine_gone_mid_session_is_a_clear_env_error(base_image: str, tmp_path: Path) -> None:
    proxy = _SocketProxy(tmp_path / "docker.sock")
    sb = DockerSandbox(
        image=base_image, labels=RUN_LABEL, base_url=f"unix://{tmp_path / 'docker.sock'}"
    ).start()
    assert sb.exec("echo up").stdout == "up\n"
    proxy.kill()
    with pytest.raises(EnvError, match="stopped answering") as err:
        sb.exec("echo down")
    assert "dockerd" in str(err.value)
    with pytest.raises(EnvError, match="stopped answering"):
        sb.read_file("/etc/hostname")
    with pytest.raises(EnvError, match="stopped answering"):
        sb.stop()


def test_network_off_from_the_start_can_be_turned_on(base_image: str) -> None:
    probe = ["python3", "-c", "import socket; socket.create_connection(('pypi.org', 443), 5)"]
    with DockerSandbox(image=base_image, labels=RUN_LABEL, network=False) as sb:
        assert sb.exec(probe, timeout=30).exit_code != 0
        assert sb.exec("cat /sys/class/net/*/operstate | wc -l").stdout.strip() == "1"  # only lo
        sb.set_network(True)
        assert sb.exec(probe, timeout=30).ok


def test_no_engine_is_reported_with_a_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nothing.sock'}")
    with pytest.raises(EngineUnavailableError, match="DOCKER_HOST") as err:
        check_engine()
    assert "docker.io" in str(err.value) and "dockerd" in str(err.value)
    with pytest.raises(EngineUnavailableError):
        DockerSandbox(image="autoinstall-base:any").start()


def test_missing_image_says_how_to_get_it(docker_engine: None) -> None:
    from envs.errors import ImageNotFoundError

    with pytest.raises(ImageNotFoundError, match="not on this engine"):
        DockerSandbox(image=f"autoinstall-missing:{uuid.uuid4().hex[:8]}").start()


def test_uses_no_proxy_env_unless_set(base_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("no_proxy", "localhost")
    with DockerSandbox(image=base_image, labels=RUN_LABEL) as sb:
        assert (
            sb.exec('echo "$HTTPS_PROXY|$no_proxy|$SSL_CERT_FILE"').stdout
            == f"http://proxy.invalid:3128|localhost|{CA_PATH}\n"
        )
    with DockerSandbox(image=base_image, labels=RUN_LABEL, pass_proxy_env=False) as sb:
        assert sb.exec('echo "${HTTPS_PROXY:-unset}"').stdout == "unset\n"
    assert os.environ["HTTPS_PROXY"]


def test_a_snapshot_keeps_the_images_environment_not_the_sandboxs(base_image: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The install sandbox's caches, proxies and env reach its commands, never the images made from it (an
    environment image with GOPROXY=file:///cache/... or UV_CACHE_DIR=/cache/uv breaks outside the build)."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    sb = DockerSandbox(image=base_image, labels=RUN_LABEL, cache_dir=tmp_path / "cache", env={"STEP_ONLY": "1"})
    with sb:
        seen = sb.exec('echo "$UV_CACHE_DIR|$GOPROXY|$HTTPS_PROXY|$STEP_ONLY"').stdout
        assert seen.startswith("/cache/uv|file:///cache/go/") and seen.endswith("|http://proxy.invalid:3128|1\n")
        snap = sb.snapshot("env check")
        sb.restore(snap)  # a container made from the snapshot still runs its commands with the sandbox's env
        assert sb.exec('echo "$UV_CACHE_DIR"').stdout == "/cache/uv\n"
        image_env = docker.from_env().api.inspect_image(snap)["Config"]["Env"]
    base_env = docker.from_env().api.inspect_image(base_image)["Config"]["Env"]
    assert image_env == base_env
    assert not [v for v in image_env if v.split("=")[0] in {"UV_CACHE_DIR", "GOPROXY", "HTTPS_PROXY", "STEP_ONLY"}]


def test_the_disk_limit_counts_what_earlier_steps_wrote(base_image: str) -> None:
    sb = DockerSandbox(image=base_image, labels=RUN_LABEL, limits=Limits(disk_mb=100), disk_poll_s=0.3)
    with sb:
        assert sb.exec("dd if=/dev/urandom of=step1 bs=1M count=60 status=none && sync").ok
        snap = sb.snapshot("after step 1")
        sb.restore(snap)  # the next step starts from the snapshot: its container has written nothing yet
        assert sb.committed >= 60 * 2**20
        with pytest.raises(SandboxLimitError, match=r"MiB of it in earlier steps\), over Limits.disk_mb=100"):
            sb.exec("dd if=/dev/urandom of=step2 bs=1M count=60 status=none && sync; sleep 5", timeout=60)


def test_a_snapshot_that_added_much_goes_on_in_a_new_container_so_the_next_commits_only_what_follows(
        base_image: str) -> None:
    """snapshot_and_continue: over GO_ON_BYTES, the next container starts from the snapshot (what it wrote is
    not committed again); under it, the sandbox keeps its container. Either way the state goes on."""
    api = docker.from_env().api

    def image_of_container() -> str:
        return api.inspect_container(sb.container_id)["Image"]

    with DockerSandbox(image=base_image, labels=RUN_LABEL) as sb:
        assert sb.exec("head -c 70M /dev/urandom > big && echo 1 > small").ok
        big = sb.snapshot_and_continue("big")
        assert image_of_container() == api.inspect_image(big)["Id"]
        assert sb.exec("echo 2 >> small").ok
        small = sb.snapshot_and_continue("small")  # this commit added one line: the container stays
        assert image_of_container() == api.inspect_image(big)["Id"]
        assert sb.exec("echo 3 >> small").ok
        size = {tag: api.inspect_image(tag)["Size"] for tag in (base_image, big, small)}
        assert size[small] - size[big] < 2**20 and size[big] - size[base_image] >= GO_ON_BYTES
        assert sb.exec("wc -c < big; cat small").stdout == f"{70 * 2**20}\n1\n2\n3\n"
    for tag in (small, big):
        remove_image(tag)


def test_what_a_command_leaves_running_in_its_group_is_swept_when_it_ends(base_image: str) -> None:
    """Orphans of a finished command (a fork bomb's lingering children, a stray `&`) hold no pids or CPU for
    the next command; daemons in a session of their own are left alone."""
    with DockerSandbox(image=base_image, labels=RUN_LABEL) as sb:
        # The daemon is waited for until it leads its own session: the sweep at the end of the command must not
        # race its setsid().
        left = sb.exec("(sleep 300 &); setsid sleep 301 & d=$!; "
                       "until [ \"$(cut -d' ' -f6 /proc/$d/stat)\" = $d ]; do sleep 0.01; done; echo started",
                       timeout=30)
        assert left.ok and left.stdout == "started\n"
        running = sb.exec("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep '^sleep 30'",
                          timeout=30).stdout.split()
        assert running == ["sleep", "301"], running


def test_rebuilding_a_tag_removes_the_image_it_replaced_unless_something_uses_it(base_image: str,
                                                                                 tmp_path: Path) -> None:
    """A rebuilt environment must not leave its former image behind untagged (hundreds of them filled this
    machine's disk); an image a container still uses stays."""
    tag = f"autoinstall-test/rebuilt:{uuid.uuid4().hex[:8]}"

    def build(marker: str) -> str:
        (tmp_path / "Dockerfile").write_text(f"FROM {base_image}\nRUN echo {marker} > /marker\n")
        build_image(tmp_path, tag, labels=RUN_LABEL, buildargs={})
        return _inspect("image", tag)["Id"]

    first = build("one")
    second = build("two")
    assert second != first
    assert subprocess.run(["docker", "image", "inspect", first], capture_output=True, check=False).returncode != 0
    holder = subprocess.run(["docker", "create", "--label", "autoinstall=1", tag, "true"], capture_output=True,
                            text=True, check=True).stdout.strip()
    try:
        third = build("three")
        assert third != second
        assert _inspect("image", second)["Id"] == second  # used by a container: kept
    finally:
        subprocess.run(["docker", "rm", "-f", holder], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", tag, second], capture_output=True, check=False)


def test_a_test_run_counts_the_forks_the_pids_limit_refused(base_image: str) -> None:
    """What tells a suite that ran out of processes (pids_limit, `--pids`) from one whose tests fail."""
    starve = "for i in $(seq 200); do sleep 30 & done; kill $(jobs -p) 2>/dev/null; exit 1"
    with DockerSandbox(image=base_image, labels=RUN_LABEL, limits=Limits(pids=64)) as sb:
        calm = run_tests(sb, "true", "custom", [], 60)
        starved = run_tests(sb, starve, "custom", [], 60)
        inside = int(sb.exec(f"{PIDS_EVENTS} | sed -n 's/^max //p'").stdout)
        on_host = sb.forks_refused()  # read on the host, no exec: what run_tests asked
        sb.restore(sb.snapshot("after"))  # another container: its own count, from zero
        fresh = sb.forks_refused()
    assert calm.forks_refused == 0
    assert starved.forks_refused > 0
    assert on_host == inside > 0 and fresh == 0


def test_interrupting_the_sandboxes_of_other_threads_ends_their_commands_and_leaves_nothing(
        base_image: str, tmp_path: Path) -> None:
    """What a batch does on Ctrl-C/SIGTERM: a build thread blocked in a long command gets KeyboardInterrupt at
    once, and the sandbox's stop (racing the interrupt's removal) still removes its container and cache layer."""
    from envs.docker import DockerFactory, interrupt_sandboxes  # noqa: PLC0415 (only this test needs them)

    factory = DockerFactory(cache_dir=tmp_path / "cache")
    started, outcome = threading.Event(), []

    def build() -> None:
        with factory.sandbox(base_image, network=False, cache=True) as sb:
            outcome.append(sb.container_id)
            started.set()
            try:
                sb.exec("echo x > /cache/uv-written; sleep 300", timeout=600)
                outcome.append("returned")
            except KeyboardInterrupt:
                outcome.append("interrupted")
                with contextlib.suppress(KeyboardInterrupt):
                    sb.exec("true")
                    outcome.append("ran after the interrupt")

    worker = threading.Thread(target=build)
    worker.start()
    assert started.wait(120)
    time.sleep(1)
    t0 = time.monotonic()
    assert interrupt_sandboxes() >= 1
    worker.join(60)
    assert not worker.is_alive() and time.monotonic() - t0 < 30
    assert outcome[1:] == ["interrupted"]
    client = docker.from_env()
    try:
        assert not client.containers.list(all=True, filters={"id": outcome[0]})
        assert not [v for v in client.volumes.list(filters={"label": "autoinstall.kind=cache-layer"})
                    if str((tmp_path / "cache").resolve()) in ((v.attrs.get("Options") or {}).get("o") or "")]
    finally:
        client.close()
    assert not any((tmp_path / "cache-layers").iterdir())


def test_a_dockerfile_build_cannot_reach_this_machine(base_image: str, tmp_path: Path) -> None:
    """A replay Dockerfile's RUN steps are the project's install steps (its setup.py): they build on the
    sandbox network, so the host's services are as unreachable from them as from the sandboxes."""
    listener = socket.create_server(("0.0.0.0", 0))
    port = listener.getsockname()[1]
    probe = ("import socket, struct\\nroutes = open('/proc/net/route').read().splitlines()[1:]\\n"
             "gateways = [socket.inet_ntoa(struct.pack('<L', int(r.split()[2], 16))) for r in routes "
             "if r.split()[1] == '00000000']\\nfor a in ['172.17.0.1', *gateways, *'{hosts}'.split()]:\\n"
             "    try:\\n        socket.create_connection((a, {port}), 2).close(); print('REACHED', a)\\n"
             "    except OSError: print('refused', a)\\n")
    hosts = " ".join(a for a in _host_addresses() if not a.startswith("127."))
    (tmp_path / "Dockerfile").write_text(
        f'FROM {base_image}\nRUN printf "{probe.format(hosts=hosts, port=port)}" > /probe.py && '
        "python3 /probe.py > /probe.txt\n")
    tag = f"autoinstall-test/buildnet:{uuid.uuid4().hex[:8]}"
    try:
        build_image(tmp_path, tag, labels=RUN_LABEL, buildargs={})
        with DockerSandbox(image=tag, labels=RUN_LABEL, network=False) as sb:
            seen = sb.exec("cat /probe.txt").stdout
        assert "REACHED" not in seen and seen.count("refused") >= 2, seen
        socket.create_connection(("127.0.0.1", port), 3).close()  # the listener itself works
    finally:
        listener.close()
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


@pytest.mark.docker
def test_a_replay_build_runs_under_the_sandboxes_memory_limit(base_image: str, tmp_path: Path) -> None:
    """A Dockerfile RUN step is a project's setup code: a memory bomb there is stopped like one in a sandbox."""
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base_image}\nRUN python3 -c \"b = bytearray(400 * 2**20); print('allocated', len(b))\"\n")
    tag = f"autoinstall-test/buildmem:{uuid.uuid4().hex[:8]}"
    try:
        with pytest.raises(ImageBuildError):
            DockerFactory(Limits(memory_mb=128)).build(tmp_path, tag, {})
        assert DockerFactory(Limits(memory_mb=1024)).build(tmp_path, tag, {}) == tag  # the same step fits in 1 GiB
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


def test_cleanup_removes_a_chain_of_snapshots_whatever_order_the_engine_lists_them(base_image: str) -> None:
    """Snapshots built on snapshots (a task's start image on an environment's) and a former environment whose
    tag a rebuild took (dangling, with a child) all go in one cleanup: creation times tie within a second, so
    no listing order can be trusted to put children first, and an engine's refusal of a parent is no error."""
    labels = {"autoinstall.test": uuid.uuid4().hex[:12]}
    label_args = ["--label", "autoinstall=1", "--label", f"autoinstall.test={labels['autoinstall.test']}"]
    parent = f"autoinstall-test-parent:{labels['autoinstall.test']}"
    subprocess.run(["docker", "tag", base_image, parent], check=True)
    made = []
    for n, (tag, kind) in enumerate([(parent, "environment"), (None, "snapshot"), (None, "snapshot")]):
        source = made[-1] if made else parent
        ref = tag or f"autoinstall-snapshot:chain-{labels['autoinstall.test']}-{n}"
        dockerfile = f"FROM {source}\nRUN echo {n} > /chain-{n}\n"
        subprocess.run(["docker", "build", "-q", "-t", ref, *label_args, "--label", f"autoinstall.kind={kind}", "-"],
                       input=dockerfile, text=True, check=True, capture_output=True)
        made.append(ref)
    parent_id = _inspect("image", made[0])["Id"]
    subprocess.run(["docker", "rmi", made[0]], check=True, capture_output=True)  # the tag went to a rebuild
    ids = [parent_id] + [_inspect("image", ref)["Id"] for ref in made[1:]]
    report = cleanup(labels=labels)
    assert report.errors == [] and report.left_alone == []
    assert set(ids[1:]) <= set(report.images)  # the parent goes with them, or after them as dangling
    for iid in ids:
        assert subprocess.run(["docker", "image", "inspect", iid], capture_output=True, check=False).returncode != 0


def test_cleanup_removes_a_replay_an_interrupted_build_left_and_keeps_the_one_an_environment_stands_on(
        base_image: str) -> None:
    """A replay's build (`<env tag>-rebuild-N`) that an interrupt left tagged goes once its process is gone; the
    replay an environment's image was made from (untagged, with that child) is neither removed nor an error."""
    labels = {"autoinstall.test": uuid.uuid4().hex[:12]}
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that no longer runs
    owner = f"{socket.gethostname()}:{gone.pid}:engine"
    label_args = ["--label", "autoinstall=1", "--label", f"autoinstall.test={labels['autoinstall.test']}",
                  "--label", "autoinstall.kind=rebuild", "--label", f"autoinstall.owner={owner}"]
    left = f"autoinstall-env/leftover:{labels['autoinstall.test']}-rebuild-1"
    used = f"autoinstall-env/kept:{labels['autoinstall.test']}-rebuild"
    env = f"autoinstall-env/kept:{labels['autoinstall.test']}"
    for n, ref in enumerate((left, used)):
        subprocess.run(["docker", "build", "-q", "-t", ref, *label_args, "-"], input=f"FROM {base_image}\nRUN echo {n}"
                       " > /replayed\n", text=True, check=True, capture_output=True)
    subprocess.run(["docker", "build", "-q", "-t", env, "--label", "autoinstall.kind=environment", "-"],
                   input=f"FROM {used}\nENV A=1\n", text=True, check=True, capture_output=True)
    subprocess.run(["docker", "rmi", used], check=True, capture_output=True)  # the environment's tag took it
    left_id = _inspect("image", left)["Id"]
    try:
        assert cleanup(dry_run=True, labels=labels).images == [left_id]
        report = cleanup(labels=labels)
        assert report.images == [left_id] and report.errors == []
        assert subprocess.run(["docker", "image", "inspect", left], capture_output=True).returncode != 0
        assert _inspect("image", env)["Config"]["Labels"]["autoinstall.kind"] == "environment"
    finally:
        subprocess.run(["docker", "rmi", "-f", env, left], capture_output=True, check=False)
