"""`batch --executor ray`: builds as Ray tasks on one local Ray instance (2 CPUs, a `docker` resource of 2),
first with the fake build (fast), then real builds of two fixture repositories pushed to a registry on
loopback that refuses the push (the builds kept, verified), then retried against one that takes them."""
from __future__ import annotations

import _thread
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.batch import BatchEntry, BatchOptions, run_batch
from autoinstall.batch.fake import fake_build
from autoinstall.batch.ray_executor import ClusterError, RayExecutor, RayOptions, import_ray
from autoinstall.batch.runner import EntryResult, NullObserver
from autoinstall.commands.batch import batch_cmd
from envs.catalog import Catalog, owner_alive
from envs.docker import image_labels, pull_image, remove_image
from envs.errors import RegistryError
from tests.envs.test_registry import registry_get, running_registry

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
CASES = ("setup_py_only", "pep621_extras")


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """One local Ray instance for the module; workers get their own AUTOINSTALL_HOME."""
    try:
        ray = import_ray()
    except ClusterError as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but Ray is missing: {e}", pytrace=False)
        pytest.skip(str(e))
    home = tmp_path_factory.mktemp("ray-home")
    ray.init(address="local", num_cpus=2, resources={"docker": 2}, object_store_memory=100 << 20,
             include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"AUTOINSTALL_HOME": str(home)}})
    yield ray
    ray.shutdown()


class Recorder(NullObserver):
    """Keeps the events the driver received, and can press Ctrl-C once every build has reported a step."""

    def __init__(self, interrupt_after: int = 0) -> None:
        self.events: list[tuple[str, str, str]] = []
        self.stepping: set[str] = set()
        self.interrupt_after = interrupt_after
        self.lock = threading.Lock()

    def event(self, entry: BatchEntry, event: str, text: str) -> None:
        with self.lock:
            self.events.append((entry.repo, event, text))
            if event == "step":
                self.stepping.add(entry.repo)
                if len(self.stepping) == self.interrupt_after:
                    self.interrupt_after = 0
                    _thread.interrupt_main()


# --- without a cluster ------------------------------------------------------------------------------------

def test_without_ray_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ClusterError, match=r"uv sync --extra ray"):
        RayExecutor().__enter__()


def test_a_registry_that_is_not_an_address_is_refused_up_front() -> None:
    with pytest.raises(RegistryError, match="HOST:PORT"):
        RayOptions(registry="myregistry")


