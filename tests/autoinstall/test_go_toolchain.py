"""On Docker: a module whose `go 1.25.0` line is newer than Debian's Go 1.24 (and whose code needs it) builds on
the host's newer Go tree copied into the image, and, with host toolchains off, on go1.25.0 from the Go module
proxy through GOTOOLCHAIN; either way the spec records which and from where, and the replay Dockerfile builds an
image that verifies (tests/fixtures/repos/go_newer_toolchain)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.host_toolchains import OFF_ENV, host_toolchains
from tests.autoinstall.ecosystem_checks import need_host_toolchain

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "go_newer_toolchain"
MIN_PASSED = json.loads((REPO / "expected.json").read_text())["min_passed"]


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202 - an EnvSpec
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True))
    assert spec.status == "verified", (spec.failure, [(e.command, e.exit_code) for e in spec.log])
    assert spec.verification is not None and spec.verification.runs[-1].passed >= MIN_PASSED
    assert any(c.name == "rebuild" and c.ok for c in spec.verification.checks), spec.verification.checks
    return spec


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_newer_go_line_builds_on_the_hosts_go_tree(docker_engine: None, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    usable = [t for t in host_toolchains("go") if t.release and not toolchains.newer("1.25.0", t.version)]
    if not usable:
        need_host_toolchain("this host has no Go tree of 1.25.0 or newer (/usr/local/go, ~/sdk)")
    spec = _build(tmp_path, monkeypatch)
    assert spec.python == f"3.13+go-{usable[0].version}" and "GOTOOLCHAIN" not in spec.env
    [record] = spec.toolchains
    assert (record.name, record.version, record.origin) == ("go", usable[0].version, "host")
    assert record.source.startswith(usable[0].prefix)
    assert any("go.mod:3 asks for go 1.25.0" in n for n in spec.plan.notes), spec.plan.notes


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_without_host_toolchains_gotoolchain_fetches_it_from_the_module_proxy(
        docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")
    spec = _build(tmp_path, monkeypatch)
    assert spec.python == "3.13"  # Debian's Go 1.24 switches by itself (GOTOOLCHAIN=auto), the replay too
    [record] = spec.toolchains
    assert (record.name, record.version, record.origin) == ("go", "1.25.0", "registry")
    assert "golang.org/toolchain@v0.0.1-go1.25.0.linux-" in record.source
    assert "# Toolchain: go 1.25.0 from the registry" in (tmp_path / "env" / "Dockerfile").read_text()
