"""On Docker: a crate whose dev-dependency needs rustc 1.88 (let chains), with no manifest saying so, builds on the
host's newer rustup toolchain copied into the image, records its version and origin, and its replay Dockerfile
builds an image that verifies (tests/fixtures/repos/rust_newer_toolchain)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs import docker as engine
from envs.host_toolchains import host_toolchains
from tests.autoinstall.ecosystem_checks import need_host_toolchain

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "rust_newer_toolchain"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_let_chains_dev_dependency_builds_on_the_hosts_rustup_toolchain_and_replays(
        docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    usable = [t for t in host_toolchains("rust") if t.release and toolchains.newer(t.version, "1.87")]
    if not usable:
        need_host_toolchain("this host has no rustup release toolchain of rustc 1.88 or newer")
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True))
    assert spec.status == "verified", (spec.failure, [(e.command, e.exit_code) for e in spec.log])
    chosen = usable[0]
    assert spec.python == f"3.13+rust-{chosen.version}"
    switch = [e.repair for e in spec.log if e.repair and e.repair.kind == "switch_python"]
    assert len(switch) == 1 and "let chains" in switch[0].reason and chosen.prefix in switch[0].reason
    [record] = spec.toolchains
    assert (record.name, record.version, record.origin) == ("rust", chosen.version, "host")
    assert record.source.startswith(chosen.prefix) and chosen.digest in record.source
    labels = engine.image_labels(spec.base_image or "") or {}
    assert labels.get("autoinstall.toolchain") == chosen.key
    assert spec.verification is not None and spec.verification.last_run is not None
    assert spec.verification.last_run.passed >= json.loads((REPO / "expected.json").read_text())["min_passed"]
    assert any(c.name == "rebuild" and c.ok for c in spec.verification.checks), spec.verification.checks
    dockerfile = (tmp_path / "env" / "Dockerfile").read_text()
    assert f"FROM {spec.base_image}" in dockerfile
    assert f"# Toolchain: rust {chosen.version} from the host: {chosen.prefix}" in dockerfile
    written = json.loads((tmp_path / "env" / "spec.json").read_text())
    assert written["toolchains"][0]["origin"] == "host" and written["toolchains"][0]["version"] == chosen.version
