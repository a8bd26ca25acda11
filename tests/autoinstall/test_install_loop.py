"""The install/repair loop against a scripted sandbox whose state lives in its (snapshotted) files."""
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.services import START
from autoinstall.install.loop import Installer
from autoinstall.options import Budgets
from envs.base import ExecResult
from envs.errors import SandboxLimitError
from envs.fake import FakeSandbox
from envs.spec import Check, Plan, Repair, Step


def junit(*cases: tuple[str, str]) -> bytes:
    body = "".join(
        f'<testcase classname="tests.{f}" name="{n}" file="tests/{f}.py" time="0.01">'
        + (f'<failure message="{msg}"/>' if msg else "") + "</testcase>"
        for f, n, msg in ((c[0].split("::")[0], c[0].split("::")[1], c[1]) for c in cases))
    return f'<?xml version="1.0"?><testsuites><testsuite>{body}</testsuite></testsuites>'.encode()


class World(FakeSandbox):
    """A fake machine: commands change files; `behaviour(sandbox, command, env)` decides each result."""

    def __init__(self, python: str, behaviour) -> None:  # noqa: ANN001
        super().__init__()
        self.python, self.behaviour = python, behaviour

    def has(self, key: str) -> bool:
        return f"/state/{key}" in self.files

    def mark(self, key: str) -> None:
        self.files[f"/state/{key}"] = b"1"

    def exec(self, cmd: str | Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None, output_cap: int = 0) -> ExecResult:
        text = super().exec(cmd, cwd=cwd, env=env, timeout=timeout) and (
            cmd if isinstance(cmd, str) else " ".join(cmd))
        junit_path = re.search(r"--junitxml=(\S+)", text)
        result = self.behaviour(self, text, dict(env or {}))
        if isinstance(result, bytes) and "--collect-only" in text:  # counting the suite: no count printed here
            return ExecResult(exit_code=0, stdout="")
        if isinstance(result, bytes):  # a test run: store the report
            assert junit_path is not None
            self.files[junit_path.group(1)] = result
            failed = b"<failure" in result
            return ExecResult(exit_code=1 if failed else 0, stdout="===== summary =====")
        return result


PLAN = Plan(steps=[Step(command="uv pip install -e '.[test]'", why="the checkout", kind="project")],
            checks=[Check(name="import demo", kind="import", command="python -c 'import demo'")],
            test_command="python -m pytest tests")


def install(behaviour, plan: Plan = PLAN, tmp: Path | None = None, ecosystem: Ecosystem | None = None,  # noqa: ANN001, ANN201
            **budget: float):
    """Run the loop on Worlds of `behaviour` with the embedded rules of `ecosystem` (Python's by default)."""
    made: list[World] = []

    def make(python: str) -> World:
        made.append(World(python, behaviour))
        return made[-1]

    class Model:
        name = "embedded"
        repair = staticmethod(ecosystem.repair if ecosystem is not None else repair)

    repo = tmp or Path(__file__).parent
    installer = Installer(plan, repo, Model(), make, budgets=Budgets(**budget), ecosystem=ecosystem)
    return installer.run(), made


OK = ExecResult(exit_code=0)
PASSING = junit(("test_a::test_one", ""), ("test_a::test_two", ""))


def test_missing_header_is_repaired_with_a_debian_package_after_rolling_back() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "apt-get" in cmd:
            sb.mark("zlib")
            return OK
        if cmd.startswith("uv pip install -e"):
            return OK if sb.has("zlib") else ExecResult(
                exit_code=1, stderr="demo/_speed.c:1:10: fatal error: zlib.h: No such file or directory")
        return PASSING if "pytest" in cmd else OK

    result, made = install(behaviour)
    assert result.ok, result.failure
    assert [s.command.split()[-1] for s in result.steps] == ["zlib1g-dev", "'.[test]'"]
    assert [r.kind for r in result.repairs] == ["insert_before"]
    world = made[0]
    assert [c.method for c in world.calls].count("restore") == 1
    failed = [e for e in result.log if e.exit_code != 0]
    assert failed[0].diagnosis is not None and failed[0].diagnosis.subject == "zlib.h"
    assert failed[0].repair is not None and "zlib1g-dev" in failed[0].repair.reason


