"""On Docker: a crate whose dev-dependency needs rustc 1.88 (let chains), with no manifest saying so, builds on the
host's newer rustup toolchain copied into the image, records its version and origin, and its replay Dockerfile
builds an image that verifies (tests/fixtures/repos/rust_newer_toolchain)."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from envs.host_toolchains import host_toolchains
from tests.autoinstall.ecosystem_checks import built_on_host_toolchain, need_host_toolchain

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "rust_newer_toolchain"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_let_chains_dev_dependency_builds_on_the_hosts_rustup_toolchain_and_replays(
        docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    usable = [t for t in host_toolchains("rust") if t.release and toolchains.newer(t.version, "1.87")]
    if not usable:
        need_host_toolchain("this host has no rustup release toolchain of rustc 1.88 or newer")
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    chosen = usable[0]
    spec = built_on_host_toolchain(REPO, tmp_path / "env", chosen)
    switch = [e.repair for e in spec.log if e.repair and e.repair.kind == "switch_python"]
    assert len(switch) == 1 and "let chains" in switch[0].reason and chosen.prefix in switch[0].reason
