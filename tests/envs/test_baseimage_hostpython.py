"""Base images for the X.Y Debian lacks, from the host's CPython builds: discovery, what is copied, the recipe's
identity, the libraries' Debian packages, the error listing what is buildable, and a real 3.12 image."""

from __future__ import annotations

import os
import tarfile
import time
from pathlib import Path
from string import Template

import pytest

from envs import baseimage, hostfacts, pyenv_python
from envs.baseimage import ensure_base_image
from envs.hostfacts import buildable_pythons
from envs.docker import DockerSandbox
from envs.errors import ImageBuildError
from tests.envs.conftest import RUN_LABEL

STDLIB = ("os.py", "json/__init__.py", "lib-dynload/_ssl.cpython-312-x86_64-linux-gnu.so",
          "lib-dynload/_tkinter.cpython-312-x86_64-linux-gnu.so", "test/test_os.py", "test/support/__init__.py",
          "test/__init__.py", "idlelib/idle.py", "tkinter/__init__.py", "site-packages/README.txt",
          "site-packages/_host_hook.pth", "site-packages/pip/__init__.py",
          "config-3.12-x86_64-linux-gnu/libpython3.12.a", "config-3.12-x86_64-linux-gnu/Makefile")


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake host builds: 3.7.16 (too old), 3.10.2 and 3.10.13, 3.12.1 (with a stdlib), 3.11.7 (Debian has
    3.11), 3.13-dev (not X.Y.Z), 3.9.0 without its stdlib."""
    if hostfacts.host_suite() is None:
        pytest.skip("host builds are only offered on a Debian host")
    root = tmp_path / "builds"
    for full in ("3.7.16", "3.10.2", "3.10.13", "3.12.1", "3.11.7", "3.13-dev", "3.9.0"):
        xy = full[:4].rstrip(".-")
        (root / full / "bin").mkdir(parents=True)
        (root / full / "bin" / f"python{xy}").write_text(f"elf {full}")
        (root / full / "bin" / "python3").symlink_to(f"python{xy}")
        (root / full / "lib" / f"python{xy}").mkdir(parents=True)
        if full != "3.9.0":
            (root / full / "lib" / f"python{xy}" / "os.py").write_text("")
        (root / full / "lib" / f"libpython{xy}.so.1.0").write_text(f"lib {full}")
    for rel in STDLIB:
        (root / "3.12.1" / "lib" / "python3.12" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "3.12.1" / "lib" / "python3.12" / rel).write_text(rel)
    monkeypatch.setenv(hostfacts.BUILDS_ENV, str(root))
    return root


def test_host_builds_are_the_newest_patch_of_each_version_from_38(builds: Path) -> None:
    assert {v: p.name for v, p in hostfacts.host_versions().items()} == {
        "3.10": "3.10.13", "3.11": "3.11.7", "3.12": "3.12.1"}
    assert buildable_pythons() == ["3.11", "3.13", "3.9", "3.12", "3.10"]
    assert buildable_pythons(ordered=True) == ["3.9", "3.10", "3.11", "3.12", "3.13"]
    build = pyenv_python.host_python("3.12")
    assert build is not None and (build.full, build.home) == ("3.12.1", "/opt/python/3.12")
    assert build.source == f"host-python:3.12.1+{build.digest}@{hostfacts.host_suite()}"
    assert pyenv_python.host_python("3.8") is None
    assert hostfacts.debian_suite("3.12") == hostfacts.host_suite() and hostfacts.debian_suite("3.9") == "bullseye"
    assert hostfacts.debian_suite("3.8") is None


def test_the_copy_leaves_out_tests_tkinter_site_packages_and_the_static_library(builds: Path,
                                                                                tmp_path: Path) -> None:
    build = pyenv_python.host_python("3.12")
    assert build is not None
    size = pyenv_python.write_tarball(build, tmp_path / "python.tar")
    with tarfile.open(tmp_path / "python.tar") as tar:
        members = {os.path.normpath(m.name): m for m in tar.getmembers()}
    stdlib = {n.removeprefix("lib/python3.12/") for n in members if n.startswith("lib/python3.12/")}
    assert stdlib == {"os.py", "json", "json/__init__.py", "lib-dynload",
                      "lib-dynload/_ssl.cpython-312-x86_64-linux-gnu.so", "test", "test/__init__.py",
                      "test/support", "test/support/__init__.py", "site-packages", "site-packages/README.txt",
                      "config-3.12-x86_64-linux-gnu", "config-3.12-x86_64-linux-gnu/Makefile"}
    assert members["bin/python3"].issym() and members["bin/python3"].linkname == "python3.12"
    assert all(m.uid == 0 and m.uname == "root" for m in members.values())
    assert size == (tmp_path / "python.tar").stat().st_size


def test_the_recipe_carries_the_interpreters_identity(builds: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    [(tag, source, variables)] = baseimage._recipes("3.12", "http://a/debian", ca, registry=False)
    build = pyenv_python.host_python("3.12")
    assert build is not None
    assert tag.startswith("autoinstall-base:py3.12-") and source == f"{build.source}@http://a/debian"
    assert variables["python"] == "/opt/python/3.12/bin/python3.12"
    assert "python3-venv" not in variables["apt_packages"]  # Debian's python3 is not the interpreter here
    text = Template(baseimage.TEMPLATE.read_text()).substitute(variables | {"base": "img:tag"})
    assert "RUN /opt/python/3.12/bin/python3.12 -m venv /opt/venv" in text
    time.sleep(0.01)
    (builds / "3.12.1" / "lib" / "libpython3.12.so.1.0").write_text("another build of 3.12.1")
    [(rebuilt, _, _)] = baseimage._recipes("3.12", "http://a/debian", ca, registry=False)
    assert rebuilt != tag and pyenv_python.host_python("3.12").digest != build.digest  # type: ignore[union-attr]
    assert baseimage._recipes("3.11", "http://a/debian", ca, registry=False)[0][1].startswith("debian:bookworm")
    monkeypatch.setattr(pyenv_python, "LAYER_DIGEST", "another-layer")
    assert baseimage._recipes("3.12", "http://a/debian", ca, registry=False)[0][0] != rebuilt


def test_a_version_with_neither_suite_nor_build_lists_what_is_buildable(builds: Path) -> None:
    with pytest.raises(ImageBuildError, match=(
            r"Debian only provides 3\.9, 3\.11, 3\.13 \(bullseye, bookworm, trixie\), and the host's Python "
            r"builds in .*builds give 3\.10, 3\.12\. Use one of 3\.9, 3\.10, 3\.11, 3\.12, 3\.13, add a CPython "
            r"3\.8 build under")):
        ensure_base_image("3.8", registry=False)
    with pytest.raises(ImageBuildError, match=r"\(Host builds older than 3\.8 are not used"):
        ensure_base_image("3.7", registry=False)  # there is a 3.7.16 build, too old


def test_libraries_map_to_debian_packages_or_a_clear_error(builds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = pyenv_python.host_python("3.12")
    assert build is not None
    ldd = "\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x1)\n\tlibpython3.12.so.1.0 => " \
          f"{build.prefix}/lib/libpython3.12.so.1.0 (0x2)\n"
    dpkg = "libssl3:amd64: /usr/lib/x86_64-linux-gnu/libssl.so.3\n"
    monkeypatch.setattr(pyenv_python, "_run", lambda argv, check=True: ldd if argv[0] == "ldd" else dpkg)
    assert pyenv_python.runtime_packages(build) == ["libssl3"]
    ldd += "\tlibfoo.so.1 => /usr/local/lib/libfoo.so.1 (0x3)\n"
    with pytest.raises(ImageBuildError, match=r"links against libraries no Debian package owns: "
                                              r"/usr/local/lib/libfoo\.so\.1\. Rebuild it"):
        pyenv_python.runtime_packages(build)


def test_the_real_312_build_needs_only_debian_libraries() -> None:
    build = pyenv_python.host_python("3.12")
    if build is None:
        pytest.skip("no host CPython 3.12 build here")
    packages = pyenv_python.runtime_packages(build)
    assert {"libssl3", "libsqlite3-0", "libffi8", "zlib1g"} <= set(packages)
    assert not any(p.startswith(("libtk", "libx11")) for p in packages)  # tkinter is left out


def test_a_312_base_image_from_the_host_build_runs_venv_ssl_sqlite_ctypes(docker_engine: None) -> None:
    if pyenv_python.host_python("3.12") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but this host has no CPython 3.12 build (scripts/setup.sh)", pytrace=False)
        pytest.skip("no host CPython 3.12 build here")
    tag = ensure_base_image("3.12", registry=False)
    assert tag.startswith("autoinstall-base:py3.12-")
    script = (
        "python3 --version; command -v python3.12 python; readlink -f /usr/local/bin/python3; "
        "python3 -m venv /tmp/v && /tmp/v/bin/python -c 'import sys; print(sys.prefix)'; "
        "python3 -c 'import ssl, sqlite3, ctypes, lzma, bz2, readline, uuid; print(ssl.OPENSSL_VERSION[:7], "
        "sqlite3.sqlite_version_info >= (3, 0), ctypes.sizeof(ctypes.c_void_p))'; "
        "ls /opt/python/3.12/lib/python3.12/site-packages; uv --version"
    )
    with DockerSandbox(image=tag, labels=RUN_LABEL) as sb:
        r = sb.exec(script)
    assert r.ok, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Python 3.12.")
    assert lines[1:4] == ["/opt/venv/bin/python3.12", "/opt/venv/bin/python", "/opt/python/3.12/bin/python3.12"]
    assert lines[4:7] == ["/tmp/v", "OpenSSL True 8", "README.txt"]
    assert lines[7].startswith("uv ")
