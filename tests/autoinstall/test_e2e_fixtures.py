"""Every fixture repository end to end on real Docker: survey -> propose -> install/repair -> verify.

Each case states its expected outcome in tests/fixtures/repos/<case>/expected.json. Each case's test builds it
(once per run: tests/builds.py), so the cases spread over the run's xdist workers and build side by side in one
AUTOINSTALL_HOME, as `autoinstall batch` builds: builds wait on downloads, containers and commits more than on
the CPU, and the hostile fixtures that poison caches, probe the network or fill disks run beside others, whose
results their tricks must not change. The longest builds come first (SLOW_FIRST); the fork and memory bombs,
which take the machine's CPU, come last (ALONE), when the fewest other tests run beside them.
"""
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.docker.images import image_labels
from envs.spec import EnvSpec
from tests.autoinstall.test_python_locks import build_old_commit
from tests.builds import Builds, BuiltEnv

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
BUILT_ELSEWHERE = {"java_maven": "tests/autoinstall/test_java.py builds it on Docker and checks every test id",
                   "go_nested_runs": "tests/autoinstall/test_go_nested.py builds it on Docker and checks no run "
                                     "records a failure",
                   "maven_module_unbuildable": "tests/autoinstall/test_java_modules.py builds it on Docker and checks "
                                               "what is left out, why, and how it is counted",
                   "node_install_scripts": "tests/autoinstall/test_node_scripts.py builds it on Docker and checks the "
                                           "scripts left out and the one timeout",
                   "rust_newer_toolchain": "tests/autoinstall/test_rust_toolchain.py builds it on Docker with the "
                                           "host's rustup toolchain and replays its Dockerfile",
                   "go_newer_toolchain": "tests/autoinstall/test_go_toolchain.py builds it on Docker with the host's "
                                         "Go and with the module proxy's, and replays its Dockerfile",
                   "java_fonts": "tests/autoinstall/test_java_fonts.py builds it on Docker and checks the fonts "
                                 "step and every test passing",
                   "java_newer_toolchain": "tests/autoinstall/test_java_toolchain.py builds it on Docker with the "
                                           "host's JDK and replays its Dockerfile"}
"""Fixtures a dedicated Docker test already builds with stricter assertions: one build each keeps CI short."""
SLOW_FIRST = ("node_browser", "python_browser", "service_postgres", "service_backed", "maturin_bindings",
              "go_module", "service_compose_redis", "python_node_tests")
"""The longest builds start first, so the run does not end on one of them alone."""
ALONE = ("hostile_fork_bomb", "hostile_memory_bomb")
"""Last: they take every process and every byte the sandbox allows, and two cores shared with them would make
their suites' per-test timeout judge the machine's load, not the sandbox."""
_ALL = sorted(p.name for p in REPOS.iterdir() if (p / "expected.json").is_file() and p.name not in BUILT_ELSEWHERE)
CASES = ([c for c in SLOW_FIRST if c in _ALL] + [c for c in _ALL if c not in SLOW_FIRST and c not in ALONE]
         + [c for c in ALONE if c in _ALL])
REBUILT = "c_extension_needs_dev_package"
"""The case built with the rebuild check (its expected.json options): its replay Dockerfile is rebuilt too."""


class ProbeListener:
    """A service of this machine on PROBE_PORT (all addresses) that counts who connects to it."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_server(("0.0.0.0", port), reuse_port=True)
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def snapshots_of_this_process() -> list[str]:
    owner = f"label=autoinstall.owner={socket.gethostname()}:{os.getpid()}:engine"
    return subprocess.run(["docker", "images", "-q", "--filter", owner, "--filter", "label=autoinstall.kind=snapshot"],
                          capture_output=True, text=True, check=True).stdout.split()


@pytest.fixture(scope="session")
def probe_listener() -> Iterator[ProbeListener]:
    listener = ProbeListener(47123)  # the port tests/fixtures/repos/hostile_network_probe probes
    yield listener
    listener.sock.close()


@pytest.fixture(scope="session")
def home(builds: Builds) -> Path:
    """The run's one AUTOINSTALL_HOME of shared builds (tests/builds.py), so the uv cache is shared across builds."""
    return builds.home


