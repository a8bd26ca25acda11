"""On Docker: a Maven project whose pom asks for Java 25 (and whose code needs it) builds on the host's JDK 25
copied into the image as JAVA_HOME, records its version and origin, trusts the host's CA through that JDK, and
its replay Dockerfile builds an image that verifies (tests/fixtures/repos/java_newer_toolchain)."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from envs import docker as engine
from envs.docker.trust import CA_JKS
from envs.host_toolchains import host_toolchains
from tests.autoinstall.ecosystem_checks import built_on_host_toolchain, need_host_toolchain

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "java_newer_toolchain"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_release_25_project_builds_on_the_hosts_jdk_and_replays(docker_engine: None, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    usable = [t for t in host_toolchains("java") if t.release and not toolchains.newer("25", t.version)]
    if not usable:
        need_host_toolchain("this host has no JDK 25 or newer (/usr/lib/jvm, ~/.sdkman, ~/.jdks, $JAVA_HOME)")
    chosen = usable[0]
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = built_on_host_toolchain(REPO, tmp_path / "env", chosen)
    assert any("pom.xml:13 asks for Java 25" in n and chosen.prefix in n for n in spec.plan.notes), spec.plan.notes
    home = f"/opt/toolchains/java-{chosen.version}"
    # what every step, check, test run, replay and grading inherit: the image's own JAVA_HOME, PATH and trust
    with engine.DockerSandbox(image=spec.image or "", network=False, pass_proxy_env=False) as box:
        seen = box.exec(f"printenv JAVA_HOME PATH; java -version 2>&1; mvn -v; "
                        f"readlink {home}/lib/security/jssecacerts")
    assert seen.ok and seen.stdout.startswith(f"{home}\n{home}/bin:"), seen.output
    assert f'version "{chosen.version}' in seen.stdout and f"Java version: {chosen.version}" in seen.stdout
    assert seen.stdout.rstrip().endswith(CA_JKS), seen.output
