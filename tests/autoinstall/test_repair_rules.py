from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.services import PYTEST_PLUGIN, SERVICES, START, START_D, install_command
from envs.spec import Plan, Repair, Step

INSTALL = Step(command="uv pip install -e '.[test]'", why="install the checkout", kind="project")
TESTS = Step(command="<tests>", why="run the test suite")


def ctx(output: str, *, phase: str = "install", failing: Step = INSTALL, python: str = "3.11",
        plan: Plan | None = None, **kw: object) -> RepairContext:
    return RepairContext(plan=plan or Plan(steps=[failing]), failing=failing, phase=phase, output=output,
                         diagnosis=diagnose(output), python=python, available_pythons=["3.11", "3.13"], **kw)


STARTED = Plan(test_command=f"{START} && python -m pytest tests")
"""A plan whose test command already starts the services (the proposal saw them in CI)."""


def test_missing_header_installs_the_debian_dev_package_first() -> None:
    r = repair(ctx("x.c:1:10: fatal error: zlib.h: No such file or directory"))
    assert r is not None and r.kind == "insert_before" and r.step is not None
    assert r.step.command.endswith("apt-get install -y -qq --no-install-recommends zlib1g-dev")
    assert r.step.kind == "system"


def test_missing_module_in_tests_maps_import_name_to_distribution() -> None:
    r = repair(ctx("E   ModuleNotFoundError: No module named 'yaml'", phase="tests",
                   failing=Step(command="<tests>", why="")))
    assert r is not None and r.step is not None and r.step.command == "uv pip install 'PyYAML'"


def test_build_time_import_installs_then_drops_build_isolation() -> None:
    first = repair(ctx("ModuleNotFoundError: No module named 'Cython'"))
    assert first is not None and first.kind == "insert_before"
    second = repair(ctx("ModuleNotFoundError: No module named 'Cython'", tried=[first]))
    assert second is not None and second.kind == "replace" and second.step is not None
    assert second.step.command.endswith("--no-build-isolation")
    assert repair(ctx("ModuleNotFoundError: No module named 'Cython'", tried=[first, second])) is None


def test_python_version_switches_to_an_interpreter_that_fits() -> None:
    r = repair(ctx("ERROR: Package 'x' requires a different Python: 3.11.2 not in '>=3.12'"))
    assert r is not None and (r.kind, r.python) == ("switch_python", "3.13")
    assert repair(ctx("requires a different Python: 3.11.2 not in '<3.9'")) is None


def test_uninstallable_distribution_gets_a_stub() -> None:
    r = repair(ctx("Because nonexistent-dep-xyz was not found in the package registry and demo depends"))
    assert r is not None and (r.kind, r.distribution, r.import_name) == (
        "stub_distribution", "nonexistent-dep-xyz", "nonexistent_dep_xyz")


def test_pytest_plugins_from_options_and_ini_keys() -> None:
    tests = Step(command="<tests>", why="")
    r = repair(ctx("pytest: error: unrecognized arguments: --timeout=30", phase="tests", failing=tests))
    assert r is not None and r.step is not None and "pytest-timeout" in r.step.command
    r = repair(ctx("async def functions are not natively supported.", phase="tests", failing=tests))
    assert r is not None and r.step is not None and "pytest-asyncio" in r.step.command


def test_vcs_version_sets_env_once() -> None:
    r = repair(ctx("LookupError: setuptools-scm was unable to detect version for /workspace."))
    assert r is not None and r.kind == "set_env" and r.env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    assert repair(ctx("LookupError: setuptools-scm was unable to detect version",
                      env={"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"})) is None


def test_a_refused_known_service_is_installed_then_started_then_deselected_as_a_last_resort() -> None:
    failed = [FailedTest(test_id="tests/test_db.py::test_query",
                         message="psycopg2.OperationalError: port 5432 failed: Connection refused"),
              FailedTest(test_id="tests/test_x.py::test_math", message="assert 1 == 2")]
    out = "port 5432 failed: Connection refused"
    plan = Plan(test_command="python -m pytest tests")
    install = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=plan))
    assert install is not None and install.kind == "insert_before" and install.step is not None
    assert install.step.kind == "system" and "install -y -qq --no-install-recommends postgresql\n" in install.step.command
    assert f"{START_D}/postgresql " in install.step.command and f"{PYTEST_PLUGIN}.py" not in install.step.command
    start = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=plan, tried=[install]))
    assert start is not None and (start.kind, start.test_command) == ("test_command",
                                                                      f"{START} && python -m pytest tests")
    plan = Plan(test_command=f"{START} && python -m pytest tests")
    last = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=plan, tried=[install, start]))
    assert last is not None and last.kind == "deselect" and last.tests == ["tests/test_db.py::test_query"]
    assert "postgresql" in last.reason and "still could not connect" in last.reason


