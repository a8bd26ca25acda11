"""Shared fixtures. Docker-backed fixtures skip when no engine answers, but fail when CI is set:
CI must prove the Docker path, never silently skip it.

The run is spread over xdist workers (`-n`, with `--dist loadgroup`, set by `pytest_configure`): a Docker or slow
test runs on the worker of its module's other such tests (their module fixtures are made once), except in SPREAD,
whose tests run side by side; SLOWEST start first; builds several modules use are made once per run
(`builds`, tests/builds.py)."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
"""Python's bytecode caches are written, whatever the shell says: without them every Python process the run
starts (the xdist workers, each CLI and guard subprocess, Harbor, swebench) compiles each module it imports
again (1.4 s of the CLI's 2.7 s of imports; pytest's collection 11 s -> 3.3 s). Only the host's processes read
this: sandboxes and task images set their own."""

if TYPE_CHECKING:
    from tests.builds import Builds

SPREAD = ("tests/adversarial/test_cheating_agents.py", "tests/autoinstall/test_e2e_fixtures.py",
          "tests/envs/test_host_ca.py", "tests/autoinstall/test_node.py",
          "tests/autoinstall/test_tasks_docker_js_java.py", "tests/autoinstall/test_python_locks.py",
          "tests/autoinstall/test_debug.py", "tests/test_cli_signals.py",
          "tests/autoinstall/test_tasks_docker.py", "tests/autoinstall/test_go_toolchain.py")
"""Modules whose Docker tests share no module fixture worth keeping on one worker (or share it through
tests/builds.py, made once per run whichever worker asks first)."""
_CHEATS = "tests/adversarial/test_cheating_agents.py::test_"
SLOWEST = ("tests/autoinstall/test_go_toolchain.py", f"{_CHEATS}the_runtime_pays_only_the_fix[go]",
           f"{_CHEATS}the_runtime_pays_only_the_fix[java]", f"{_CHEATS}harbor_pays_only_the_fix",
           "tests/autoinstall/test_tasks_docker.py", "tests/autoinstall/test_go_nested.py",
           "tests/envs/test_host_ca.py", f"{_CHEATS}swebench_resolves_only_the_fix",
           f"{_CHEATS}the_runtime_pays_only_the_fix", "tests/adversarial/test_matcher_cheat.py",
           "tests/autoinstall/test_ray_executor.py", "tests/autoinstall/test_java_modules.py",
           "tests/autoinstall/test_java_fonts.py",
           "tests/autoinstall/test_node_scripts.py", "tests/envs/test_go_runner.py",
           "tests/autoinstall/test_e2e_fixtures.py", "tests/autoinstall/test_tasks_docker_js_java.py",
           "tests/autoinstall/test_interpreters.py", "tests/envs/test_harbor.py", "tests/envs/test_task_clients.py",
           "tests/test_cli_signals.py", "tests/envs/test_docker.py")
"""Started first, longest first (as measured with --durations; 2026-12-04 at load ~20: the two Go toolchain
builds 644 s and 610 s, test_tasks_docker's fixture 164 s then 280 s, go_nested 337 s, java_modules 223 s,
node_scripts 218 s, go_runner 160 s; 2026-12-05 at load ~10: the matcher cheat 390 s with its node_jest build,
which the e2e case then shares), so the run does not end on one of them alone; an item takes the rank of
the first prefix its id starts with."""
DOCKER_FIXTURES = ("docker_engine", "base_image", "builds")
"""Fixtures that need the engine: a test using one (directly or through its fixtures) is marked `docker`."""


@pytest.fixture(autouse=True)
def _no_debian_suites_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian's suites are not looked in unless a test asks (it sets AUTOINSTALL_DEBIAN_SUITES itself): choices
    stay what the test sets up, and no test reads a mirror's index it did not mean to."""
    monkeypatch.setenv("AUTOINSTALL_DEBIAN_SUITES", "off")


def _need_docker(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but Docker is unavailable: {reason}", pytrace=False)
    pytest.skip(f"Docker unavailable: {reason}")


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """A running Docker engine, or skip (fail under CI)."""
    from envs.docker import check_engine
    from envs.errors import EngineUnavailableError

    try:
        check_engine()
    except EngineUnavailableError as e:
        _need_docker(str(e))


@pytest.fixture(scope="session")
def base_image(docker_engine: None) -> str:
    """The default base image (Python 3.11), built once per machine and reused across tests."""
    from envs.baseimage import ensure_base_image

    return ensure_base_image(python="3.11")


@pytest.fixture(scope="session")
def builds(base_image: str, tmp_path_factory: pytest.TempPathFactory) -> Builds:
    """The run's shared builds: each fixture environment and task built once, whichever worker asks first."""
    from tests.builds import Builds, run_root  # local: it imports the whole builder, which the fast tier skips

    return Builds(run_root(tmp_path_factory))


def pytest_configure(config: pytest.Config) -> None:
    """With workers (`-n N`) and no `--dist` of the caller's: `--dist loadgroup --no-loadscope-reorder`, so each
    xdist_group stays on one worker and SLOWEST keeps its order. Set here, not in addopts, so that a run
    without xdist (`-p no:xdist`) still starts."""
    asked = any(arg.startswith("--dist") or arg == "-d" for arg in config.invocation_params.args)
    if getattr(config.option, "dist", "no") == "load" and not asked:  # xdist's default once -n is given
        config.option.dist = "loadgroup"
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in DOCKER_FIXTURES):
            item.add_marker(pytest.mark.docker)
        path = item.nodeid.split("::")[0]
        heavy = item.get_closest_marker("docker") or item.get_closest_marker("slow")
        if heavy and path not in SPREAD and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(path))
    rank = {prefix: i for i, prefix in enumerate(SLOWEST)}

    def first(item: pytest.Item) -> int:
        return next((i for prefix, i in rank.items() if item.nodeid.startswith(prefix)), len(rank))

    items.sort(key=first)  # stable: the same order on every worker, as xdist needs


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller (or a run without workers) removes the images the shared builds made, once every
    worker is done with them."""
    if hasattr(session.config, "workerinput"):
        return
    # pytest's own TempPathFactory: what the tmp_path_factory fixture returns, outside a fixture
    root = session.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    if (root / "builds").is_dir():
        from tests.builds import Builds  # local: only runs that built something get here

        Builds(root).remove_images()
