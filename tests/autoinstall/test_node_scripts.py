"""Dependencies' install scripts run in a step of their own after an install that runs none; a script that
fails (a download from a host that cannot be reached) or hangs is named from npm's own lines and left out by a
recorded step, and the build goes on: parsing npm 9's output, the repair, and the fixture built on Docker."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Overrun, RepairContext
from autoinstall.ecosystems.node.diagnosis import diagnose
from autoinstall.ecosystems.node.repairs import repair
from autoinstall.ecosystems.node.scripts import (
    REBUILD,
    failed_scripts,
    scripts_step,
    skipped,
    unreachable_host,
    without_scripts,
)
from autoinstall.options import BuildOptions, Budgets
from autoinstall.pipeline import build_environment
from autoinstall.plan.models.embedded import EmbeddedModel
from envs.spec import Evidence, Plan

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "node_install_scripts"
STEP = scripts_step(Evidence(file="package-lock.json", line=1, text="package-lock.json"))
FAILED = """npm info using npm@9.2.0
npm info using node@v20.19.2
npm info run fetch-binary@1.0.0 postinstall node_modules/fetch-binary node install.js
npm info run fetch-binary@1.0.0 postinstall { code: 1, signal: null }
npm ERR! code 1
npm ERR! path /workspace/node_modules/fetch-binary
npm ERR! command failed
npm ERR! command sh -c node install.js
npm ERR! fetch-binary: downloading https://downloads.example.invalid/fetch-binary/1.0.0/fetch-binary-linux-x64.tar.gz
npm ERR! fetch-binary: the binary could not be downloaded: getaddrinfo ENOTFOUND downloads.example.invalid
"""
"""What Debian's npm 9.2 printed running the fixture's scripts step with wait-binary's script left out."""
HUNG = """npm info using npm@9.2.0
npm info using node@v20.19.2
npm info run b@1.0.0 install node_modules/a/node_modules/b node-gyp rebuild
npm info run fetch-binary@1.0.0 postinstall node_modules/fetch-binary node install.js
npm info run wait-binary@1.0.0 postinstall node_modules/wait-binary node install.js
npm info run b@1.0.0 install { code: 0, signal: null }
"""
"""The same step killed at its timeout: b (nested) ended, the other two never did."""


def ctx(output: str, *, timed_out: bool = False, command: str = REBUILD) -> RepairContext:
    step = STEP.model_copy(update={"command": command})
    plan = Plan(ecosystem="node", python="3.13", steps=[step], test_command="npm test", test_runner="node")
    return RepairContext(plan=plan, failing=step, phase="install", output=output,
                         diagnosis=diagnose(output, timed_out=timed_out), python="3.13", available_pythons=["3.13"])


def test_npm_names_the_script_that_failed_and_those_still_running_at_a_timeout() -> None:
    assert failed_scripts(FAILED) == {"node_modules/fetch-binary": "fetch-binary@1.0.0 postinstall (exit 1): node "
                                                                   "install.js"}
    assert unreachable_host(FAILED) == "downloads.example.invalid"
    assert failed_scripts(HUNG) == {}  # not timed out: nothing failed yet
    assert list(failed_scripts(HUNG, timed_out=True)) == ["node_modules/fetch-binary", "node_modules/wait-binary"]
    assert "still running at the step's timeout" in failed_scripts(HUNG, timed_out=True)["node_modules/wait-binary"]
    nested = "npm ERR! path /workspace/node_modules/a/node_modules/@s/b\nnpm ERR! command failed\n"
    assert list(failed_scripts(nested)) == ["node_modules/a/node_modules/@s/b"]


