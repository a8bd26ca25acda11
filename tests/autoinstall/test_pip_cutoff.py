"""A plain `pip install` (the fallback when uv cannot parse a requirement) honours the time machine's cutoff."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.python.repairs import pip_under_cutoff, repair
from autoinstall.ecosystems.python.timemachine import CUTOFF_ENV, PIP_CUTOFF_ENV, as_of, exemption_step
from envs.spec import Diagnosis, Evidence, Plan, Step

LOGGER = '#!/bin/bash\necho "$(basename "$0") $*" >> "$CALLS"\n'


def _run(command: str, tmp_path: Path, **env: str) -> list[str]:
    """Run `command` with `uv` and `python` replaced by programs that log their arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("uv", "python"):
        (bin_dir / name).write_text(LOGGER)
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls"
    calls.unlink(missing_ok=True)
    subprocess.run(["bash", "-c", command], check=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin",
                                                            "CALLS": str(calls), **env})
    return calls.read_text().splitlines() if calls.exists() else []


def _parse_error_ctx(env: dict[str, str]) -> RepairContext:
    failing = Step(command="uv pip install -e.[tests]", why="the checkout", kind="project")
    return RepairContext(plan=Plan(steps=[failing]), failing=failing, phase="install",
                         output="error: Failed to parse: `-e.[tests]`", python="3.11", available_pythons=["3.11"],
                         diagnosis=Diagnosis(kind="installer_parse_error", subject="-e.[tests]", evidence="x"),
                         env=env)


def test_the_pip_fallback_installs_as_of_the_same_cutoff(tmp_path: Path) -> None:
    fix = repair(_parse_error_ctx(as_of("2021-01-01T00:00:00Z")))
    assert fix is not None and fix.kind == "replace" and fix.step is not None
    calls = _run(fix.step.command, tmp_path, **{CUTOFF_ENV: "2021-01-01T00:00:00Z"})
    assert calls == ["uv pip install -q --exclude-newer-package pip=false pip>=26.0",
                     "python -m pip install --uploaded-prior-to=2021-01-01T00:00:00Z -e.[tests]"]
    # latest releases (no cutoff, or --latest-deps): pip without the option
    assert _run(fix.step.command, tmp_path)[-1] == "python -m pip install -e.[tests]"


def test_the_cutoff_is_in_the_environment_for_any_pip_and_the_exemption_step_brings_a_pip_that_reads_it(
        tmp_path: Path) -> None:
    env = as_of("2021-01-01T00:00:00Z")
    assert env[PIP_CUTOFF_ENV] == env[CUTOFF_ENV]  # recorded in spec.env, hence ENV lines of the Dockerfile
    command = exemption_step(Evidence(file="x")).command.replace("/etc/uv", str(tmp_path / "uv"))
    assert _run(command, tmp_path, **env) == [
        "python -m pip --version", "uv pip install -q --exclude-newer-package pip=false pip>=26.0"]
    assert _run(command, tmp_path) == []  # no cutoff: pip stays as it is


@pytest.mark.slow
def test_a_real_pip_resolves_as_of_the_cutoff(tmp_path: Path) -> None:
    """iniconfig 1.0.0 is the newest release before 2020-06-01 (2.x came in 2023)."""
    uv = shutil.which("uv")
    assert uv is not None
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True)
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{Path(uv).parent}:/usr/bin:/bin",
           CUTOFF_ENV: "2020-06-01T00:00:00Z"}
    subprocess.run(["bash", "-c", pip_under_cutoff("uv pip install iniconfig")], check=True, env=env,
                   capture_output=True, timeout=300)
    shown = subprocess.run([f"{venv}/bin/python", "-m", "pip", "show", "iniconfig"], capture_output=True, text=True)
    assert "Version: 1.0.0" in shown.stdout