def test_a_service_debian_does_not_package_is_deselected_with_that_reason() -> None:
    msg = "pymongo.errors.ServerSelectionTimeoutError: localhost:27017: [Errno 111] Connection refused"
    failed = [FailedTest(test_id="tests/test_m.py::test_find", message=msg)]
    r = repair(ctx(msg, phase="tests", failing=TESTS, failed_tests=failed))
    assert r is not None and r.kind == "deselect" and "mongodb" in r.reason and "Debian does not package" in r.reason


def test_a_refusal_on_no_known_service_port_is_a_failing_test_not_a_deselection() -> None:
    """A suite whose own test server did not come up is failing, not needing a service (issue 9's evidence)."""
    for msg in ("ConnectionRefusedError: [Errno 111] Connection refused",
                "urllib3.exceptions.NewConnectionError: Failed to establish a new connection: [Errno 111] "
                "Connection refused (127.0.0.1:38211)"):
        failed = [FailedTest(test_id="tests/test_server.py::test_get", message=msg)]
        r = repair(ctx(msg, phase="tests", failing=TESTS, failed_tests=failed))
        assert r is None or r.kind != "deselect", (msg, r)


def test_a_service_whose_install_failed_is_deselected_with_that_reason() -> None:
    msg = "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused."
    failed = [FailedTest(test_id="tests/test_cache.py::test_set", message=msg)]
    install = repair(ctx(msg, phase="tests", failing=TESTS, failed_tests=failed))
    assert install is not None and install.step is not None and "redis-server" in install.step.command
    skipped = Repair(kind="skip", step=install.step, reason="apt failed")
    r = repair(ctx(msg, phase="tests", failing=TESTS, failed_tests=failed, tried=[install, skipped]))
    assert r is not None and r.kind == "deselect" and "could not install" in r.reason


def test_a_service_the_plan_already_runs_is_not_installed_again() -> None:
    msg = "connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused"
    failed = [FailedTest(test_id="tests/test_db.py::test_q", message=msg)]
    plan = STARTED.model_copy(update={"steps": [Step(command=install_command([SERVICES["postgresql"]]), why="")]})
    r = repair(ctx(msg, phase="tests", failing=TESTS, failed_tests=failed, plan=plan))
    assert r is not None and r.kind == "deselect"


def test_unknown_failures_give_up() -> None:
    assert repair(ctx("segmentation fault somewhere")) is None


def test_requirement_syntax_uv_rejects_falls_back_to_pip() -> None:
    failing = Step(command="uv pip install -r tests/requirements.txt", why="test deps", kind="test-deps")
    r = repair(ctx("error: Expected '=' or whitespace, found Some('.'): tests/requirements.txt:1:3",
                   failing=failing))
    assert r is not None and r.kind == "replace" and r.step is not None
    assert r.step.command.endswith(" && python -m pip install ${UV_EXCLUDE_NEWER:+--uploaded-prior-to="
                                   "$UV_EXCLUDE_NEWER} -r tests/requirements.txt")  # test_pip_cutoff.py runs it


def test_service_deselection_collapses_files_whose_tests_all_need_it() -> None:
    msg = 'psycopg2.OperationalError: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed'
    failed = [FailedTest(test_id=f"tests/test_db.py::T::test_{i}", message=msg) for i in range(3)]
    failed.append(FailedTest(test_id="tests/test_mixed.py::test_db", message=msg))
    all_ids = [f.test_id for f in failed] + ["tests/test_mixed.py::test_pure", "tests/test_pure.py::test_x"]
    r = repair(ctx(msg, phase="tests", failing=Step(command="<tests>", why=""), failed_tests=failed,
                   test_ids=all_ids, plan=STARTED, tried=[Repair(kind="skip", reason="apt failed", step=Step(
                       command=install_command([SERVICES["postgresql"]]), why=""))]))
    assert r is not None and r.tests == ["tests/test_db.py", "tests/test_mixed.py::test_db"]


def test_collection_errors_install_every_missing_module_at_once() -> None:
    out = ("E   ModuleNotFoundError: No module named 'portend'\n"
           "cheroot/test/test_x.py:3: in <module>\n    import jaraco.functools\n"
           "E   ModuleNotFoundError: No module named 'jaraco'\n"
           "E   ModuleNotFoundError: No module named 'yaml'\n")
    r = repair(ctx(out, phase="check", failing=Step(command="python -m pytest --collect-only", why="")))
    assert r is not None and r.step is not None
    assert r.step.command == "uv pip install 'portend' 'jaraco.functools' 'PyYAML'"


