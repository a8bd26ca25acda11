"""`autoinstall export`: record selection, the four formats, the manifest, and `docker save` of images.

Specs are made in memory (no build); the image tests use a tiny image imported from a 1 MB root filesystem.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.commands.export import export_cmd
from envs.catalog import Catalog, CatalogError, record_from_spec
from envs.errors import EnvError
from envs.export import Entry, ExportError, ExportOptions, read_manifest, run_export
from envs.export.harbor import TEMPLATES, task_config, to_toml
from envs.runtime import RuntimeSpec
from envs.spec import (
    Check,
    Collection,
    Deselection,
    EnvSpec,
    Failure,
    Plan,
    SourceRecord,
    Step,
    TestResult,
    TestRun,
    Verification,
)
from tests.envs.conftest import parquet

PASSED = ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]
FLAKY = "tests/test_a.py::test_flaky"


def make_spec(name: str, status: str = "verified", image: str | None = None) -> EnvSpec:
    results = [TestResult(test_id=t, outcome="passed") for t in [*PASSED, FLAKY]]
    results.append(TestResult(test_id="tests/test_a.py::test_broken", outcome="failed"))
    run = TestRun(exit_code=1, duration_s=1.5, results=results, counts={"passed": 3, "failed": 1})
    plan = Plan(steps=[Step(command="uv pip install -e .", why="the project")],
                checks=[Check(name="import a", kind="import", command="python -c 'import a'")],
                test_command="python -m pytest tests")
    return EnvSpec(
        status=status, source=SourceRecord(repo=f"https://example.org/{name}.git", name=name, commit="ab" * 20,
                                           commit_date="2024-01-02T03:04:05+00:00"),
        model="embedded", base_image="autoinstall-base:py3.11-test", python="3.11",
        image=image or f"autoinstall-env/{name}:abababababab", plan=plan, steps=plan.steps,
        env={"FOO": "bar baz"}, test_command=plan.test_command,
        deselected=[Deselection(test="tests/test_b.py", reason="needs a service")],
        verification=Verification(verified=status == "verified", runs=[run, run], flaky=[FLAKY],
                                  collection=Collection(default=6, command=6, selected=4)),
        failure=None if status == "verified" else Failure(failure_class="tests_failing", message="2/4 passed"),
        created_at="2024-05-06T00:00:00+00:00")


def add(catalog: Catalog, spec: EnvSpec, tmp_path: Path) -> str:
    env_dir = tmp_path / "envs" / spec.source.name
    env_dir.mkdir(parents=True, exist_ok=True)
    return catalog.upsert_spec(spec, env_dir).id


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(tmp_path / "catalog")


@pytest.fixture
def ids(catalog: Catalog, tmp_path: Path) -> dict[str, str]:
    return {"good": add(catalog, make_spec("good"), tmp_path),
            "bad": add(catalog, make_spec("bad", status="failed"), tmp_path)}


def export(catalog: Catalog, out: Path, fmt: str, **options: object) -> list[dict[str, object]]:
    manifest = run_export(catalog, ExportOptions(out=out, format=fmt, **options))  # type: ignore[arg-type]
    assert read_manifest(out) == manifest
    assert manifest.format == f"autoinstall-export/{fmt}-1"
    return [json.loads(line) for f in manifest.files if f.endswith(".jsonl")
            for line in (out / f).read_text().splitlines()]


def test_failed_environments_are_refused_by_name_and_nothing_is_written(catalog: Catalog, ids: dict[str, str],
                                                                        tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=f"{ids['bad']} \\(bad: tests_failing\\).*--include-failed"):
        export(catalog, tmp_path / "out", "jsonl", ids=[ids["good"], ids["bad"]])
    with pytest.raises(ExportError, match="--include-failed"):
        export(catalog, tmp_path / "out", "jsonl", status="failed")
    assert not (tmp_path / "out").exists()
    rows = export(catalog, tmp_path / "out", "jsonl", include_failed=True)
    assert sorted(r["status"] for r in rows) == ["failed", "verified"]
    assert len(catalog.list()) == 2  # the catalog is only read


def test_default_selection_is_the_verified_ones_and_unknown_ids_fail(catalog: Catalog, ids: dict[str, str],
                                                                     tmp_path: Path) -> None:
    assert [r["id"] for r in export(catalog, tmp_path / "out", "jsonl")] == [ids["good"]]
    with pytest.raises(CatalogError, match="No environment with id 'ffff'"):
        export(catalog, tmp_path / "out2", "jsonl", ids=["ffff"])


def test_jsonl_lines_are_full_specs(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    (line,) = export(catalog, tmp_path / "out", "jsonl")
    assert line["id"] == ids["good"]
    spec = catalog.get_spec(ids["good"])
    assert spec is not None and EnvSpec.model_validate(line) == spec.model_copy(update={"env_dir": None})
    assert str(tmp_path) not in json.dumps(line)  # no host path in any export


def test_swebench_rows_load_as_runtime_specs(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    (row,) = export(catalog, tmp_path / "out", "swebench")
    assert row["PASS_TO_PASS"] == PASSED and row["FAIL_TO_PASS"] == []  # flaky and failing tests left out
    assert row["base_commit"] == "ab" * 20 and row["created_at"] == "2024-01-02T03:04:05+00:00"
    assert row["instance_id"] == f"good-{ids['good']}" and row["repo"] == "https://example.org/good.git"
    spec = RuntimeSpec.from_export_row(row)
    assert (spec.image, spec.test_command, spec.workdir) == ("autoinstall-env/good:abababababab",
                                                             "python -m pytest tests", "/workspace")
    assert spec.tests == PASSED and spec.env == {"FOO": "bar baz"}
    assert RuntimeSpec.from_export_row({**row, "PASS_TO_PASS": json.dumps(row["PASS_TO_PASS"])}).tests == PASSED


def test_verl_parquet_reads_back_with_tool_kwargs(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    pq = parquet()
    import yaml

    from tools import openai_schemas

    export(catalog, tmp_path / "out", "verl")
    (row,) = pq.read_table(tmp_path / "out" / "verl.parquet").to_pylist()
    assert row["data_source"] == "autoinstall" and row["ability"]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"] and "good" in row["prompt"][1]["content"]
    assert row["reward_model"]["style"] == "rule"
    assert json.loads(row["reward_model"]["ground_truth"])["PASS_TO_PASS"] == PASSED
    kwargs = row["extra_info"]["tools_kwargs"]
    names = [s["function"]["name"] for s in openai_schemas()]
    assert sorted(kwargs) == sorted(names)
    create = kwargs["terminal"]["create_kwargs"]
    assert create["image"] == "autoinstall-env/good:abababababab" and create["tests"] == PASSED
    assert RuntimeSpec.from_export_row(json.loads(create["runtime_row"])).tests == PASSED
    tools = yaml.safe_load((tmp_path / "out" / "tools.yaml").read_text())["tools"]
    assert [t["tool_schema"] for t in tools] == openai_schemas()
    assert all(t["config"]["type"] == "native" and t["class_name"] for t in tools)


def test_verl_without_pyarrow_says_what_to_install(catalog: Catalog, ids: dict[str, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ExportError, match="needs pyarrow: install it"):
        export(catalog, tmp_path / "out", "verl")


def test_harbor_task_files(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    export(catalog, tmp_path / "out", "harbor")
    task = tmp_path / "out" / f"good-{ids['good']}-template"
    config = tomllib.loads((task / "task.toml").read_text())
    assert config["task"]["name"] == f"autoinstall/good-{ids['good']}-template"
    assert config["metadata"]["verification"] == {
        "status": "verified", "collected": 6, "selected": 4, "deselected": 2, "deselections": 1, "passed": 2,
        "failed": 1, "errors": 0, "skipped": 0, "flaky": 1, "stubs": 0, "threshold": 0.9, "max_deselected": 0.05}
    assert config["environment"]["docker_image"] == "autoinstall-env/good:abababababab"
    assert {"cpus", "memory_mb", "storage_mb", "network_mode"} <= set(config["environment"])
    assert config["verifier"]["environment_mode"] == "separate" and config["artifacts"] == ["/workspace"]
    assert config["agent"]["timeout_sec"] > 0 and config["verifier"]["timeout_sec"] > 0
    assert (task / "tests" / "selected.txt").read_text().split() == PASSED
    test_sh = (task / "tests" / "test.sh").read_text()
    assert "--ignore=tests/test_b.py" in test_sh and "/logs/verifier/reward.txt" in test_sh
    assert "export FOO='bar baz'" in test_sh and "import a" in test_sh
    assert os.access(task / "tests" / "test.sh", os.X_OK) and os.access(task / "solution" / "solve.sh", os.X_OK)
    assert (task / "environment" / "Dockerfile").read_text().count("FROM autoinstall-env/good:abababababab") == 1
    instruction = (task / "instruction.md").read_text()
    assert "good" in instruction and "template" in instruction and str(tmp_path) not in instruction


def test_env_setup_needs_the_checkout(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=f"{ids['good']}.*context/repo"):
        export(catalog, tmp_path / "out", "harbor", task="env-setup")
    (tmp_path / "envs" / "good" / "context" / "repo").mkdir(parents=True)
    (tmp_path / "envs" / "good" / "context" / "autoinstall").mkdir()
    (tmp_path / "envs" / "good" / "context" / "autoinstall" / "constraints.txt").write_text("six==1.16.0\n")
    export(catalog, tmp_path / "out", "harbor", task="env-setup")
    task = tmp_path / "out" / f"good-{ids['good']}-setup"
    config = tomllib.loads((task / "task.toml").read_text())
    assert "docker_image" not in config["environment"] and config["environment"]["network_mode"] == "public"
    assert (task / "environment" / "Dockerfile").read_text().splitlines()[2:4] == [
        "FROM autoinstall-base:py3.11-test", "COPY repo/ /workspace/"]
    assert "bash -c 'uv pip install -e .'" in (task / "solution" / "solve.sh").read_text()
    assert (task / "solution" / "autoinstall" / "constraints.txt").is_file()


def test_toml_writer_round_trips() -> None:
    data = task_config(_entry(), "template", "img:1")
    assert tomllib.loads(to_toml(data)) == data


def _entry() -> Entry:
    spec = make_spec("x\"y")
    return Entry(record_from_spec(spec, Path("/nowhere")), spec)


@pytest.mark.parametrize(("selected", "junit", "exit_code", "checks_ok", "reward"), [
    (PASSED, ["passed", "failure"], "1", "1", 0.5),
    (PASSED, ["passed", "passed"], "0", "1", 1.0),
    (PASSED, ["passed"], "1", "1", 0.5),  # a selected test that did not run counts as failed
    (PASSED, ["passed", "passed"], "0", "0", 0.0),  # a required check failed
    (PASSED, None, "2", "1", 0.0),  # no report at all
    ([], None, "0", "1", 1.0),  # no selection: the exit status decides
])
def test_scorer_writes_the_pass_fraction(tmp_path: Path, selected: list[str], junit: list[str] | None,
                                         exit_code: str, checks_ok: str, reward: float) -> None:
    (tmp_path / "selected.txt").write_text("\n".join(selected))
    if junit is not None:
        cases = "".join(f'<testcase name="t{i}">{"" if o == "passed" else f"<{o}/>"}</testcase>'
                        for i, o in enumerate(junit))
        (tmp_path / "junit.xml").write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    subprocess.run([sys.executable, str(TEMPLATES / "autoinstall_score.py"), "--junit", str(tmp_path / "junit.xml"),
                    "--selected", str(tmp_path / "selected.txt"), "--exit-code", exit_code, "--checks-ok", checks_ok,
                    "--out", str(tmp_path)], check=True)
    assert float((tmp_path / "reward.txt").read_text()) == reward
    assert json.loads((tmp_path / "results.json").read_text())["reward"] == reward


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("export")(export_cmd)
    app.command("other")(lambda: None)  # two commands, so `export` stays a subcommand
    return app


def test_cli_exports_and_prints_the_manifest(catalog: Catalog, ids: dict[str, str], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli(), ["export", "--out", str(tmp_path / "out"), "--format", "swebench",
                                        "--catalog", str(catalog.root), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ids"] == [ids["good"]]
    refused = CliRunner().invoke(cli(), ["export", "--out", str(tmp_path / "o2"), "--format", "jsonl",
                                         "--catalog", str(catalog.root), "--id", ids["bad"]])
    assert isinstance(refused.exception, ExportError) and ids["bad"] in str(refused.exception)
    bad_flag = CliRunner().invoke(cli(), ["export", "--out", str(tmp_path / "o3"), "--format", "csv"])
    assert bad_flag.exit_code == 2 and "csv" in bad_flag.output


# --- images: docker save -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_image(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ~1 MB image imported from a root filesystem with one random file."""
    from envs.docker import import_rootfs, remove_image

    tarball = tmp_path_factory.mktemp("rootfs") / "rootfs.tar"
    with tarfile.open(tarball, "w") as tar:
        data = os.urandom(1 << 20)
        info = tarfile.TarInfo("payload.bin")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    tag = import_rootfs(tarball, f"autoinstall-test/export-tiny:{uuid.uuid4().hex[:8]}", {"autoinstall.test": "1"})
    yield tag
    remove_image(tag)