def built(builds: Builds, case: str) -> BuiltEnv:
    """The case built with its expected.json's options, once per run (tests/builds.py)."""
    options = json.loads((REPOS / case / "expected.json").read_text()).get("options", {})
    return builds.env(case, **options)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # its build may wait for another worker's build of the same case
@pytest.mark.parametrize("case", CASES)
def test_fixture_repository_reaches_its_expected_outcome(case: str, builds: Builds, home: Path,
                                                         probe_listener: ProbeListener) -> None:
    expected = json.loads((REPOS / case / "expected.json").read_text())
    kept = set(snapshots_of_this_process())  # a session fixture's (the runtime tests' image), made earlier
    env = built(builds, case)
    spec, out = env.spec, env.out
    assert probe_listener.connections == 0, "a sandbox reached a service of this machine"
    assert spec.status == expected["outcome"], (spec.failure, [e.command for e in spec.log])
    assert (spec.failure.failure_class if spec.failure else None) == expected["failure_class"]
    written = EnvSpec.model_validate_json((out / "spec.json").read_text())
    assert written.status == spec.status
    shared = home / "cache" / "uv"  # no build may write into the cache the next one reads
    assert not (shared / "autoinstall-poison-canary").exists()
    assert not any("autoinstall-poison-canary" in p.read_text(errors="replace")
                   for p in shared.rglob("_pytest/__init__.py"))
    assert sorted(set(snapshots_of_this_process()) - kept) == [], "a build left its snapshots on the engine"
    if spec.status != "verified":
        return
    run = spec.verification.last_run if spec.verification else None
    assert run is not None and run.passed >= expected["min_passed"]
    assert len(spec.verification.runs) == 2 and spec.verification.flaky == []
    # the deciding run is the image's; the install phase's last run stands for the first only where they agree
    where = [r.sandbox for r in spec.verification.runs]
    assert where in (["install", "image"], ["image", "image"]), where
    if where[0] == "install":
        assert {r.test_id: r.outcome for r in spec.verification.runs[0].results} == \
            {r.test_id: r.outcome for r in run.results}
    assert sorted(s.import_name for s in spec.stubs) == sorted(expected["stubs"])
    assert bool(spec.deselected) == bool(expected["deselected_reason"])
    assert all(d.reason.startswith(expected["deselected_reason"]) for d in spec.deselected if ":" in d.reason
               and expected["deselected_reason"] in ("hangs", "collection_error"))
    assert all(d.reason for d in spec.deselected)
    dockerfile = (out / "Dockerfile").read_text()
    assert all(f'"bash", "-c", {json.dumps(s.command)}' in dockerfile for s in spec.steps)
    assert (out / "context" / "repo").is_dir()
    assert all((out / e.log_file).is_file() for e in spec.log if e.log_file)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # its build may wait for another worker's build of the same case
def test_rebuild_check_replays_the_dockerfile_to_a_verified_image(builds: Builds) -> None:
    env = built(builds, REBUILT)
    spec = env.spec
    assert spec.status == "verified", spec.failure
    assert any(c.name == "rebuild" and c.ok for c in spec.verification.checks), spec.verification.checks
    # the environment's image is the replay Dockerfile's build (its LABEL line), not the install's snapshot
    assert (image_labels(spec.image or "") or {}).get("autoinstall.commit") == (spec.source.commit or "unknown")
    assert all(image_labels(f"{spec.image}-rebuild{n}") is None for n in ("", "-1", "-2"))
    constraints = (env.out / "context" / "autoinstall" / "constraints.txt").read_text()
    assert "pytest==" in constraints and "-e" not in constraints
    assert any("libyaml-dev" in s.command for s in spec.steps)


@pytest.mark.slow
def test_as_of_commit_resolves_dependencies_of_the_commits_time(builds: Builds) -> None:
    """A project committed on 2023-06-01 (the run's one build of it: tests/autoinstall/test_python_locks.py)."""
    spec, out = builds.made("old-commit", build_old_commit)
    assert spec.status == "verified", spec.failure
    assert spec.env["UV_EXCLUDE_NEWER"].startswith("2023-06-01")
    constraints = (out / "context" / "autoinstall" / "constraints.txt").read_text()
    # iniconfig 2.1.0 came out in 2025; as of mid-2023 the newest was 2.0.0
    assert "iniconfig==2.0.0" in constraints