def test_strict_markers_from_a_plugin_install_the_plugin() -> None:
    out = "ERROR cheroot/test/test_server.py - Failed: 'flaky' not found in `markers` configuration option"
    r = repair(ctx(out, phase="check", failing=Step(command="python -m pytest --collect-only", why="")))
    assert r is not None and r.step is not None and r.step.command == "uv pip install 'pytest-rerunfailures'"


def test_deprecations_turned_into_errors_are_ignored_by_test_options() -> None:
    msg = "DeprecationWarning: Context.set_passwd_cb is deprecated. You should decrypt and load your key yourself"
    failed = [FailedTest(test_id=f"t.py::test_{i}", message=msg) for i in range(3)]
    tests = Step(command="<tests>", why="")
    r = repair(RepairContext(plan=Plan(test_command="python -m pytest"), failing=tests, phase="tests", output=msg,
                             diagnosis=diagnose(msg), python="3.11", available_pythons=["3.11"], failed_tests=failed))
    assert r is not None and r.kind == "test_args" and r.args is not None and "ignore::DeprecationWarning" in r.args



def test_only_a_name_the_index_does_not_have_is_stubbed() -> None:
    missing = repair(ctx("Because nonexistent-dep-xyz was not found in the package registry and demo depends"))
    assert missing is not None and missing.kind == "stub_distribution"
    assert missing.distribution == "nonexistent-dep-xyz" and "raises on use" in missing.reason
    # requests exists: its "no matching distribution" is a version or Python conflict, never a stub
    conflict = repair(ctx("ERROR: No matching distribution found for requests>=99"))
    assert conflict is None or conflict.kind != "stub_distribution"


def test_network_off_symptoms_mean_the_internet_not_a_service() -> None:
    failed = [FailedTest(test_id="tests/test_web.py::test_get", message="socket.gaierror: [Errno -3] Temporary "
                         "failure in name resolution"),
              FailedTest(test_id="tests/test_db.py::test_q", message="connection to server at \"localhost\" "
                         "(127.0.0.1), port 5432 failed: Connection refused")]
    ids = ["tests/test_web.py::test_get", "tests/test_web.py::test_other", "tests/test_db.py::test_q"]
    web = repair(ctx(failed[0].message, phase="tests", failing=TESTS, failed_tests=failed, test_ids=ids))
    assert web is not None and web.kind == "deselect" and web.tests == ["tests/test_web.py::test_get"]
    assert "need the internet" in web.reason
    db = repair(ctx(failed[1].message, phase="tests", failing=TESTS, failed_tests=failed, test_ids=ids))
    assert db is not None and db.step is not None and "postgresql" in db.step.command  # run it, not deselect


def test_tests_that_use_a_stub_are_deselected_with_the_distribution_named() -> None:
    message = "AutoinstallStubError: nonexistent-dep-xyz (stubbed by autoinstall: no registry has it): X() was used"
    failed = [FailedTest(test_id="tests/test_a.py::test_x", message=message)]
    r = repair(ctx(message, phase="tests", failing=TESTS, failed_tests=failed,
                   test_ids=["tests/test_a.py::test_x", "tests/test_a.py::test_y"]))
    assert r is not None and r.kind == "deselect" and r.tests == ["tests/test_a.py::test_x"]
    assert "nonexistent-dep-xyz" in r.reason


def test_a_service_found_from_failing_unittest_tests_is_started_by_the_test_command() -> None:
    """Not pytest only: the repair puts the services' start script before any runner's command."""
    failed = [FailedTest(test_id="tests.test_db.T.test_query", message="redis.exceptions.ConnectionError: Error 111 "
                                                                       "connecting to localhost:6379. Connection refused.")]
    out = failed[0].message
    plan = Plan(test_command="python -m unittest discover -s tests", test_runner="unittest")
    install = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=plan))
    assert install is not None and install.step is not None and "redis-server" in install.step.command
    start = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=plan, tried=[install]))
    assert start is not None and start.kind == "test_command"
    assert start.test_command == f"{START} && python -m unittest discover -s tests"
    # a command recorded with the old pytest plugin already starts them
    old = Plan(test_command=f"python -m pytest tests -p {PYTEST_PLUGIN}")
    assert repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, plan=old, tried=[install])).kind \
        == "deselect"
