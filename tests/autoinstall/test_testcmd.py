"""The test command is the project's default suite: tox's default env over side envs, no helper scripts."""
from __future__ import annotations

from pathlib import Path

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


def test_addopts_that_turn_off_junit_are_overridden_without_it(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = """\n    --verbose\n'
                                               '    -p no:junitxml -m "not slow"\n"""\ntestpaths = ["tests"]\n'})
    plan = choose_tests(survey(root), root)
    assert plan.command == "python -m pytest -o 'addopts=--verbose -m '\"'\"'not slow'\"'\"''"
    assert any("-p no:junitxml" in n for n in plan.notes)