def test_images_save_writes_loadable_tarballs(catalog: Catalog, tmp_path: Path, tiny_image: str) -> None:
    env_id = add(catalog, make_spec("tiny", image=tiny_image), tmp_path)
    export(catalog, tmp_path / "out", "swebench", images="save")
    (artifact,) = read_manifest(tmp_path / "out").images
    assert artifact.image == tiny_image and artifact.tarball and not artifact.error
    with tarfile.open(tmp_path / "out" / artifact.tarball) as tar:
        index = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
    assert index[0]["RepoTags"] == [tiny_image]
    assert env_id in read_manifest(tmp_path / "out").ids


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the tests do not run as root (the disk-full test mounts a tmpfs)")
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_disk_that_fills_during_save_keeps_the_rest_of_the_export(catalog: Catalog, tmp_path: Path,
                                                                      tiny_image: str, small_disk: Path) -> None:
    env_id = add(catalog, make_spec("tiny", image=tiny_image), tmp_path)
    out = small_disk / "out"
    with pytest.raises(EnvError, match="(?s)filled up while saving .*partial tarball was removed.*is complete and kept"):
        run_export(catalog, ExportOptions(out=out, format="harbor", images="save"))
    assert list((out / "images").iterdir()) == []  # no partial tarball
    manifest = read_manifest(out)
    assert manifest.ids == [env_id] and "filled up" in manifest.images[0].error and not manifest.images[0].tarball
    assert (out / f"tiny-{env_id}-template" / "task.toml").is_file()
    assert catalog.get_spec(env_id) is not None  # nothing recorded is lost