def test_a_failed_script_then_a_hung_one_are_left_out_one_repair_each() -> None:
    first = repair(ctx(FAILED))
    assert first is not None and first.kind == "replace" and first.step is not None
    assert skipped(first.step.command) == ["node_modules/fetch-binary"] and first.step.command.endswith(REBUILD)
    assert "downloads.example.invalid, which cannot be reached here" in first.reason
    second = repair(ctx(HUNG, timed_out=True, command=first.step.command))
    assert second is not None and second.step is not None
    assert skipped(second.step.command) == ["node_modules/fetch-binary", "node_modules/wait-binary"]
    assert "wait-binary@1.0.0 postinstall (still running at the step's timeout)" in second.reason
    assert repair(ctx(HUNG, timed_out=True, command=second.step.command)) is None  # nothing new to leave out
    install = ctx(FAILED, command="npm ci --no-audit --no-fund --prefer-offline")
    assert repair(install) is None  # the install step itself runs no script: nothing to leave out there


def test_a_timed_out_npm_install_runs_once_more_only_while_it_was_still_working() -> None:
    """No rule of Node's own: the rule every language shares (ecosystems/overrun.py), by what the sandbox saw."""
    install = "npm ci --no-audit --no-fund --prefer-offline --ignore-scripts"
    working = ctx("npm WARN EBADENGINE }", timed_out=True, command=install).model_copy(
        update={"overrun": Overrun(timeout_s=900, idle_s=4, remaining_s=2500)})
    assert repair(working) is None  # the dependency install is essential: Node's rules have nothing for it
    first = EmbeddedModel(pythons=("3.13",)).repair(working)
    assert first is not None and first.kind == "more_time" and first.timeout_s == 1800
    assert first.step is not None and first.step.command == install
    hung = working.model_copy(update={"overrun": Overrun(timeout_s=900, idle_s=600, remaining_s=2500)})
    assert EmbeddedModel(pythons=("3.13",)).repair(hung) is None


def test_leaving_out_scripts_removes_them_and_the_implicit_gyp_build_and_fails_on_a_missing_package(
        tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "native"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "native", "scripts": {
        "install": "prebuild-install || node-gyp rebuild", "postinstall": "node fetch.js", "test": "tap"}}))
    (package / "binding.gyp").write_text("{}")
    command = without_scripts(["node_modules/native"]).removesuffix(f" && {REBUILD}")
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "install scripts left out: node_modules/native" in done.stdout
    assert json.loads((package / "package.json").read_text()) == {"name": "native", "scripts": {"test": "tap"},
                                                                  "gypfile": False}
    assert not (package / "binding.gyp").exists()  # npm 9's rebuild would build it, gypfile false or not
    missing = subprocess.run(["bash", "-c", without_scripts(["node_modules/gone"]).removesuffix(f" && {REBUILD}")],
                             cwd=tmp_path, capture_output=True, text=True, check=False)
    assert missing.returncode != 0


def test_the_fixture_leaves_out_the_scripts_that_cannot_download_and_verifies_on_docker(
        docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real thing: npm ci runs no script, the scripts step hangs until its (short) timeout, both packages'
    scripts are left out by a recorded step, the tests pass offline; the replay Dockerfile holds that step."""
    monkeypatch.setenv("AUTOINSTALL_HOME", str(Path.home() / ".autoinstall"))
    options = BuildOptions(out_dir=tmp_path / "env", budgets=Budgets(step_timeout_s=60))
    spec = build_environment(str(REPO), options)
    assert spec.status == "verified", (spec.failure, [e.command for e in spec.log])
    install, scripts = spec.steps
    assert install.command.startswith("npm ci ") and "--ignore-scripts" in install.command
    assert skipped(scripts.command) == ["node_modules/fetch-binary", "node_modules/wait-binary"]
    timed_out = [e for e in spec.log if e.timed_out]
    # fetch-binary fails at once, wait-binary never ends: npm may report the failure first or only hang, so
    # one or two repairs, and one timeout
    assert len(timed_out) == 1 and timed_out[0].command.endswith(REBUILD) and timed_out[0].repair is not None
    assert spec.verification.runs[-1].passed == 3
    assert json.dumps(scripts.command) in (tmp_path / "env" / "Dockerfile").read_text()
