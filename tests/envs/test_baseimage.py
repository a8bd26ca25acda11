"""Base images: recipe hashing, what the image contains, and the errors for what cannot be built here."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from string import Template

import pytest

from envs import baseimage, hostfacts
from envs.baseimage import ensure_base_image, list_base_images
from envs.hostfacts import host_mirror
from envs.docker import DockerSandbox
from envs.errors import ImageBuildError
from tests.envs.conftest import RUN_LABEL


def test_mirror_comes_from_the_env_var_or_the_host_apt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hostfacts.MIRROR_ENV, "http://mirror.example/debian/")
    assert host_mirror() == "http://mirror.example/debian"
    monkeypatch.delenv(hostfacts.MIRROR_ENV)
    assert host_mirror().startswith("http") and "security" not in host_mirror()


def test_recipe_tag_changes_with_mirror_ca_and_python(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("one")
    tag = baseimage._recipes("3.11", "http://a/debian", ca, registry=False)[0][0]
    assert tag.startswith("autoinstall-base:py3.11-")
    assert tag == baseimage._recipes("3.11", "http://a/debian", ca, registry=False)[0][0]
    assert tag != baseimage._recipes("3.11", "http://b/debian", ca, registry=False)[0][0]
    ca.write_text("two")
    assert tag != baseimage._recipes("3.11", "http://a/debian", ca, registry=False)[0][0]
    assert baseimage._recipes("3.13", "http://a/debian", ca, registry=False)[0][0].startswith(
        "autoinstall-base:py3.13-"
    )


def test_template_renders_every_variable(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    for _, _, variables in baseimage._recipes("3.13", "http://a/debian", ca, registry=True):
        text = Template(baseimage.TEMPLATE.read_text()).substitute(variables | {"base": "img:tag"})
        assert "${" not in text and "FROM img:tag" in text
        assert "ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH" in text


def test_unsupported_python_names_what_can_be_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_PYTHON_BUILDS", str(tmp_path))  # no host builds: Debian's versions only
    with pytest.raises(ImageBuildError, match=r"3\.9, 3\.11, 3\.13 \(bullseye, bookworm, trixie\), and no host"):
        ensure_base_image("3.10", registry=False)
    with pytest.raises(ImageBuildError, match=r"look like 3\.11"):
        ensure_base_image("three")


def test_second_call_is_fast_and_returns_the_same_tag(base_image: str) -> None:
    started = time.monotonic()
    assert ensure_base_image("3.11") == base_image
    assert time.monotonic() - started < 2
    assert base_image in [i.tag for i in list_base_images()]


def test_base_image_has_python_venv_uv_and_build_tools(base_image: str) -> None:
    with DockerSandbox(image=base_image, labels=RUN_LABEL) as sb:
        r = sb.exec(
            "python --version; echo $VIRTUAL_ENV; command -v uv python; uv --version; git --version; "
            "gcc --version | head -1; pkg-config --version; curl --version | head -1; pwd; echo $PIP_CERT"
        )
        assert r.ok, r.output
        lines = r.stdout.splitlines()
        assert lines[0].startswith("Python 3.11.")
        assert lines[1:4] == ["/opt/venv", "/opt/venv/bin/uv", "/opt/venv/bin/python"]
        assert lines[4].startswith("uv ") and lines[5].startswith("git version")
        assert lines[-2:] == ["/workspace", "/etc/autoinstall/ca-bundle.crt"]


def test_unreachable_mirror_is_a_clear_build_error(
    docker_engine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("debootstrap") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but debootstrap is missing (scripts/setup.sh installs it)", pytrace=False)
        pytest.skip("needs debootstrap")
    monkeypatch.setenv(hostfacts.MIRROR_ENV, "http://127.0.0.1:9/debian")
    started = time.monotonic()
    with pytest.raises(ImageBuildError, match="cannot be reached") as err:
        ensure_base_image("3.11", registry=False)
    assert hostfacts.MIRROR_ENV in str(err.value)
    assert time.monotonic() - started < 60


def test_bootstrap_commands_stream_their_output_through_log() -> None:
    lines: list[str] = []
    baseimage._run(["sh", "-c", "echo one; echo two >&2"], "bookworm", "http://m/debian", lines.append)
    assert lines == ["one", "two"]
    lines.clear()
    script = "for i in $(seq 1 30); do echo line $i; done; echo 'Failed getting Release file'; exit 3"
    with pytest.raises(ImageBuildError, match=r"exit 3\)\.\nThe Debian mirror http://m/debian") as err:
        baseimage._run(["sh", "-c", script], "bookworm", "http://m/debian", lines.append)
    assert len(lines) == 31 and "line 30" in str(err.value) and "line 10\n" not in str(err.value)


def test_an_environment_is_never_written_over_a_base_image(base_image: str) -> None:
    # a debug session re-recorded onto its spec's image: where that image was the base image, every later build
    # started from the session's snapshot (seen when a test's interrupt never arrived)
    from envs.docker import DockerFactory  # noqa: PLC0415 (the engine only for Docker tests)
    from envs.docker.images import image_labels  # noqa: PLC0415
    from envs.errors import EnvError  # noqa: PLC0415

    before = image_labels(base_image)
    with pytest.raises(EnvError, match="never written over it"):
        DockerFactory().finalize(base_image, base_image, {"X": "1"}, {"autoinstall.kind": "environment"})
    assert image_labels(base_image) == before and (before or {}).get("autoinstall.kind") == "base"
