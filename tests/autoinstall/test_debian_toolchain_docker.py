"""On Docker: with the host's toolchains turned off, a module whose `go 1.25.0` line is newer than Debian trixie's
Go 1.24 builds on testing's golang-1.26-go, installed on the base image with testing pinned low; the spec records
the suite and the exact packages (what came along too), the image's C library stays trixie's, and the replay
Dockerfile, which repeats the layer's recipe on the image under it, builds an image that verifies
(tests/fixtures/repos/go_newer_toolchain)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs import docker as engine
from envs.debian_toolchains import SUITES_ENV
from envs.host_toolchains import OFF_ENV

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "go_newer_toolchain"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_without_host_toolchains_a_newer_suites_go_is_installed_recorded_and_replayed(
        docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")
    monkeypatch.setenv(SUITES_ENV, "testing unstable")
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True))
    assert spec.status == "verified", (spec.failure, [(e.command, e.exit_code) for e in spec.log])
    assert spec.verification is not None and spec.verification.runs[-1].passed >= json.loads(
        (REPO / "expected.json").read_text())["min_passed"]
    assert any(c.name == "rebuild" and c.ok for c in spec.verification.checks), spec.verification.checks
    [record] = spec.toolchains
    assert (record.name, record.origin) == ("go", "debian") and record.suite in ("testing", "unstable")
    assert spec.python == f"3.13+go-{record.version}@{record.suite}" and "GOTOOLCHAIN" not in spec.env
    minor = ".".join(record.version.split(".")[:2])
    package = f"golang-{minor}-go"
    assert record.packages[package].startswith(record.version) and f"golang-{minor}-src" in record.packages
    assert not any(p in record.packages for p in ("libc6", "libc-bin", "dpkg")), record.packages
    assert any("go.mod:3 asks for go 1.25.0" in n and f"Debian {record.suite}'s {package}=" in n
               for n in spec.plan.notes), spec.plan.notes
    dockerfile = (tmp_path / "env" / "Dockerfile").read_text()
    assert f"FROM {record.base}\n# Debian {record.suite}'s go {record.version}" in dockerfile
    assert f"for pv in {package}={record.packages[package]};" in dockerfile
    assert f"Pin: release a={record.suite}" in dockerfile
    with engine.DockerSandbox(image=spec.image or "", network=False, pass_proxy_env=False) as box:
        seen = box.exec("go version; printenv GOTOOLCHAIN; dpkg-query -W -f='${Version}' libc6; "
                        "cat /etc/apt/preferences.d/autoinstall-*")
    assert seen.ok, seen.output
    assert f"go version go{record.version} " in seen.stdout and "\nlocal\n2.41-" in seen.stdout
    assert "Pin-Priority: 100" in seen.stdout
