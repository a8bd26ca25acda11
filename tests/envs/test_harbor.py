"""Harbor tasks checked by Harbor itself: `harbor lint` passes, and `harbor run -e docker` scores the oracle 1
(template and env-setup) and a do-nothing agent 0 on env-setup (so the verifier can fail).

Needs harbor (Python >= 3.12: `uv tool install --python python3.12 harbor==0.25.0`) and Docker Compose v2;
these tests fail when CI is set and either is missing, and skip otherwise.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.commands.export import export_cmd
from envs.catalog import Catalog
from tests.adversarial.surfaces import HARBOR_ENV
from tests.builds import Builds

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "setup_py_only"
pytestmark = pytest.mark.slow


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {what}", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="module")
def harbor(docker_engine: None) -> str:
    return harbor_executable()


def harbor_executable() -> str:
    """The harbor executable, with Docker Compose v2 beside it (skip, or fail under CI, without them)."""
    exe = os.environ.get("HARBOR") or shutil.which("harbor") or str(Path.home() / ".local" / "bin" / "harbor")
    if not Path(exe).is_file():
        _need("harbor is not installed (uv tool install --python python3.12 harbor==0.25.0)")
    compose = subprocess.run(["docker", "compose", "version"], check=False, capture_output=True, text=True)
    if compose.returncode != 0 or "version v1" in compose.stdout.lower():
        _need(f"Docker Compose v2 is missing (`docker compose version`: {compose.stdout or compose.stderr})")
    return exe


@pytest.fixture(scope="module")
def catalog(builds: Builds) -> Catalog:
    """A catalog holding one verified environment, built from the setup_py_only fixture repository (once per
    run, whoever asks first: tests/builds.py)."""
    built = builds.env(REPO.name)
    assert built.spec.status == "verified", built.spec.failure
    return built.catalog


def export(catalog: Catalog, out: Path, task: str) -> Path:
    app = typer.Typer()
    app.command("export")(export_cmd)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["export", "--out", str(out), "--format", "harbor", "--task", task,
                                      "--catalog", str(catalog.root), "--json"])
    assert result.exit_code == 0, result.output
    (name,) = json.loads(result.stdout)["files"]
    return out / name


def run(harbor: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([harbor, *args], check=False, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **HARBOR_ENV})


def reward(harbor: str, task: Path, agent: str, jobs: Path) -> float:
    """Run one trial of `agent` on `task` in Harbor's docker environment; the verifier's reward."""
    done = run(harbor, "run", "-p", str(task), "-a", agent, "-e", "docker", "-o", str(jobs),
               "--job-name", agent, "-q", "-n", "1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (trial,) = [p for p in (jobs / agent).iterdir() if (p / "result.json").is_file()]
    result = json.loads((trial / "result.json").read_text())
    assert result["exception_info"] is None, result["exception_info"]
    return float(result["verifier_result"]["rewards"]["reward"])


@pytest.mark.parametrize("task", ["template", "env-setup"])
def test_exported_tasks_pass_harbor_lint_and_score_the_oracle_1(harbor: str, catalog: Catalog, task: str,
                                                                 tmp_path: Path) -> None:
    task_dir = export(catalog, tmp_path / "out", task)
    lint = run(harbor, "lint", str(task_dir))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert reward(harbor, task_dir, "oracle", tmp_path / "jobs") == 1.0


def test_env_setup_scores_an_agent_that_installs_nothing_0(harbor: str, catalog: Catalog,
                                                           tmp_path: Path) -> None:
    task_dir = export(catalog, tmp_path / "out", "env-setup")
    assert reward(harbor, task_dir, "nop", tmp_path / "jobs") == 0.0
