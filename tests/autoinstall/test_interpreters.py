"""Python 3.9 (Debian bullseye) next to 3.11 and 3.13: chosen from requires-python, built from Debian."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.baseimage import SUITES


def test_debian_interpreters_come_first_and_each_has_a_debian_suite() -> None:
    toolchains = PythonEcosystem().toolchains
    assert toolchains[:3] == ("3.11", "3.13", "3.9")
    assert all(version in SUITES for version in toolchains[:3])
    assert not set(toolchains[3:]) & set(SUITES)  # host builds only for what Debian lacks


@pytest.mark.slow
def test_e2e_a_project_for_old_pythons_verifies_on_39(docker_engine: None, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "old"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "oldpy"\nversion = "0.1"\nrequires-python = ">=3.7,<3.10"\n'
        '[tool.setuptools]\npy-modules = ["oldpy"]\n')
    (repo / "oldpy.py").write_text("import sys\n\nVERSION = sys.version_info[:2]\n")
    (repo / "tests" / "test_oldpy.py").write_text(
        "import oldpy\n\ndef test_v():\n    assert oldpy.VERSION == (3, 9)\n")
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(repo), BuildOptions(out_dir=tmp_path / "env"))
    assert spec.status == "verified", spec.failure
    assert spec.python == "3.9" and "py3.9" in (spec.base_image or "")
