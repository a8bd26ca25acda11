"""Embedded model, phase 1: each fixture's plan installs the local checkout and test deps, with evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.go.proposal import WARM_CACHE as WARM
from autoinstall.ecosystems.java.proposal import GATES_OFF
from autoinstall.ecosystems.node.proposal import NPM_INSTALL
from autoinstall.ecosystems.node.scripts import REBUILD
from autoinstall.ecosystems.node.testchain import PATH_BIN
from autoinstall.ecosystems.python.proposal.interpreter import NoInterpreterError
from autoinstall.ecosystems.python.pypi_names import distribution_for, requirement_name
from autoinstall.ecosystems.services import START
from autoinstall.plan.models import ModelError, PriorModel, get_model
from autoinstall.plan.models.embedded import EmbeddedModel
from autoinstall.survey import survey
from envs.spec import MAX_STEPS, Plan
from tests.autoinstall.ecosystem_checks import write_tree

REPOS = Path(__file__).parent.parent / "fixtures" / "repos"
CASES = sorted(p.name for p in REPOS.iterdir() if p.is_dir() and p.name != "__pycache__")

# case -> (project install command or None, things the test-deps/manifest steps must install, test command)
EXPECTED = {
    "go_nested_runs": (("go build -buildvcs=false ./...", WARM), [], "go test -json -count=1 -vet=off ./..."),
    "setup_py_only": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "pep621_extras": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "python_doctests": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "dependency_groups": ("uv pip install -e .", ["--group test"], "python -m pytest tests"),
    "poetry": ("uv pip install -e .", ["'pytest>=8.0,<9'"], "python -m pytest tests"),
    "requirements_tox": (
        "uv pip install -e .",
        ["-r requirements.txt", "pytest", "attrs"],
        "python -m pytest tests",
    ),
    "c_extension_needs_dev_package": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "cmake_find_package": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "import_name_differs": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "uninstallable_dependency": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "service_backed": ("uv pip install -e '.[test]'", [], f"{START} && python -m pytest tests/unit"),
    "service_postgres": ("uv pip install -e '.[test]'", [], f"{START} && export NOTES_DB_HOST=127.0.0.1 "
                         "NOTES_DB_NAME=notes_test NOTES_DB_PASSWORD=secret NOTES_DB_USER=notes && "
                         "python -m pytest tests"),
    "service_compose_redis": ("uv pip install -e '.[test]'", [], f"{START} && export "
                              "REDIS_URL=redis://127.0.0.1:6379/1 && python -m pytest tests"),
    "no_tests": ("uv pip install -e .", [], None),
    "hostile_network_probe": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "hostile_cache_poison": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "hostile_memory_bomb": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "hostile_fork_bomb": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "hostile_disk_bomb": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "no_build_files": (None, [], None),
    "tasks_mutable": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "python_version_switch": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "requires_python_312": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "unittest_runner": ("uv pip install -e .", ["pytest"], "python -m pytest tests -o 'python_files=test*.py'"),
    "pytest_plugin_needed": (
        "uv pip install -e '.[test]'",
        ["pytest-timeout", "pytest-asyncio"],
        "python -m pytest tests",
    ),
    "scripts_only": (None, ["PyYAML", "pytest"], "python -m pytest"),
    "vcs_version": (
        "SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0 uv pip install -e '.[tests]'",
        [],
        "python -m pytest tests",
    ),
    "uv_lock": ("uv pip install -e . -c /opt/autoinstall-lock.txt", ["pytest"], "python -m pytest tests"),
    "stale_lock": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "poetry_lock": ("uv pip install -e . -c /opt/autoinstall-lock.txt", ["iniconfig", "pytest"], "python -m pytest tests"),
    "go_module": (("go build -buildvcs=false ./...", WARM), [], "go test -json -count=1 -vet=off ./..."),
    "rust_crate": ("cargo test --no-run --offline", [], "cargo test --no-fail-fast --offline"),
    "rust_newer_toolchain": ("cargo test --no-run --offline", [], "cargo test --no-fail-fast --offline"),
    "go_newer_toolchain": (("go build -buildvcs=false ./...", WARM), [], "go test -json -count=1 -vet=off ./..."),
    "maturin_bindings": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "python_node_tests": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "python_browser": ("uv pip install -e '.[test]'", [], "python -m pytest"),
    "maven_module_unbuildable": ((f"mvn -B -ntp install -Dtest=MessageTest -Dsurefire.failIfNoSpecifiedTests=false "
                                  f"-DfailIfNoTests=false -Dmaven.test.failure.ignore=true {GATES_OFF}"), [],
                                 f"mvn -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF} -fae"),
    "java_maven": ((f"mvn -B -ntp test -Dtest=CalcTest -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false "
                    f"-Dmaven.test.failure.ignore=true {GATES_OFF}"), [],
                   f"mvn -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF}"),
    "java_fonts": ((f"mvn -B -ntp test -Dtest=CaptionTest -Dsurefire.failIfNoSpecifiedTests=false "
                    f"-DfailIfNoTests=false -Dmaven.test.failure.ignore=true {GATES_OFF}"), [],
                   f"mvn -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF}"),
    "java_newer_toolchain": ((f"mvn -B -ntp test -Dtest=ShapesTest -Dsurefire.failIfNoSpecifiedTests=false "
                              f"-DfailIfNoTests=false -Dmaven.test.failure.ignore=true {GATES_OFF}"), [],
                             f"mvn -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF}"),
    "tox_default_env": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "tox_helper_script": ("uv pip install -e .", ["pytest"], "python -m pytest tests"),
    "node_package": (None, [], "npm test --ignore-scripts"),
    "node_browser": ((NPM_INSTALL, REBUILD), [], "npm test --ignore-scripts"),
    "node_install_scripts": (("npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD), [],
                             "npm test --ignore-scripts"),
    "monorepo_subproject": ("cd packages/core && uv pip install -e '.[test]'", [],  # test_subprojects.py has more
                            "cd packages/core && python -m pytest"),  # the browser comes by repair, once needed
    "node_lint_chain": ((NPM_INSTALL, REBUILD), [],  # xo left out; lint:types by a repair (test_node_testchain.py)
                        f"{PATH_BIN} && npm run lint:types && npm run build && node --test"),
    "node_lockfile": (("npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD), [],
                      "npm test --ignore-scripts"),
    "node_jest": (("npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD), [],
                  "npm test --ignore-scripts -- --verbose"),  # a bare `jest` names every test with --verbose
    "node_vitest": (("npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD), [],
                    "npm test --ignore-scripts -- --reporter=verbose"),  # vitest's default names failing tests only
    "node_ava_offline": (("npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD), [],
                         "npm test --ignore-scripts"),
    "hanging_test": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
    "uncollectable_test_file": ("uv pip install -e '.[test]'", [], "python -m pytest tests"),
}


def _plan(root: Path) -> Plan:
    return get_model("embedded").propose(survey(root), root)


def test_every_fixture_has_an_expectation() -> None:
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_fixture_plan(case: str) -> None:
    project, wanted, test_command = EXPECTED[case]
    plan = _plan(REPOS / case)
    assert len(plan.steps) <= MAX_STEPS
    commands = [s.command for s in plan.steps]
    project_steps = [s.command for s in plan.steps if s.kind == "project"]
    assert project_steps == ([project] if isinstance(project, str) else list(project or ()))
    for item in wanted:
        assert any(item in c.split(" ", 3)[-1] for c in commands if c.startswith(("uv pip", "SETUP"))), (
            item,
            commands,
        )
    assert not any("pip install " + case in c for c in commands)  # never the PyPI release
    assert plan.test_command == test_command
    runner = {"go": "go", "rust": "cargo", "node": "node", "java": "maven"}.get(plan.ecosystem, "pytest")  # each ecosystem's own runner
    assert plan.test_runner == (runner if test_command else "none")
    for step in plan.steps:
        assert step.why and step.evidence, step
        assert all((REPOS / case / e.file).exists() for e in step.evidence), step
    kinds = [c.kind for c in plan.checks]
    assert kinds.count("tests") == (1 if test_command else 0)
    assert ("collect" in kinds) == (bool(test_command) and runner != "node")  # node's runners cannot list


def test_steps_are_ordered_system_manifest_project_tests(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
            'build-backend = "setuptools.build_meta"\n'
            '[project]\nname = "p"\nversion = "1"\ndependencies = ["psycopg2"]\n'
            '[dependency-groups]\ndev = ["pytest-mock"]\n'
            '[tool.pytest.ini_options]\naddopts = "--cov=p"\n',
            "requirements-test.txt": "pytest\n",
            "p/__init__.py": "",
            "tests/test_p.py": "def test_p(mocker): pass\n",
            ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n"
            "      - run: sudo apt-get install -y gettext\n"
            "      - run: pip install hypothesis\n      - run: pytest -n auto --cov p tests\n",
        },
    )
    plan = _plan(tmp_path)
    assert [s.kind for s in plan.steps] == ["system", "python", "test-deps", "project", "test-deps"]
    assert plan.steps[0].command.endswith("--no-install-recommends gettext libpq-dev")
    assert plan.steps[1].command == "uv pip install -r requirements-test.txt"
    assert plan.steps[2].command == "uv pip install --group dev"
    assert plan.steps[4].command == "uv pip install hypothesis pytest-cov"
    assert plan.test_command == "python -m pytest tests"


def test_python_version_from_requires_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_PYTHON_BUILDS", str(tmp_path / "none"))  # Debian's interpreters only
    base = '[project]\nname = "p"\nversion = "1"\nrequires-python = "{}"\n'
    for spec, python, noted in ((">=3.8", "3.11", False), (">=3.12", "3.13", True), ("<3.10", "3.9", True)):
        root = write_tree(tmp_path / spec.strip("<>="), {"pyproject.toml": base.format(spec)})
        plan = _plan(root)
        assert plan.python == python
        assert any("requires-python" in n for n in plan.notes) == noted
    root = write_tree(tmp_path / "old", {"pyproject.toml": base.format("<3.9")})
    with pytest.raises(NoInterpreterError, match=r"allows none of .*: 3\.9, 3\.11, 3\.13\."):
        _plan(root)


def test_setup_py_build_imports_install_first_without_isolation(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "setup.py": "import numpy\nfrom Cython.Build import cythonize\nfrom setuptools import setup\n"
            "setup(name='q', ext_modules=cythonize('q/*.pyx'))\n",
            "q/__init__.py": "",
            "q/f.pyx": "",
            "tests/test_q.py": "import q\n",
        },
    )
    plan = _plan(tmp_path)
    assert plan.steps[0].command == "uv pip install setuptools wheel numpy Cython"
    assert plan.steps[1].command == "uv pip install -e . --no-build-isolation"


def test_custom_runner_and_load_tests(tmp_path: Path) -> None:
    custom = write_tree(
        tmp_path / "a",
        {
            "setup.py": "from setuptools import setup\nsetup(name='a')\n",
            "tests/test_a.py": "import unittest\n",
            "tox.ini": "[testenv]\ncommands = python tests/run.py\n",
            "tests/run.py": "",
        },
    )
    plan = _plan(custom)
    assert (plan.test_runner, plan.test_command) == ("custom", "python tests/run.py")
    loader = write_tree(
        tmp_path / "b",
        {
            "setup.py": "from setuptools import setup\nsetup(name='b')\n",
            "Makefile": "test:\n\tpython -m testtools.run tests.test_suite\n",
            "tests/test_b.py": "import unittest\ndef load_tests(loader, tests, p):\n    return tests\n",
        },
    )
    plan = _plan(loader)
    assert (plan.test_runner, plan.test_command) == ("unittest", "python -m testtools.run tests.test_suite")
    assert [c.kind for c in plan.checks] == ["collect", "tests"]


def test_entrypoint_checks_are_optional() -> None:
    plan = _plan(REPOS / "pep621_extras")
    entry = [c for c in plan.checks if c.kind == "entrypoint"]
    assert [(c.command, c.required) for c in entry] == [("eggs --help", False)]
    assert [c.command for c in plan.checks if c.kind == "import"] == ["python -c 'import eggs'"]


def test_notes_for_services_and_undeclared_imports() -> None:
    assert any("postgresql run inside the environment" in n for n in _plan(REPOS / "service_backed").notes)
    assert any("yaml (-> PyYAML" in n for n in _plan(REPOS / "import_name_differs").notes)
    assert any("nothing to install" in n for n in _plan(REPOS / "no_build_files").notes)


def test_get_model() -> None:
    model = get_model("embedded")
    assert isinstance(model, EmbeddedModel) and isinstance(model, PriorModel) and model.name == "embedded"
    assert isinstance(get_model(""), EmbeddedModel)
    with pytest.raises(ModelError, match="needs a model name and an endpoint"):
        get_model("openai:gpt-x")
    chat = get_model("openai:gpt-x", base_url="http://127.0.0.1:9/v1")
    assert isinstance(chat, PriorModel) and chat.name == "openai:gpt-x"
    with pytest.raises(ModelError, match="choose one of: embedded, openai:NAME"):
        get_model("magic")
    with pytest.raises(ModelError, match="takes no option base_url"):
        get_model("embedded", base_url="http://localhost:1")
    assert get_model("embedded", base_url=None).name == "embedded"


@pytest.mark.parametrize(
    ("module", "dist"),
    [
        ("yaml", "PyYAML"),
        ("cv2", "opencv-python-headless"),
        ("attr", "attrs"),
        ("PIL", "Pillow"),
        ("sklearn", "scikit-learn"),
        ("google.protobuf.message", "protobuf"),
        ("psycopg2", "psycopg2-binary"),
        ("MySQLdb", "mysqlclient"),
        ("dateutil", "python-dateutil"),
        ("requests", "requests"),
    ],
)
def test_distribution_for(module: str, dist: str) -> None:
    assert distribution_for(module) == dist


def test_requirement_name() -> None:
    assert requirement_name("PyYAML>=5; python_version > '3'") == "pyyaml"
    assert requirement_name("zope.interface[test]") == "zope-interface"
    assert requirement_name("-r x.txt") is None and requirement_name(".[test]") is None


def test_ci_services_become_one_install_step_that_provisions_what_ci_names() -> None:
    plan = _plan(REPOS / "service_postgres")
    step = next(s for s in plan.steps if START in s.command)
    assert step.kind == "system" and plan.steps.index(step) == 0 and step.evidence[0].file == ".github/workflows/ci.yml"
    assert "--no-install-recommends postgresql\n" in step.command
    assert "CREATE ROLE \"notes\" SUPERUSER LOGIN" in step.command and "-O notes notes_test" in step.command
    tests = next(c for c in plan.checks if c.kind == "tests")
    assert tests.command == plan.test_command
    collect = next(c for c in plan.checks if c.kind == "collect")
    assert START not in collect.command


def test_a_ci_service_debian_does_not_package_is_noted_not_installed(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "m"\nversion = "0"\n',
        "tests/test_m.py": "def test_m():\n    pass\n",
        ".github/workflows/t.yml": "jobs:\n  t:\n    env:\n      MONGO_URL: mongodb://mongo:27017/x\n"
                                   "    services:\n      mongo:\n        image: mongo:7\n"
                                   "    steps:\n      - run: pytest\n"})
    plan = _plan(root)
    assert not any(START in s.command for s in plan.steps) and START not in (plan.test_command or "")
    assert any("mongo" in n and "Debian does not package" in n for n in plan.notes)
