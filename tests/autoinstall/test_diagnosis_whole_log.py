"""Diagnosis reads the whole log: a missing module named early in a long output, a name cut short."""
from __future__ import annotations

import time

from autoinstall.ecosystems.python.diagnosis import diagnose
from envs.base import ExecResult
from envs.spec import Check, Plan, Step
from tests.autoinstall.test_install_loop import OK, PASSING, World, install

NOISE = "tests/test_mod.py::test_case_number_%d PASSED\n"
TRACEBACK = ("____ ERROR collecting docs/test_docs.py ____\nImportError while importing test module\n"
             "docs/test_docs.py:3: in <module>\n    from myst_parser.main import to_docutils\n"
             "E   ModuleNotFoundError: No module named 'myst_parser'\n")
SUMMARY = "ERROR docs/test_docs.py - ModuleNotFoundError: No module named 'myst_pars...\n1 error in 9.1s\n"


def _long_log(lines: int) -> str:
    return TRACEBACK + "".join(NOISE % i for i in range(lines)) + "=== short test summary info ===\n" + SUMMARY


def test_a_module_named_early_in_a_multi_megabyte_log_is_diagnosed_quickly() -> None:
    log = _long_log(80_000)
    assert len(log) > 3_000_000
    started = time.monotonic()
    found = diagnose(log)
    assert time.monotonic() - started < 2.0
    assert (found.kind, found.subject) == ("missing_module", "myst_parser.main")  # as the traceback imports it


def test_a_name_cut_short_is_completed_from_the_rest_of_the_log() -> None:
    cut = "    from myst_parser.main import x\n" + SUMMARY
    assert (diagnose(cut).kind, diagnose(cut).subject) == ("missing_module", "myst_parser.main")
    capped = "E   ModuleNotFoundError: No module named 'myst_pa\n[... 4096 bytes omitted by the output cap ...]\n" \
             "  File \"/opt/venv/lib/myst_parser_shim.py\"\nimport myst_parser\n"
    assert diagnose(capped).subject == "myst_parser"
    # nothing names it in full: no guess (a guessed name could install the wrong distribution)
    assert diagnose(SUMMARY).kind == "unknown"


def test_the_install_loop_repairs_a_missing_module_named_before_a_long_tail() -> None:
    """The collection check's output is long: the module is named far before its last 2000 characters."""
    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if "uv pip install" in cmd and "'myst_parser'" in cmd:
            sb.mark("myst")
            return OK
        if "--collect-only" in cmd and not sb.has("myst"):
            return ExecResult(exit_code=2, stdout=_long_log(2_000))
        return PASSING if "--junitxml" in cmd else OK

    plan = Plan(steps=[Step(command="uv pip install -e .", why="the checkout", kind="project")],
                checks=[Check(name="collect tests", kind="collect", command="python -m pytest --collect-only -q")],
                test_command="python -m pytest tests")
    result, _ = install(behaviour, plan)
    assert result.ok, result.failure
    assert any("'myst_parser'" in r.step.command for r in result.repairs if r.step)
