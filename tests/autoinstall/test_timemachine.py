"""The time machine: dependencies as of the commit date, build tooling exempt, drift repaired in order."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.python.timemachine import (
    BUILD_TOOLS,
    CHOICE_ENV,
    CUTOFF_ENV,
    LATEST_ENV,
    PIP_CUTOFF_ENV,
    as_of,
    cutoff,
    drift_repair,
    drift_subject,
    exemption_step,
)
from autoinstall.install.loop import Installer
from autoinstall.options import Budgets, BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.fake import FakeFactory
from envs.spec import Check, Diagnosis, Evidence, Plan, Step
from tests.autoinstall.test_install_loop import OK, PASSING, World
from tests.autoinstall.test_pipeline_fake import REPO as FAKE_REPO
from tests.autoinstall.test_pipeline_fake import Machine

ATTRIBUTE_ERROR = """\
ImportError while loading conftest '/workspace/tests/conftest.py'.
tests/conftest.py:3: in <module>
    import attr
/opt/venv/lib/python3.11/site-packages/attr/__init__.py:10: in <module>
    from ._make import attrib
  File "/opt/venv/lib/python3.11/site-packages/attr/_make.py", line 12, in <module>
    from . import _compat
AttributeError: module 'collections' has no attribute 'Mapping'
"""
PLUGIN_INVALID = ("pluggy._manager.PluginValidationError: unknown hook 'pytest_warning_captured' in plugin "
                  "<module 'pytest_oldplugin' from '/opt/venv/lib/python3.11/site-packages/pytest_oldplugin.py'>")
WARNING = ("/opt/venv/lib/python3.11/site-packages/docutils/utils.py:12: DeprecationWarning: "
           "the imp module is deprecated")


def test_the_cutoff_is_the_commit_date_in_utc() -> None:
    assert cutoff("2022-12-30T16:04:26+01:00")[0] == "2022-12-30T15:04:26Z"
    env = as_of("2022-12-30T16:04:26+01:00")
    assert env[CUTOFF_ENV] == env[PIP_CUTOFF_ENV] == "2022-12-30T15:04:26Z"  # uv's and pip's cutoff
    assert env[LATEST_ENV].split() == list(BUILD_TOOLS) and "setuptools" in BUILD_TOOLS
    assert "as of the commit date" in env[CHOICE_ENV]
    assert PythonEcosystem().as_of("2022-12-30T16:04:26+01:00") == env


def test_a_missing_or_future_commit_date_means_latest_releases_with_the_reason() -> None:
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(days=400)).isoformat()
    for date, reason in ((None, "no commit date"), ("", "no commit date"), (future, "in the future"),
                         ("yesterday", "not a date")):
        env = as_of(date)
        assert CUTOFF_ENV not in env and LATEST_ENV not in env and PIP_CUTOFF_ENV not in env, date
        assert env[CHOICE_ENV].startswith("latest releases") and reason in env[CHOICE_ENV], env


def test_the_exemption_step_writes_every_exempt_package_into_uvs_system_config(tmp_path: Path) -> None:
    import subprocess  # runs the step's shell command with /etc redirected to tmp_path

    step = exemption_step(Evidence(file="pyproject.toml"))
    command = step.command.replace("/etc/uv", str(tmp_path / "uv"))
    path = {"PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-c", command], check=True, env={LATEST_ENV: "setuptools hatchling", **path})
    written = (tmp_path / "uv" / "uv.toml").read_text()
    assert written == "[exclude-newer-package]\nsetuptools = false\nhatchling = false\n"
    subprocess.run(["bash", "-c", command], check=True, env=path)  # --latest-deps: no list
    assert (tmp_path / "uv" / "uv.toml").read_text() == "[exclude-newer-package]\n"


def test_failures_raised_inside_a_dependency_are_dependency_drift() -> None:
    assert drift_subject(ATTRIBUTE_ERROR) == "attr"
    assert drift_subject(PLUGIN_INVALID) == "pytest_oldplugin"
    assert drift_subject(WARNING) == "docutils"
    assert drift_subject("tests/test_x.py:3: AttributeError: 'X' has no attribute 'y'") is None
    diagnosis = diagnose(ATTRIBUTE_ERROR)
    assert (diagnosis.kind, diagnosis.subject) == ("dependency_drift", "attr")
    assert "AttributeError" in diagnosis.evidence
    assert diagnose("ModuleNotFoundError: No module named 'attr'").kind == "missing_module"
    old_sdist = diagnose("  × Failed to build `numpy==1.23.5`\n  ├─▶ The build backend returned an error")
    assert (old_sdist.kind, old_sdist.subject) == ("dependency_drift", "numpy") and "1.23.5" in old_sdist.evidence
    assert diagnose("  × Failed to build `spam @ file:///workspace`").kind == "unknown"  # the project itself


def _ctx(env: dict[str, str], phase: str = "check", tried: list | None = None) -> RepairContext:
    failing = Step(command="python -m pytest --collect-only", why="collect")
    return RepairContext(plan=Plan(), failing=failing, phase=phase, output=ATTRIBUTE_ERROR,  # type: ignore[arg-type]
                         python="3.11", available_pythons=["3.11"],
                         diagnosis=Diagnosis(kind="dependency_drift", subject="attr", evidence="AttributeError"),
                         env=env, tried=tried or [])


def test_a_plan_without_the_exemption_step_gets_it_when_an_install_drifts() -> None:
    ctx = _ctx(as_of("2021-01-01T00:00:00Z"), phase="install")
    fix = repair(ctx)
    assert fix is not None and fix.kind == "insert_before" and fix.step is not None
    assert fix.step.command == exemption_step(Evidence(file="x")).command
    planned = ctx.model_copy(update={"plan": Plan(steps=[fix.step])})
    assert repair(planned).kind == "set_env"  # type: ignore[union-attr]  # then the package, as below


def test_drift_is_repaired_by_that_package_then_latest_releases_then_given_up() -> None:
    env = as_of("2021-01-01T00:00:00Z")
    first = repair(_ctx(env))
    assert first is not None and first.kind == "set_env"
    assert first.env[LATEST_ENV].split()[-1] == "attrs"  # the distribution of the module `attr`
    second = repair(_ctx({**env, **first.env}, tried=[first]))
    assert second is not None and set(second.env) == {CUTOFF_ENV, PIP_CUTOFF_ENV, CHOICE_ENV}
    assert second.env[PIP_CUTOFF_ENV] == second.env[CUTOFF_ENV]  # pip follows uv to latest releases
    assert second.env[CUTOFF_ENV] > "2025" and second.env[CHOICE_ENV].startswith("latest releases")
    assert drift_repair({**env, **first.env, **second.env}, "attr", "", [first, second]) is None
    assert drift_repair({CHOICE_ENV: "latest releases"}, "attr", "", []) is None  # no cutoff: not drift


def test_a_changed_cutoff_runs_every_step_again_under_it() -> None:
    plan = Plan(steps=[Step(command="uv pip install -e .", why="the checkout", kind="project")],
                checks=[Check(name="collect", kind="collect", command="python -m pytest --collect-only -q")],
                test_command="python -m pytest tests")
    installs: list[str] = []

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install"):
            installs.append(env.get(LATEST_ENV, ""))
            if "attrs" in env.get(LATEST_ENV, ""):
                sb.mark("new-attrs")
            return OK
        if "--collect-only" in cmd:
            return OK if sb.has("new-attrs") else ExecResult(exit_code=2, stdout=ATTRIBUTE_ERROR)
        return PASSING if "pytest" in cmd else OK

    made: list[World] = []

    def make(python: str) -> World:
        made.append(World(python, behaviour))
        return made[-1]

    class Model:
        name = "embedded"
        repair = staticmethod(repair)

    installer = Installer(plan, Path(__file__).parent, Model(), make, budgets=Budgets())
    installer.result.env.update(as_of("2021-01-01T00:00:00Z"))
    result = installer.run()
    assert result.ok, result.failure
    assert len(made) == 2, "the repair restarts the install under the new environment"
    assert list(dict.fromkeys(installs)) == [" ".join(BUILD_TOOLS), " ".join([*BUILD_TOOLS, "attrs"])]
    assert result.env[LATEST_ENV].endswith(" attrs") and result.env[CUTOFF_ENV] == "2021-01-01T00:00:00Z"


def test_latest_deps_is_an_option_of_every_build() -> None:
    assert BuildOptions().latest_deps is False
    assert BuildOptions(latest_deps=True).latest_deps is True


def _old_checkout(tmp_path: Path) -> Path:
    import shutil  # a git copy of the fixture, committed in 2022

    import git

    repo = tmp_path / "old"
    shutil.copytree(FAKE_REPO, repo)
    g = git.Repo.init(repo)
    g.index.add([p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts])
    g.index.commit("old", author_date="2022-03-01T12:00:00 +0000", commit_date="2022-03-01T12:00:00 +0000")
    return repo


def test_a_build_records_its_cutoff_and_exemptions_in_spec_and_dockerfile(tmp_path: Path) -> None:
    spec = build_environment(str(_old_checkout(tmp_path)), BuildOptions(out_dir=tmp_path / "env"),
                             factory=FakeFactory(Machine()))
    assert spec.status == "verified", spec.failure
    assert spec.env[CUTOFF_ENV] == "2022-03-01T12:00:00Z" and spec.env[LATEST_ENV] == " ".join(BUILD_TOOLS)
    assert spec.steps[0].command == exemption_step(Evidence(file="x")).command
    dockerfile = (tmp_path / "env" / "Dockerfile").read_text()
    assert f'ENV {CUTOFF_ENV}="2022-03-01T12:00:00Z"' in dockerfile and f"ENV {CHOICE_ENV}=" in dockerfile
    latest = build_environment(str(_old_checkout(tmp_path / "2")), BuildOptions(out_dir=tmp_path / "env2",
                               latest_deps=True), factory=FakeFactory(Machine()))
    assert latest.status == "verified" and CUTOFF_ENV not in latest.env
    assert any(n.startswith("--latest-deps") for n in latest.plan.notes)
