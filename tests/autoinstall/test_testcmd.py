"""The test command is the project's default suite: tox's default env over side envs, no helper scripts."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.python.proposal.assemble import propose_plan
from autoinstall.ecosystems.python.proposal.testcmd import choose_tests, is_side, is_test_script
from autoinstall.survey import survey


def _write(root: Path, files: dict[str, str]) -> Path:
    files = {"setup.py": "from setuptools import setup\nsetup(name='p')\n", "p/__init__.py": "",
             "tests/test_p.py": "def test_p():\n    pass\n", "bench/test_b.py": "def test_b():\n    pass\n",
             **files}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _command(root: Path) -> str | None:
    return choose_tests(survey(root), root).command


def test_the_env_ci_runs_wins_over_earlier_side_envs(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "tox.ini": "[testenv:perf]\ncommands = pytest bench\n[testenv:integration]\ncommands = pytest tests/it\n"
                   "[testenv:unit]\ncommands = pytest {posargs:tests}\n",
        "tests/it/test_it.py": "def test_it():\n    pass\n",
        ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - run: tox -e unit\n",
    })
    assert _command(root) == "python -m pytest tests"


def test_side_suites_are_last_resorts(tmp_path: Path) -> None:
    root = _write(tmp_path, {"tox.ini": "[testenv:docs]\ncommands = pytest --doctest-glob=*.rst docs\n"
                                        "[testenv:benchmark]\ncommands = pytest bench --benchmark-only\n"})
    # Only side suites: none is the test command; pytest's default collection is.
    assert _command(root) == "python -m pytest bench tests"
    assert is_side("coverage-report", ["coverage report"]) and is_side("py311-lint", ["pytest"])
    assert is_side("speed", ["pytest benchmarks/"]) and is_side("x", ["pytest -m slow docs/"])
    assert not is_side("py311", ["pytest tests -m 'not slow'"]) and not is_side("testenv", ["pytest"])


def test_a_helper_script_is_never_the_test_runner(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "scripts/make_spec.py": "import json\nprint(json.dumps({}))\n",
        "runtests.py": "import sys, unittest\nunittest.main(module=None, argv=sys.argv)\n",
        "tox.ini": "[testenv]\ncommands =\n    python scripts/make_spec.py\n    python runtests.py\n",
    })
    plan = choose_tests(survey(root), root)
    assert (plan.runner, plan.command) == ("custom", "python runtests.py")
    assert any("make_spec.py` runs a helper script" in n for n in plan.notes)
    assert not is_test_script(root, "scripts/make_spec.py") and is_test_script(root, "runtests.py")
    assert is_test_script(root, "tests/not_yet_there.py") and not is_test_script(root, "tools/gen.py")


def test_a_ci_job_named_build_still_runs_the_tests(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        ".github/workflows/ci.yml": "jobs:\n  build:\n    steps:\n      - run: python -m pytest tests -x\n"
                                    "  docs:\n    steps:\n      - run: pytest docs/\n",
        "Makefile": "bench:\n\tpytest bench\n",
    })
    plan = choose_tests(survey(root), root)
    assert plan.command == "python -m pytest tests" and "adapted from `python -m pytest tests -x`" in plan.notes[0]
    combined = _write(tmp_path / "b", {"tox.ini": "[testenv]\ncommands = py.test -xv --cov=p --no-cov-on-fail tests\n"})
    assert _command(combined) == "python -m pytest --no-cov-on-fail tests"  # -xv would stop at the first failure


def test_addopts_that_turn_off_junit_are_overridden_without_it(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = """\n    --verbose\n'
                                               '    -p no:junitxml -m "not slow"\n"""\ntestpaths = ["tests"]\n'})
    plan = choose_tests(survey(root), root)
    assert plan.command == "python -m pytest -o 'addopts=--verbose -m '\"'\"'not slow'\"'\"''"
    assert any("-p no:junitxml" in n for n in plan.notes)


def test_a_private_extension_shim_is_never_a_required_import_check(tmp_path: Path) -> None:
    """`_cext/__init__.py` raises when the optional extension was not built: the suite passes without it."""
    root = _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "speedy-lib"\nversion = "1"\n',
        "_cext/__init__.py": "raise ImportError('the C extension was not built')\n",
        "speedy/__init__.py": "",
        "tests/test_a.py": "def test_a():\n    pass\n",
    })
    plan = propose_plan(survey(root), root)
    imports = {c.command: c.required for c in plan.checks if c.kind == "import"}
    assert imports == {"python -c 'import p'": True, "python -c 'import speedy'": False,
                       "python -c 'import _cext'": False}


