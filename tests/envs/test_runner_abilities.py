"""The one record of what each test runner can do, and what asks it (no Docker)."""
from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from autoinstall.verify.checks import check_command
from envs.runtime.spec import RuntimeSpec
from envs.spec import Check, Deselection, TestRunner
from envs.testrun import abilities, collects, registered
from envs.testrun.grading import NotGradable, grading_run


def test_every_runner_the_record_type_names_has_a_record_and_no_other() -> None:
    assert sorted(registered()) == sorted(get_args(TestRunner))


def test_an_unknown_runner_is_read_from_its_summary_and_promised_nothing() -> None:
    unknown = abilities("bazel")
    assert unknown.name == "bazel" and unknown.has_tests and unknown.report == "summary"
    assert (unknown.collect, unknown.select, unknown.grading, unknown.stop_after) == (None, None, None, None)
    assert unknown.per_test_ids == "never" and not collects("bazel")
    with pytest.raises(NotGradable, match="gradable runners: pytest"):
        grading_run("bazel", None, "bazel test //...", [], [])  # type: ignore[arg-type]


def test_what_the_stages_ask_differs_by_runner_as_it_did_when_they_named_them() -> None:
    assert [r for r in registered() if abilities(r).warm_up] == ["go", "cargo"]
    assert [r for r in registered() if abilities(r).listing_is_lower_bound] == ["maven"]
    assert [r for r in registered() if abilities(r).select is not None] == ["pytest", "go", "cargo", "node", "maven"]
    assert [r for r in registered() if (s := abilities(r).select) is not None and not s.exact] == ["node"]
    assert [r for r in registered() if not abilities(r).has_tests] == ["none"]
    assert {r for r in registered() if abilities(r).grading is not None} == {
        "pytest", "go", "cargo", "node", "maven", "unittest", "custom"}


def test_a_collect_check_is_narrowed_only_by_a_runner_that_can() -> None:
    pytest_check = Check(name="collect", kind="collect", command="python -m pytest --collect-only -q")
    go_check = Check(name="collect", kind="collect", command="go test -list . ./...")
    left = [Deselection(test="pkg", reason="network")]
    assert check_command(pytest_check, left, "pytest").endswith("--ignore=pkg")
    assert check_command(go_check, left, "go") == go_check.command
    assert check_command(pytest_check, left, None) == pytest_check.command


@pytest.mark.parametrize("runner", registered())
def test_the_runtime_accepts_every_registered_runner(runner: str) -> None:
    assert RuntimeSpec(image="x", test_runner=runner).test_runner == runner


def test_the_runtime_refuses_a_runner_nothing_knows_and_names_those_it_knows() -> None:
    with pytest.raises(ValidationError, match="unknown test runner 'gotest'.*pytest, unittest"):
        RuntimeSpec(image="x", test_runner="gotest")


def test_a_pytest_doctest_names_a_product_module_that_is_not_the_tasks() -> None:
    from envs.testrun.grading import test_files

    ids = ["units/__init__.py::units.to_celsius", "src/a/mod.py::a.mod.K.f", "units/__init__.py::units",
           "tests/test_x.py::test_y", "tests/test_mod.py::test_mod", "checks/x.py::T::test_y[a.b]"]
    assert test_files("pytest", ids) == ["checks/x.py", "tests/test_mod.py", "tests/test_x.py"]
