"""Every runner envs/testrun knows, one RunnerAbilities record each: the one table of what each can do.

A language adds its runner module and one record here (and its name to envs/spec.py `TestRunner`, which a test
keeps equal to this table).
"""
from __future__ import annotations

from envs.testrun import (
    cargo_runner,
    go_runner,
    maven_runner,
    node_only,
    node_runner,
    pytest_runner,
    summary,
    unittest_runner,
)
from envs.testrun.abilities import IdSelection, RunnerAbilities, register
from envs.testrun.grading import (
    grade_cargo,
    grade_go,
    grade_maven,
    grade_node,
    grade_pytest,
    grade_unittest,
    node_files,
    pytest_files,
    unittest_files,
)

PYTHON_CRASH = r"Fatal Python error|Segmentation fault|core dumped"
"""What a Python test process that died mid-run leaves in its output."""
PYTEST = RunnerAbilities(
    name="pytest", run=pytest_runner.run, collect=pytest_runner.collect, per_test_ids="always",
    select=IdSelection(files={f"{pytest_runner.SELECT_PLUGIN}.py": pytest_runner.SELECT_PLUGIN_SOURCE},
                       wrap=pytest_runner.select_command),
    report="junit", per_test_timeout=True, coverage_map=True, stop_after=pytest_runner.stop_after,
    default_command="python -m pytest", settings_of=pytest_runner.setting_options,
    deselect_in_check=pytest_runner.deselect_in_check, uncollectable=pytest_runner.uncollectable,
    junit_report=pytest_runner.pytest_args, grading=grade_pytest, test_files=pytest_files, crash=PYTHON_CRASH)
GO = RunnerAbilities(
    name="go", run=go_runner.run, collect=go_runner.collect, per_test_ids="always", report="gotest",
    select=IdSelection(files={}, wrap=go_runner.select_command), warm_up=True, grading=grade_go,
    neutral_caches=go_runner.neutral_caches, content_keyed=go_runner.content_keyed, crash=r"panic: |fatal error: ")
"""Go's listing is of top-level tests while its results add subtests: other units, so not a lower bound."""
UNITTEST = RunnerAbilities(name="unittest", run=unittest_runner.run, collect=unittest_runner.collect,
                           per_test_ids="always", report="unittest", grading=grade_unittest, test_files=unittest_files,
                           crash=PYTHON_CRASH)
CARGO = RunnerAbilities(name="cargo", run=cargo_runner.run, collect=cargo_runner.collect, per_test_ids="always",
                        select=IdSelection(files={}, wrap=cargo_runner.select_command), report="libtest",
                        warm_up=True, grading=grade_cargo,
                        crash=r"didn't exit successfully: .*\(signal: |fatal runtime error|overflowed its stack")
NODE = RunnerAbilities(
    name="node", run=node_runner.run, collect=node_runner.collect, per_test_ids="when printed", report="node",
    select=IdSelection(files={}, wrap=node_only.select_command, exact=False),
    grading=grade_node, test_files=node_files, crash=r"FATAL ERROR|Segmentation fault|SIGSEGV|SIGABRT|out of memory",
    neutral_caches=node_runner.neutral_caches, content_keyed=node_runner.content_keyed,
    reset_caches=node_runner.reset_caches)
"""collect: mocha --dry-run; jest, vitest, node:test: every test skipped. select (node_only.py): jest and vitest
by full name and the ids' files, mocha by full title, node:test by the top-level tests holding the ids (Node 20
matches a test's own name, and a subtest of an unmatched parent never runs), ava by title (--match); tap, uvu,
tape, jasmine and a script that filters by name itself run whole (tap's --grep reaches one level per pattern,
the others have no filter every version honours). Not exact: a name the parse changed selects nothing (IdSelection.exact). Its
validation containers are reused: npm's logs are neutral, vitest's results cache is put back (reset_caches)."""
CUSTOM = RunnerAbilities(name="custom", run=unittest_runner.run, per_test_ids="when printed", report="unittest",
                         grading=grade_unittest, test_files=unittest_files, crash=PYTHON_CRASH)
"""A project's own Python runner script: its verbose lines where it prints them, else its summary."""
MAVEN = RunnerAbilities(
    name="maven", run=maven_runner.run, collect=maven_runner.collect, per_test_ids="always", report="surefire",
    select=IdSelection(files={}, wrap=maven_runner.select_command), listing_is_lower_bound=True,
    grading=grade_maven, crash=r"The forked VM terminated|There was an error in the forked process|VM crash")
"""collect: JUnit 5's dry run, which never expands parameterized cases (so a lower bound)."""
NONE = RunnerAbilities(name="none", has_tests=False, run=summary.run, report="none")
"""A plan with no tests to run."""

DEFAULT_RUNNER = PYTEST.name
"""What a record that names no runner means (as envs/spec.py `Plan.test_runner` defaults)."""
FALLBACK_RUNNER = CUSTOM.name
"""Where a name this table does not know is read (a task made elsewhere): verbose lines, else the summary."""

RECORDS = (PYTEST, UNITTEST, CUSTOM, GO, CARGO, NODE, MAVEN, NONE)
for _record in RECORDS:
    register(_record)