def test_an_optionally_built_extension_gets_its_headers_package_up_front(tmp_path: Path) -> None:
    """A failed compile is caught by setup.py, so no diagnosis would ever see the missing header."""
    root = _write(tmp_path, {
        "setup.py": "from setuptools import Extension, setup\nsetup(name='p', packages=['p'], ext_modules=["
                    "Extension('p._speedups', ['p/_speedups.c'], optional=True)])\n",
        "p/_speedups.c": "#include <Python.h>\n#include <stdio.h>\n#include \"local.h\"\n#include <yaml.h>\n"
                         "#include <nothere/unknown.h>\n",
        "p/local.h": "",
    })
    plan = propose_plan(survey(root), root)
    system = [s for s in plan.steps if s.kind == "system"]
    assert len(system) == 1 and system[0].command.endswith(" libyaml-dev")
    assert system[0].evidence[0].file == "p/_speedups.c" and system[0].evidence[0].line == 4
    assert any("nothere/unknown.h" in n and "local.h" not in n and "stdio" not in n for n in plan.notes)
    # a required extension fails the build loudly: its header is left to diagnosis
    (root / "setup.py").write_text((root / "setup.py").read_text().replace(", optional=True", ""))
    assert not [s for s in propose_plan(survey(root), root).steps if s.kind == "system"]


def test_addopts_that_stop_at_the_first_failure_are_overridden_without_them(tmp_path: Path) -> None:
    """With the cache plugin on (the verifier no longer turns it off), `--sw` would stop every run at the first
    failing test; `-x` and `--maxfail` likewise: later tests would never report."""
    root = _write(tmp_path, {"setup.cfg": "[tool:pytest]\naddopts = --sw -x --maxfail 3 -v --strict-markers\n"
                                          "testpaths = tests\n"})
    plan = choose_tests(survey(root), root)
    assert plan.command == "python -m pytest -o 'addopts=-v --strict-markers'"
    assert any("--sw, -x, --maxfail 3" in n for n in plan.notes)
    plain = _write(tmp_path / "plain", {"setup.cfg": "[tool:pytest]\naddopts = -v --cache-clear\n"})
    assert "addopts" not in (choose_tests(survey(plain), plain).command or "")


def test_a_wrapped_unittest_discovery_is_collected_from_the_folder_and_pattern_it_names(tmp_path: Path) -> None:
    """`coverage run -m unittest discover ./tests "*_check.py"`: pytest collects those files of that folder, and
    the collect check with it (not the survey's folders, where other files fail or none match)."""
    root = _write(tmp_path, {
        "tox.ini": "[testenv]\ncommands =\n    coverage run -m unittest discover ./suite \"*_check.py\"\n"
                   "    coverage report\n",
        "suite/clamp_check.py": "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
                                "        pass\n",
    })
    plan = propose_plan(survey(root), root)
    assert plan.test_command == "python -m pytest suite -o 'python_files=*_check.py'"
    collect = next(c for c in plan.checks if c.kind == "collect")
    assert collect.command == "python -m pytest --collect-only -q suite -o 'python_files=*_check.py'"
    root2 = _write(tmp_path / "b", {"Makefile": "test:\n\tpython -m coverage run --branch -m unittest discover -s tests\n"})
    assert _command(root2) == "python -m pytest tests -o 'python_files=test*.py'"


def test_a_wrapped_unittest_command_with_load_tests_is_listed_as_it_runs(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "tox.ini": "[testenv]\ncommands = coverage run --source=p -m unittest discover ./tests\n",
        "tests/test_p.py": "import unittest\ndef load_tests(loader, tests, pattern):\n    return tests\n",
    })
    plan = propose_plan(survey(root), root)
    assert (plan.test_runner, plan.test_command) == ("unittest", "coverage run --source=p -m unittest discover ./tests")
    collect = next(c for c in plan.checks if c.kind == "collect")
    assert collect.command.startswith("python -c ") and " discover ./tests | grep -q AUTOINSTALL-TEST" in collect.command


def test_a_runner_script_named_by_tox_runs_its_test_subcommand(tmp_path: Path) -> None:
    script = ("import argparse, unittest\nparser = argparse.ArgumentParser()\nsub = parser.add_subparsers()\n"
              "sub.add_parser('lint')\nsub.add_parser('tests')\n")
    root = _write(tmp_path, {"runtests.py": script, "tox.ini": "[testenv]\ncommands = python runtests.py {posargs}\n"})
    plan = choose_tests(survey(root), root)
    assert (plan.runner, plan.command) == ("custom", "python runtests.py tests")
    assert any("runs no tests; its `tests` subcommand does" in n for n in plan.notes)
    other = _write(tmp_path / "b", {"run.py": script.replace("'tests'", "'docs'"),
                                    "tox.ini": "[testenv]\ncommands = ./run.py lint\n"})
    plan = choose_tests(survey(other), other)  # no subcommand runs tests: the suite's runner on the test folder
    assert (plan.runner, plan.command) == ("pytest", "python -m pytest bench tests")
    assert any("none of its subcommands (lint, docs) runs tests" in n for n in plan.notes)


def test_a_project_tested_only_by_doctests_has_tests(tmp_path: Path) -> None:
    files = {"pyproject.toml": "[project]\nname = 'p'\n[tool.pytest.ini_options]\n"
                               "addopts = '--doctest-modules'\ntestpaths = ['p']\n",
             "p/__init__.py": 'def one():\n    """\n    >>> one()\n    1\n    """\n    return 1\n'}
    root = tmp_path / "p"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert _command(root) == "python -m pytest"
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    assert _command(root) is None  # no test modules and no doctests collected: nothing verifies it
