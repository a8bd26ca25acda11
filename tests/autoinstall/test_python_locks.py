"""Lock files: read, judged stale or not, turned into constraints of every install; a failing lock falls back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.python.proposal.locked import LOCK_CONSTRAINTS, PINNED_LINES, choose_lock
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.python.survey import survey
from autoinstall.ecosystems.python.timemachine import CUTOFF_ENV, LATEST_ENV, PIP_CUTOFF_ENV
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from autoinstall.plan.models import get_model
from envs.spec import Diagnosis, EnvSpec, Plan, Step
from tests.autoinstall.ecosystem_checks import write_tree

if TYPE_CHECKING:
    from tests.builds import Builds  # it imports the builder, which the fast tier skips

REPOS = Path(__file__).parent.parent / "fixtures" / "repos"
USE_LOCK = f"-c {LOCK_CONSTRAINTS}"


def test_a_uv_lock_is_exported_and_constrains_every_install() -> None:
    facts = survey(REPOS / "uv_lock")
    assert [(lk.path, lk.kind, lk.stale) for lk in facts.locks] == [("uv.lock", "uv", "")]
    plan = get_model("embedded").propose(facts, REPOS / "uv_lock")
    assert plan.steps[0].command.startswith("uv export --frozen") and plan.steps[0].command.endswith(
        f"-o {LOCK_CONSTRAINTS}")
    installs = [s.command for s in plan.steps if "uv pip install" in s.command]
    assert installs and all(c.endswith(USE_LOCK) for c in installs)
    assert any("installing the locked versions of uv.lock" in n for n in plan.notes)


def test_a_stale_lock_is_not_used_and_the_plan_says_why() -> None:
    facts = survey(REPOS / "stale_lock")
    assert facts.locks[0].stale == "iniconfig declared in pyproject.toml but not in uv.lock"
    plan = get_model("embedded").propose(facts, REPOS / "stale_lock")
    assert not any(LOCK_CONSTRAINTS in s.command for s in plan.steps)
    assert any("uv.lock is out of sync" in n and "resolving afresh" in n for n in plan.notes)


def test_a_poetry_lock_is_read_into_pins() -> None:
    facts = survey(REPOS / "poetry_lock")
    (lock,) = facts.locks
    assert (lock.kind, lock.pins, lock.stale) == ("poetry", ["iniconfig==1.1.1", "six==1.16.0"], "")
    plan = get_model("embedded").propose(facts, REPOS / "poetry_lock")
    assert plan.steps[0].command == f"printf '%s\\n' iniconfig==1.1.1 six==1.16.0 > {LOCK_CONSTRAINTS}"


def test_pdm_and_pipfile_locks_and_forked_versions(tmp_path: Path) -> None:
    pdm = write_tree(tmp_path / "pdm", {
        "pyproject.toml": '[project]\nname = "p"\nversion = "1"\ndependencies = ["six", "numpy"]\n',
        "pdm.lock": '[[package]]\nname = "six"\nversion = "1.16.0"\n\n'
                    '[[package]]\nname = "numpy"\nversion = "1.24.4"\nmarker = "python_version < \\"3.9\\""\n\n'
                    '[[package]]\nname = "numpy"\nversion = "2.0.2"\nmarker = "python_version >= \\"3.9\\""\n\n'
                    '[[package]]\nname = "p"\nversion = "1"\n',
    })
    (lock,) = survey(pdm).locks
    assert lock.kind == "pdm" and lock.pins == ['numpy==1.24.4; python_version < "3.9"',
                                                'numpy==2.0.2; python_version >= "3.9"', "six==1.16.0"]
    pipenv = write_tree(tmp_path / "pipenv", {
        "Pipfile": '[packages]\nsix = "*"\n[dev-packages]\npytest = "*"\n',
        "Pipfile.lock": json.dumps({"default": {"six": {"version": "==1.16.0"}},
                                    "develop": {"colorama": {"version": "==0.4.6",
                                                             "markers": "sys_platform == 'win32'"}}}),
        "app.py": "import six\n",
    })
    (lock,) = survey(pipenv).locks
    assert lock.kind == "pipenv" and lock.stale == "pytest declared in Pipfile but not in Pipfile.lock"
    assert lock.pins == ["colorama==0.4.6; sys_platform == 'win32'", "six==1.16.0"]


def test_a_pip_tools_lock_is_chosen_for_the_interpreter(tmp_path: Path) -> None:
    pinned = "# via pip-compile\nsix==1.16.0 \\\n    --hash=sha256:abc\niniconfig==2.0.0 ; python_version >= '3.8'\n"
    root = write_tree(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='p')\n",
        "dependencies/tox-py311-cp311-linux-x86_64.txt": pinned,
        "dependencies/tox-py313-cp313-linux-x86_64.txt": pinned,
        "dependencies/tox-docs-cp311-linux-x86_64.txt": pinned,
    })
    facts = survey(root)
    assert [(lk.path, lk.python) for lk in facts.locks] == [
        ("dependencies/tox-py311-cp311-linux-x86_64.txt", "3.11"),
        ("dependencies/tox-py313-cp313-linux-x86_64.txt", "3.13")]
    lock, _ = choose_lock(facts, "3.13")
    assert lock is not None and lock.python == "3.13"
    import subprocess  # the step's sed, on the file as pip-compile writes it

    out = subprocess.run(["sed", "-n", "-E", PINNED_LINES, str(root / lock.path)], capture_output=True, text=True)
    assert out.stdout.splitlines() == ["six==1.16.0", "iniconfig==2.0.0 ; python_version >= '3.8'"]


def _ctx(command: str, diagnosis: Diagnosis) -> RepairContext:
    return RepairContext(plan=Plan(), failing=Step(command=command, why="x", kind="project"), phase="install",
                         output="x", diagnosis=diagnosis, python="3.13", available_pythons=["3.11", "3.13"])


def test_a_lock_that_cannot_be_installed_here_is_emptied_and_resolution_goes_on() -> None:
    unknown = Diagnosis(kind="unknown", evidence="numpy==1.21.0 has no wheels for cp313")
    fix = repair(_ctx(f"uv pip install -e . {USE_LOCK}", unknown))
    assert fix is not None and fix.kind == "insert_before" and fix.step is not None
    assert fix.step.command == f": > {LOCK_CONSTRAINTS}" and "resolve afresh" in fix.step.why
    export = repair(_ctx(f"uv export --frozen -q -o {LOCK_CONSTRAINTS}", unknown))
    assert export is not None and export.kind == "replace" and export.step is not None
    assert export.step.command == f": > {LOCK_CONSTRAINTS}"
    assert repair(_ctx("uv pip install -e .", unknown)) is None  # no lock: the project step has no fix


@pytest.mark.slow
def test_e2e_the_locked_version_is_installed(builds: Builds) -> None:
    built = builds.env("uv_lock")  # the run's one build of it (tests/autoinstall/test_e2e_fixtures.py's too)
    assert built.spec.status == "verified", built.spec.failure
    constraints = (built.out / "context" / "autoinstall" / "constraints.txt").read_text()
    assert "six==1.16.0" in constraints.splitlines()  # the lock's, not today's release
    assert "uv export --frozen" in (built.out / "Dockerfile").read_text()


def build_old_commit(work: Path) -> tuple[EnvSpec, Path]:
    """A project committed on 2023-06-01 whose build needs a setuptools of 2024, built with the rebuild check:
    (its spec, its output folder). Made once per run (tests/builds.py `made`); tests/autoinstall/
    test_e2e_fixtures.py asks the same build what it resolved."""
    import git  # builds the old commit

    repo = write_tree(work / "old", {
        # setuptools 70 came out in 2024: as of 2023-06 only the exemption lets the build find it
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=70"]\nbuild-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "old"\nversion = "0.1"\ndependencies = ["iniconfig"]\n'
                          '[tool.setuptools]\npy-modules = ["old"]\n',
        "old.py": "import iniconfig\n",
        "test_old.py": "import old\n\ndef test_it():\n    assert old.iniconfig\n",
    })
    g = git.Repo.init(repo)
    g.index.add(["pyproject.toml", "old.py", "test_old.py"])
    g.index.commit("old", author_date="2023-06-01T12:00:00", commit_date="2023-06-01T12:00:00")
    return build_environment(str(repo), BuildOptions(out_dir=work / "env", rebuild_check=True)), work / "env"


@pytest.mark.slow
def test_e2e_old_commit_resolves_as_of_its_date_with_todays_build_tools(builds: Builds) -> None:
    spec, out = builds.made("old-commit", build_old_commit)
    assert spec.status == "verified", spec.failure
    assert spec.env[CUTOFF_ENV].startswith("2023-06-01") and "setuptools" in spec.env[LATEST_ENV].split()
    constraints = (out / "context" / "autoinstall" / "constraints.txt").read_text()
    assert "iniconfig==2.0.0" in constraints.splitlines()  # 2.1.0 came out in 2025
    dockerfile = (out / "Dockerfile").read_text()
    assert f"ENV {CUTOFF_ENV}=" in dockerfile and f"ENV {LATEST_ENV}=" in dockerfile
    # a plain pip (a fallback, a chat model's step) honours the same cutoff: recorded, and a pip that reads it
    assert f"ENV {PIP_CUTOFF_ENV}=" in dockerfile and spec.env[PIP_CUTOFF_ENV] == spec.env[CUTOFF_ENV]
    assert any("pip>=26.0" in s.command for s in spec.steps)
    assert "/etc/uv/uv.toml" in dockerfile