def test_registry_needs_the_ray_executor(tmp_path: Path) -> None:
    (tmp_path / "batch.txt").write_text("fake://a\n")
    result = CliRunner().invoke(cli(), ["batch", str(tmp_path / "batch.txt"), "--registry", "127.0.0.1:5000",
                                        "--catalog", str(tmp_path / "c")], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "--address and --registry are for --executor ray" in result.output


# --- fake builds on the local instance --------------------------------------------------------------------

@pytest.mark.slow  # a real local Ray instance: ~10 s to start and stop
def test_builds_run_as_tasks_and_are_recorded_on_the_driver(ray_instance: ModuleType, tmp_path: Path) -> None:
    catalog, log, recorder = Catalog(tmp_path / "cat"), tmp_path / "built.txt", Recorder()
    batch = [BatchEntry(line=1, repo=f"fake://ok?sleep=0.3&log={log}"),
             BatchEntry(line=2, repo=f"fake://boom?outcome=raise&log={log}")]
    with RayExecutor(build=fake_build) as executor:
        assert executor.slots() == 2
        summary = run_batch(batch, catalog, BatchOptions(jobs=2), build=executor.build, observer=recorder)
    assert [r.outcome for r in summary.results] == ["verified", "failed"]
    ok, boom = (catalog.get(r.id or "") for r in summary.results)
    assert ok.status == "verified" and Path(ok.env_dir).parent == catalog.envs_dir
    assert json.loads(Path(ok.env_dir, "spec.json").read_text())["env_dir"] == ok.env_dir
    assert boom.failure_class == "infrastructure" and "fake engine failure" in boom.failure_message
    assert "Traceback" in Path(boom.env_dir, "logs", "node-error.txt").read_text()
    assert Path(boom.env_dir, "logs", "ray-node.txt").read_text().startswith("built on node ")
    phases = [text for _, event, text in recorder.events if event == "phase"]
    assert "queued for a node with docker" in phases and any(p.startswith("install on ") for p in phases)
    assert any(event == "step" for _, event, _ in recorder.events)
    with RayExecutor(build=fake_build) as executor:
        again = run_batch(batch, catalog, build=executor.build)
    assert [r.outcome for r in again.results] == ["skipped", "skipped"]
    assert sorted(log.read_text().split()) == ["boom", "ok"], "finished work was built again"


@pytest.mark.slow  # a real local Ray instance: ~10 s to start and stop
def test_a_cluster_without_docker_nodes_is_refused(ray_instance: ModuleType) -> None:
    with pytest.raises(ClusterError, match=r"ray start --address HEAD:6379 --resources"):
        RayExecutor(RayOptions(resource="no-such-resource")).__enter__()


@pytest.mark.slow  # a real local Ray instance: ~10 s to start and stop
def test_ctrl_c_cancels_the_remote_builds(ray_instance: ModuleType, tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "cat")
    batch = [BatchEntry(line=i, repo=f"fake://slow{i}?sleep=60") for i in (1, 2, 3)]
    started = time.monotonic()
    with RayExecutor(build=fake_build) as executor:
        summary = run_batch(batch, catalog, BatchOptions(jobs=2), build=executor.build,
                            observer=Recorder(interrupt_after=2))
    assert time.monotonic() - started < 30, "the driver waited for the remote builds instead of cancelling"
    assert summary.interrupted
    assert [r.outcome for r in summary.results] == ["interrupted", "interrupted", "not_started"]
    records = catalog.list()
    assert len(records) == 2 and all(r.status == "running" for r in records)
    assert not any(owner_alive(r.owner) for r in records), "the next batch would not build them again"
    deadline = time.monotonic() + 10
    while ray_instance.available_resources().get("docker") != 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_instance.available_resources().get("docker") == 2, "a cancelled build still holds its slot"


# --- real builds, a real registry -------------------------------------------------------------------------

def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("batch")(batch_cmd)
    app.command("noop")(lambda: None)  # two commands, so `batch` stays a subcommand
    return app


def run_cli(batch_file: Path, catalog: Path, *args: str) -> tuple[int, list[EntryResult]]:
    result = CliRunner().invoke(cli(), ["batch", str(batch_file), "--catalog", str(catalog), "--json",
                                        "--executor", "ray", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    summary = json.loads(result.stdout)
    return result.exit_code, [EntryResult.model_validate(r) for r in summary["results"]]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One registry for the module: the base layers the images share are pushed once."""
    with running_registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture
def batch_file(tmp_path: Path) -> Path:
    path = tmp_path / "batch.txt"
    path.write_text("".join(f"{REPOS / case}\n" for case in CASES))
    return path


def test_a_refused_push_keeps_the_build_and_a_retry_pushes_it(ray_instance: ModuleType, base_image: str, registry: str,
                                          batch_file: Path, tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "cat")
    with running_registry(tmp_path / "readonly", readonly=True) as readonly:
        code, results = run_cli(batch_file, tmp_path / "cat", "--registry", readonly)
    assert code == 1
    assert [(r.outcome, r.failure_class) for r in results] == [("failed", "infrastructure")] * 2
    for result in results:
        record = catalog.get(result.id or "")
        assert record.failure_message.startswith("verified, but the image was not pushed")
        assert f"to {readonly}" in record.failure_message and "not read-only" in record.failure_message
        assert record.image and not record.image.startswith(readonly) and image_labels(record.image)
        spec = catalog.get_spec(record.id)  # the verification and logs are kept
        assert spec and spec.verification and spec.verification.verified and record.tests_passed > 0
        assert Path(record.env_dir, "Dockerfile").is_file() and any(Path(record.env_dir).glob("logs/*.log"))
    # retried against a registry that takes them: verified, pushed, and pulled back by a node without them
    code, results = run_cli(batch_file, tmp_path / "cat", "--registry", registry, "--retry-failed")
    assert code == 0, results
    records = [catalog.get(r.id or "") for r in results]
    try:
        assert [r.status for r in records] == ["verified", "verified"]
        pushed = registry_get(registry, "/v2/_catalog")["repositories"]
        for record in records:
            image = record.image or ""
            assert image.startswith(f"{registry}/autoinstall-env/"), image
            name, tag = image.removeprefix(f"{registry}/").rsplit(":", 1)
            assert name in pushed and tag in registry_get(registry, f"/v2/{name}/tags/list")["tags"]
            remove_image(image)
            assert image_labels(image) is None
            pull_image(image)  # what a node without the image does
            assert image_labels(image) is not None
            env_dir = Path(record.env_dir)
            assert {"spec.json", "Dockerfile"} <= {p.name for p in env_dir.iterdir()}
            assert any(env_dir.glob("logs/*-install.log"))
            spec = catalog.get_spec(record.id)
            assert spec and spec.image == image and spec.verification and spec.verification.verified
    finally:
        for record in records:
            if record.image and record.image.startswith(registry):
                remove_image(record.image)