# --- images: push to a real registry on loopback (Debian's docker-registry) ------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_registry(root: Path, *, readonly: bool) -> tuple[subprocess.Popen[bytes], str]:
    """`docker-registry serve` on a free loopback port; returns the process and HOST:PORT once /v2/ answers."""
    import time
    import urllib.request

    from tests.envs.test_registry import need_registry_binary

    exe = need_registry_binary()
    root.mkdir(parents=True, exist_ok=True)
    address = f"127.0.0.1:{_free_port()}"
    maintenance = "  maintenance:\n    readonly:\n      enabled: true\n" if readonly else ""
    config = root / "registry.yml"
    config.write_text(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {root}/data\n"
                      f"{maintenance}http:\n  addr: {address}\n")
    proc = subprocess.Popen([exe, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://{address}/v2/", timeout=1).close()
            return proc, address
        except OSError:
            time.sleep(0.1)
    proc.kill()
    pytest.fail(f"docker-registry did not answer at {address}")


@pytest.fixture
def registry(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    proc, address = start_registry(tmp_path / "registry", readonly=getattr(request, "param", False))
    try:
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_images_push_points_the_export_at_the_registry(catalog: Catalog, tmp_path: Path, tiny_image: str,
                                                       registry: str) -> None:
    import urllib.request

    from envs.docker import remove_image

    add(catalog, make_spec("tiny", image=tiny_image), tmp_path)
    try:
        (row,) = export(catalog, tmp_path / "out", "swebench", images="push", registry=registry)
    finally:
        remove_image(f"{registry}/{tiny_image}")  # the local tag push_image added
    name, tag = tiny_image.split(":")
    assert row["image_name"] == f"{registry}/{tiny_image}"
    assert read_manifest(tmp_path / "out").images[0].reference == row["image_name"]
    with urllib.request.urlopen(f"http://{registry}/v2/{name}/tags/list", timeout=5) as answer:
        assert json.load(answer)["tags"] == [tag]


@pytest.mark.parametrize("registry", [True], indirect=True, ids=["read-only"])
def test_a_registry_that_refuses_the_push_fails_before_writing(catalog: Catalog, tmp_path: Path, tiny_image: str,
                                                               registry: str) -> None:
    env_id = add(catalog, make_spec("tiny", image=tiny_image), tmp_path)
    with pytest.raises(EnvError, match=f"(?s)Pushing {tiny_image} to {registry}.*Nothing was exported"):
        export(catalog, tmp_path / "out", "harbor", images="push", registry=registry)
    assert not (tmp_path / "out").exists()
    assert catalog.get_spec(env_id) is not None


def test_partial_environments_are_exported_only_when_asked(catalog: Catalog, ids: dict[str, str],
                                                           tmp_path: Path) -> None:
    partial = add(catalog, make_spec("gutted", status="partial"), tmp_path)
    assert [r["id"] for r in export(catalog, tmp_path / "out", "jsonl")] == [ids["good"]]
    with pytest.raises(ExportError, match=f"{partial} \\(gutted.*--include-partial"):
        export(catalog, tmp_path / "out2", "jsonl", ids=[partial])
    rows = export(catalog, tmp_path / "out3", "jsonl", include_partial=True)
    assert sorted(r["status"] for r in rows) == ["partial", "verified"]