def test_uninstallable_dependency_becomes_a_stub_and_its_tests_are_deselected(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dep.py").write_text("import nonexistent_dep_xyz\n")
    (tmp_path / "tests" / "test_a.py").write_text("def test_one(): pass\n")

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install -e"):
            stubbed = env.get("UV_FIND_LINKS") == "/opt/autoinstall/stubs" and any(
                k.startswith("/opt/autoinstall/stubs/nonexistent_dep_xyz-1.2") for k in sb.files)
            return OK if stubbed else ExecResult(exit_code=1, stderr=(
                "Because nonexistent-dep-xyz was not found in the package registry and demo==0.1 depends on "
                "nonexistent-dep-xyz>=1.2, we can conclude that demo==0.1 cannot be used."))
        if "pytest" in cmd and "--collect-only" not in cmd:  # (the suite is also counted without deselections)
            assert "--ignore=tests/test_dep.py" in cmd
            return PASSING
        return OK

    result, _ = install(behaviour, tmp=tmp_path)
    assert result.ok, result.failure
    assert [(s.distribution, s.import_name) for s in result.stubs] == [("nonexistent-dep-xyz", "nonexistent_dep_xyz")]
    assert [d.test for d in result.deselected] == ["tests/test_dep.py"]
    assert list(result.stub_wheels) == ["nonexistent_dep_xyz-1.2-py3-none-any.whl"]


def test_unsupported_python_restarts_on_another_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_PYTHON_BUILDS", str(tmp_path))  # Debian's interpreters only: 3.13 is nearest

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install -e") and sb.python == "3.11":
            return ExecResult(exit_code=1, stderr="× The current Python version (3.11.2) does not satisfy Python>=3.12")
        return PASSING if "pytest" in cmd else OK

    result, made = install(behaviour)
    assert result.ok and result.python == "3.13"
    assert [w.python for w in made] == ["3.11", "3.13"]
    assert all(not w.started for w in made)


def test_an_unknown_failure_is_reported_with_its_step_and_evidence() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install -e"):
            return ExecResult(exit_code=1, stderr="error: the compiler exploded\nSegmentation fault")
        return OK

    result, _ = install(behaviour)
    assert not result.ok and result.failure is not None
    assert (result.failure.failure_class, result.failure.step_index) == ("install_failed", 1)
    assert "Segmentation fault" in result.failure.evidence


def test_service_backed_tests_are_deselected_and_the_rest_verify() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "--junitxml" in cmd:  # a test run (the step that installs the server never makes it answer here)
            db_msg = "" if "--ignore=tests/test_db.py" in cmd else (
                "OperationalError: connection to server at localhost port 5432 failed: Connection refused")
            return junit(("test_a::test_one", ""), ("test_a::test_two", ""), ("test_db::test_query", db_msg))
        return OK

    result, _ = install(behaviour)
    assert result.ok, result.failure
    # every test of tests/test_db.py needs the server, so the whole file is left out
    assert [(d.test, "postgresql" in d.reason) for d in result.deselected] == [("tests/test_db.py", True)]
    # the run that ended the loop, with that file left out, is what verification may count as its first
    assert result.last_run is not None and result.last_run.sandbox == "install"
    assert result.last_run.counts["failed"] == 0  # (this world fails the database test unless it is left out)


def test_a_failed_install_leaves_no_run_for_verification() -> None:
    failing = junit(("test_a::test_one", ""), ("test_a::test_two", "AssertionError: no"))
    result, _ = install(lambda sb, cmd, env: failing if "--junitxml" in cmd else OK, threshold=0.9)
    assert not result.ok and result.last_run is None


def test_missing_module_at_import_check_installs_its_distribution() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "PyYAML" in cmd:
            sb.mark("yaml")
            return OK
        if cmd.startswith("python -c 'import demo'"):
            return OK if sb.has("yaml") else ExecResult(exit_code=1, stderr="ModuleNotFoundError: No module named 'yaml'")
        return PASSING if "pytest" in cmd else OK

    result, _ = install(behaviour)
    assert result.ok, result.failure
    assert result.steps[-1].command == "uv pip install 'PyYAML'"


def test_repairs_stop_at_the_budget() -> None:
    counter = iter(range(1000))

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install -e"):
            return ExecResult(exit_code=1, stderr=f"ModuleNotFoundError: No module named 'mod{next(counter)}'")
        return OK

    result, _ = install(behaviour, max_repairs=3)
    assert not result.ok and result.failure is not None
    assert result.failure.failure_class == "budget_exhausted"
    assert len(result.repairs) == 4


@pytest.mark.parametrize("rate", [0.5])
def test_tests_below_threshold_fail_as_tests_failing(rate: float) -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        return junit(("test_a::test_one", ""), ("test_a::test_two", "assert 1 == 2")) if "pytest" in cmd else OK

    result, _ = install(behaviour)
    assert not result.ok and result.failure is not None
    assert result.failure.failure_class == "tests_failing"
    assert "pass rate 0.50" in result.failure.message


def test_an_auxiliary_step_that_nothing_fixes_is_skipped_and_recorded() -> None:
    plan = PLAN.model_copy(update={"steps": [
        Step(command="uv pip install -r dependencies/lock-cp310.txt", why="pinned deps", kind="python"),
        *PLAN.steps]})

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "lock-cp310" in cmd:
            return ExecResult(exit_code=1, stderr="Because you require tomli==2.0.1 and tomli==2.0.0, we can "
                                                 "conclude that your requirements are unsatisfiable.")
        return PASSING if "pytest" in cmd else OK

    result, _ = install(behaviour, plan=plan)
    assert result.ok, result.failure
    assert [s.step.command for s in result.skipped if s.step] == ["uv pip install -r dependencies/lock-cp310.txt"]
    assert [s.command for s in result.steps] == ["uv pip install -e '.[test]'"]


def test_project_code_runs_offline_and_install_steps_online() -> None:
    seen: list[tuple[str, bool]] = []

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        command = cmd.split("; ", 1)[-1] if cmd.startswith("export PYTHONPATH=") else cmd  # the timeout plugin's
        seen.append((command.split()[0] + (" pytest" if "pytest" in cmd else ""), sb.network))
        if "apt-get" in cmd:
            sb.mark("zlib")
            return OK
        if cmd.startswith("uv pip install -e") and not sb.has("zlib"):
            return ExecResult(exit_code=1, stderr="demo/_speed.c:1:10: fatal error: zlib.h: No such file or directory")
        return PASSING if "pytest" in cmd else OK

    result, _ = install(behaviour)
    assert result.ok, result.failure
    assert ("uv", True) in seen and ("apt-get", True) in seen
    project_code = [(cmd, net) for cmd, net in seen if cmd.startswith("python")]
    assert {cmd for cmd, _ in project_code} == {"python", "python pytest"}  # the import check, the tests
    assert not any(net for _, net in project_code), seen
    assert all(e.network is False for e in result.log if e.phase in ("check", "tests"))
    assert all(e.network for e in result.log if e.phase == "install")


def test_hitting_the_disk_limit_is_a_recorded_failure_with_the_option_to_raise_it() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("uv pip install -e"):
            raise SandboxLimitError("The sandbox wrote 10300 MiB to its filesystem, over Limits.disk_mb=10240; "
                                    "it was stopped. Raise it (--disk-mb, Limits.disk_mb)")
        return PASSING if "pytest" in cmd else OK

    result, made = install(behaviour)
    assert not result.ok and result.failure is not None
    assert (result.failure.failure_class, result.failure.step_index) == ("disk_limit", 1)
    assert "--disk-mb" in result.failure.message
    assert result.snapshot == result.snapshots[0]  # the last good state (the checkout) is kept for debug
    assert made[0].calls[-1].method == "stop"


def test_a_deselection_is_accepted_only_on_evidence_whoever_proposes_it(tmp_path: Path) -> None:
    refused_db = ExecResult(exit_code=0)
    report = junit(("test_a::test_db", "connection to server at localhost port 5432 failed: Connection refused"),
                   ("test_a::test_math", "assert 1 == 2"), ("test_a::test_ok", ""))

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        return report if "pytest" in cmd else refused_db

    class Greedy:
        """A model that tries to deselect every failing test, the plain failure included."""

        name = "openai:greedy"

        def repair(self, ctx):  # noqa: ANN001, ANN201
            ids = [t.test_id for t in ctx.failed_tests]
            return None if ctx.tried else Repair(kind="deselect", tests=ids, reason="they fail")

    made: list[World] = []
    installer = Installer(PLAN, tmp_path, Greedy(), lambda python: made.append(World(python, behaviour)) or made[-1])
    result = installer.run()
    assert [d.test for d in result.deselected] == ["tests/test_a.py::test_db"]
    assert result.failure is not None and result.failure.failure_class == "tests_failing"


def test_a_service_found_from_failing_tests_is_installed_and_the_test_command_starts_it() -> None:
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if f"{START}.d/postgresql" in cmd or "services/start.d/postgresql" in cmd:
            sb.mark("pg")
            return OK
        if "--junitxml" in cmd:
            up = sb.has("pg") and f"{START} && python -m pytest" in cmd
            db_msg = "" if up else "OperationalError: connection to server at localhost port 5432 failed: Connection refused"
            return junit(("test_a::test_one", ""), ("test_db::test_query", db_msg))
        return OK

    result, _ = install(behaviour)
    assert result.ok, result.failure
    assert result.deselected == []
    assert result.plan is not None and result.plan.test_command == f"{START} && python -m pytest tests"
    assert [r.kind for r in result.repairs] == ["insert_before", "test_command"]
