"""A test command that runs a side suite (CI's `pytest tests/unit`) gives way to the default collection, and every
command that collects tests starts the services the test command starts (issue 23)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.services import START, with_services
from autoinstall.install.loop import Installer
from autoinstall.options import Budgets
from autoinstall.verify.checks import count_suite, default_command, run_check
from autoinstall.verify.widen import wider_plan
from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.spec import Check, Plan, Step

PY = sys.executable
UNIT = "import pytest\n\n\n@pytest.mark.parametrize('i', range(3))\ndef test_unit(i):\n    pass\n"
ACCEPTANCE = "import pytest\n\n\n@pytest.mark.parametrize('i', range(40))\ndef test_flow(i):\n    pass\n"


def test_the_collect_check_and_the_default_collection_start_the_services_the_tests_start() -> None:
    tests = with_services("python -m pytest tests/unit", {"DB_HOST": "127.0.0.1"})
    plan = Plan(test_command=tests, test_runner="pytest",
                checks=[Check(name="collect tests", kind="collect", command="python -m pytest --collect-only -q")])
    sandbox = FakeSandbox().start()
    result = run_check(sandbox, plan.checks[0], 60, None, [], tests, plan.test_runner)
    assert result.command == f"{START} && export DB_HOST=127.0.0.1 && python -m pytest --collect-only -q"
    assert default_command(plan) == f"{START} && export DB_HOST=127.0.0.1 && python -m pytest"
    count_suite(sandbox, plan, [], 60)
    assert all(c.startswith(START) for c in sandbox.commands() if "--collect-only" in c), sandbox.commands()
    plain = Plan(test_command="python -m pytest tests", test_runner="pytest")
    assert run_check(sandbox, plan.checks[0], 60, None, [], plain.test_command).command == plan.checks[0].command


@pytest.mark.slow
def test_a_side_suite_is_widened_to_the_default_collection_with_the_commands_settings() -> None:
    with LocalSandbox() as sb:
        root = Path(sb.workdir)
        for folder, text in (("tests/unit", UNIT), ("tests/acceptance", ACCEPTANCE)):
            (root / folder).mkdir(parents=True)
            (root / folder / f"test_{folder.rsplit('/', 1)[-1]}.py").write_text(text)
        collect = Check(name="collect tests", kind="collect", command="python -m pytest --collect-only -q tests/unit")
        plan = Plan(test_command="python -m pytest tests/unit -p no:randomly -m 'not slow'", test_runner="pytest",
                    checks=[collect])
        found = wider_plan(sb, plan, [], 300, None)
        assert found is not None
        wide, why = found
        assert "collects 3 of the 43 tests" in why
        assert wide.test_command == "python -m pytest -p no:randomly"
        assert wide.checks[0].command == "python -m pytest -p no:randomly --collect-only -q"
        assert wider_plan(sb, wide, [], 300, None) is None  # the default collection is not narrow
        whole = plan.model_copy(update={"test_command": "python -m pytest tests"})
        assert wider_plan(sb, whole, [], 300, None) is None


def _collected(count: int) -> ExecResult:
    return ExecResult(exit_code=0, stdout=f"{count} tests collected in 0.1s")


def test_the_default_collection_is_repaired_and_kept_else_the_side_suite_stands() -> None:
    """The loop widens a passing side suite; when the default collection then cannot pass, it goes back."""
    from tests.autoinstall.test_install_loop import World, junit  # the scripted machine of the loop's tests

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "--collect-only" in cmd:
            return _collected(2 if "tests/unit" in cmd else 40)
        if "pytest" not in cmd:
            return OK
        if "tests/unit" in cmd:
            return junit(("unit/test_u::test_one", ""), ("unit/test_u::test_two", ""))
        return junit(("unit/test_u::test_one", ""), *((f"it/test_i::test_{i}", "assert 1 == 2") for i in range(38)))

    OK = ExecResult(exit_code=0)
    plan = Plan(steps=[Step(command="uv pip install -e .", why="the checkout", kind="project")],
                test_command="python -m pytest tests/unit", test_runner="pytest")

    class Model:
        name = "embedded"
        repair = staticmethod(repair)

    result = Installer(plan, Path(__file__).parent, Model(), lambda py: World(py, behaviour), budgets=Budgets()).run()
    assert result.ok, result.failure
    assert result.plan is not None and result.plan.test_command == "python -m pytest tests/unit"
    assert any("collects 2 of the 40 tests" in n for n in result.plan.notes)
    assert any("could not be made to run (pass rate" in n for n in result.plan.notes), result.plan.notes
    assert any(e.phase == "tests" and "pass rate 0.03" in e.command for e in result.log)  # the default collection ran
