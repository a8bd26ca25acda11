"""survey(): the facts each fixture repository states, with evidence; malformed files never crash it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems.python import RepoFacts
from autoinstall.ecosystems.python.imports import extract_imports
from autoinstall.ecosystems.python.survey.tasks import tox_substitute
from autoinstall.survey import survey
from tests.autoinstall.ecosystem_checks import write_tree

REPOS = Path(__file__).parent.parent / "fixtures" / "repos"
CASES = sorted(p.name for p in REPOS.iterdir() if p.is_dir() and p.name != "__pycache__")
PYTHON_CASES = [c for c in CASES if not any((REPOS / c / m).is_file() for m in ("go.mod", "Cargo.toml", "package.json", "pom.xml"))]
"""The fixtures this file's Python survey tests read (Go's and Rust's: tests/autoinstall/test_go.py, test_rust.py)."""


def _facts(case: str) -> RepoFacts:
    return survey(REPOS / case)


@pytest.mark.parametrize("case", CASES)
def test_every_fixture_states_its_expected_outcome(case: str) -> None:
    expected = json.loads((REPOS / case / "expected.json").read_text())
    assert set(expected) - {"options"} == {"outcome", "failure_class", "min_passed", "stubs", "deselected_reason",
                                           "notes"}  # options: BuildOptions fields the e2e build passes
    assert expected["outcome"] in ("verified", "partial", "failed")
    assert (expected["failure_class"] is None) == (expected["outcome"] == "verified")


@pytest.mark.parametrize("case", PYTHON_CASES)
def test_every_fact_has_evidence_pointing_into_the_repo(case: str) -> None:
    facts = _facts(case)
    assert isinstance(facts, RepoFacts)
    evidence = [r.evidence for r in facts.dependencies] + [c.evidence for c in facts.commands]
    evidence += [
        r.evidence for x in facts.extras + facts.dependency_groups + facts.tool_groups for r in x.requirements
    ]
    evidence += [m.evidence for m in facts.imports] + [e.evidence for e in facts.entry_points]
    for item in evidence:
        assert (REPOS / case / item.file).exists(), item
        assert item.line is not None and item.text, item


def test_setup_py_only() -> None:
    facts = _facts("setup_py_only")
    assert (facts.build.backend, facts.project_name, facts.requires_python) == ("setup.py", "spam", ">=3.8")
    assert [(r.spec, r.evidence.line) for r in facts.dependencies] == [("six>=1.10", 7)]
    assert facts.packages == ["spam"]
    assert (facts.tests.dirs, facts.tests.files, facts.tests.style) == (["tests"], 1, "pytest")


def test_pep621_extras() -> None:
    facts = _facts("pep621_extras")
    assert facts.build.backend == "setuptools"
    test = next(x for x in facts.extras if x.name == "test")
    assert test.test_like and [r.spec for r in test.requirements] == ["pytest>=7", "iniconfig"]
    assert not next(x for x in facts.extras if x.name == "docs").test_like
    assert [(e.name, e.target, e.evidence.line) for e in facts.entry_points] == [
        ("eggs", "eggs.cli:main", 16)
    ]
    assert facts.packages == ["eggs"]  # src layout
    assert facts.pytest is not None and facts.pytest.testpaths == ["tests"]
    assert {m.name for m in facts.imports} == {"attr", "iniconfig", "pytest"}


def test_dependency_groups_with_include() -> None:
    facts = _facts("dependency_groups")
    test = next(g for g in facts.dependency_groups if g.name == "test")
    assert [r.spec for r in test.requirements] == ["pytest>=7"] and test.includes == ["compat"]
    assert test.evidence is not None and test.evidence.line == 13
    assert facts.build.backend == "hatchling"


def test_poetry() -> None:
    facts = _facts("poetry")
    assert (facts.build.backend, facts.project_name, facts.requires_python) == (
        "poetry",
        "versed",
        ">=3.9,<4",
    )
    assert [r.spec for r in facts.dependencies] == ["pyyaml>=6.0,<7"]
    group = facts.tool_groups[0]
    assert (group.name, group.test_like, [r.spec for r in group.requirements]) == (
        "test",
        True,
        ["pytest>=8.0,<9"],
    )


def test_requirements_and_tox() -> None:
    facts = _facts("requirements_tox")
    assert [f.path for f in facts.requirements_files] == ["requirements.txt"]
    assert facts.requirements_files[0].requirements[0].spec == "python-dateutil>=2.8"
    base = next(e for e in facts.task_envs if e.name == "testenv")
    assert [d.spec for d in base.deps] == ["-r ./requirements.txt", "pytest", "attrs"]
    assert base.commands == ["pytest tests"] and base.test_like
    lint = next(e for e in facts.task_envs if e.name == "lint")
    assert not lint.test_like and lint.deps[0].evidence.line == 12


def test_c_extension_is_detected_but_its_system_package_is_not_guessed() -> None:
    facts = _facts("c_extension_needs_dev_package")
    assert {c.name for c in facts.c_extensions} == {"ext_modules", "yamlver/_yamlver.c"}
    assert facts.apt_packages == []


def test_undeclared_imports_are_found() -> None:
    facts = _facts("import_name_differs")
    assert facts.dependencies == []
    assert {m.name: m.evidence.line for m in facts.imports} == {"yaml": 2, "dateutil": 3}


def test_service_and_ci_commands() -> None:
    facts = _facts("service_backed")
    assert [(s.name, s.image, s.evidence.line) for s in facts.services] == [("postgres", "postgres:16", 7)]
    assert [(c.purpose, c.text) for c in facts.commands] == [
        ("install", "pip install -e .[test]"),
        ("test", "pytest -v tests/unit"),
    ]


def test_pytest_plugins_implied_by_config() -> None:
    facts = _facts("pytest_plugin_needed")
    assert facts.pytest is not None
    assert [(p.name, p.evidence.line) for p in facts.pytest.plugins] == [
        ("pytest-timeout", 14),
        ("pytest-asyncio", 15),
    ]


def test_unittest_runner_and_vcs_versioning() -> None:
    facts = _facts("unittest_runner")
    assert facts.tests.style == "unittest" and facts.project_name == "plainunit"
    assert [(c.source, c.text) for c in facts.commands] == [
        ("make", "python -m unittest discover -s tests -v")
    ]
    scm = _facts("vcs_version").versioning
    assert scm is not None and (scm.scheme, scm.needs_vcs) == ("setuptools-scm", True)


@pytest.mark.parametrize("case", ["no_build_files", "no_tests", "scripts_only"])
def test_sparse_repositories(case: str) -> None:
    facts = _facts(case)
    assert facts.build.installable == (case == "no_tests")
    assert (facts.tests.files > 0) == (case == "scripts_only")


def test_nox_hatch_justfile_and_docs(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "noxfile.py": 'import nox\nDEPS = ["pytest", "coverage"]\n\n@nox.session(python=["3.11"])\n'
            'def tests(session):\n    session.install("-e", ".[test]")\n    session.install(*DEPS)\n'
            '    session.run("pytest", "-x")\n\n@nox.session(name="lint")\ndef _lint(session):\n'
            '    session.install("ruff")\n',
            "pyproject.toml": '[project]\nname = "x"\n[tool.hatch.envs.test]\ndependencies = ["hypothesis"]\n'
            '[tool.hatch.envs.test.scripts]\nrun = "pytest tests"\n'
            '[tool.hatch.version]\nsource = "vcs"\n',
            "justfile": "test *args:\n    python -m pytest {{args}}\n",
            "CONTRIBUTING.md": "Setup:\n\n```console\n$ sudo apt-get install -y libxml2-dev gettext\n"
            "$ pip install -r requirements-dev.txt\n```\n",
        },
    )
    facts = survey(tmp_path)
    tests = next(e for e in facts.task_envs if e.tool == "nox" and e.name == "tests")
    assert [d.spec for d in tests.deps] == ["-e .[test]", "pytest", "coverage"] and tests.commands == [
        "pytest -x"
    ]
    assert next(e for e in facts.task_envs if e.tool == "nox" and e.name == "lint").test_like is False
    hatch = next(e for e in facts.task_envs if e.tool == "hatch")
    assert hatch.test_like and [d.spec for d in hatch.deps] == ["hypothesis"]
    assert {(c.source, c.purpose) for c in facts.commands} >= {
        ("just", "test"),
        ("docs", "system"),
        ("docs", "install"),
    }
    assert [(p.name, p.evidence.file, p.evidence.line) for p in facts.apt_packages] == [
        ("libxml2-dev", "CONTRIBUTING.md", 4),
        ("gettext", "CONTRIBUTING.md", 4),
    ]
    assert facts.versioning is not None and facts.versioning.scheme == "hatch-vcs"


def test_tox_in_pyproject_legacy_and_native(tmp_path: Path) -> None:
    legacy = write_tree(
        tmp_path / "a",
        {
            "pyproject.toml": '[tool.tox]\nlegacy_tox_ini = """\n[testenv]\n'
            'deps = pytest-mock\nextras = test\ncommands = pytest\n"""\n'
        },
    )
    env = survey(legacy).task_envs[0]
    assert ([d.spec for d in env.deps], env.extras, env.commands) == (["pytest-mock"], ["test"], ["pytest"])
    native = write_tree(
        tmp_path / "b",
        {
            "tox.toml": '[env_run_base]\ndeps = ["pytest>=8"]\ndependency_groups = ["test"]\n'
            'commands = [["pytest", {replace = "posargs", default = ["tests"]}]]\n'
        },
    )
    env = survey(native).task_envs[0]
    assert ([d.spec for d in env.deps], env.groups, env.commands) == (
        ["pytest>=8"],
        ["test"],
        ["pytest tests"],
    )


def test_pytest_ini_takes_precedence_and_setup_cfg(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = -p pytest_mock --cov=x -n auto\ntestpaths = t\n",
            "setup.cfg": "[metadata]\nname = y\n[options]\ninstall_requires =\n    six\n"
            "[options.extras_require]\ntesting = pytest\n[tool:pytest]\naddopts = -x\n",
        },
    )
    facts = survey(tmp_path)
    assert facts.pytest is not None and facts.pytest.file == "pytest.ini" and facts.pytest.testpaths == ["t"]
    assert [p.name for p in facts.pytest.plugins] == ["pytest-mock", "pytest-cov", "pytest-xdist"]
    assert facts.project_name == "y" and [r.spec for r in facts.dependencies] == ["six"]
    assert facts.extras[0].name == "testing" and facts.extras[0].test_like


def test_requirements_files_nested_and_ci_apt(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "requirements/test.txt": "-r base.txt\npytest  # runner\n--index-url https://x\n",
            "requirements/base.txt": "attrs\n",
            "tests/requirements.txt": "hypothesis\n",
            ".github/workflows/t.yml": "jobs:\n  t:\n    services:\n      redis:\n        image: redis:7\n"
            "    steps:\n"
            "      - run: |\n          sudo apt-get update && sudo apt-get install -y \\\n"
            "            libpq-dev\n          python -m pytest\n",
        },
    )
    facts = survey(tmp_path)
    files = {f.path: f for f in facts.requirements_files}
    assert set(files) == {"requirements/test.txt", "requirements/base.txt", "tests/requirements.txt"}
    assert files["requirements/test.txt"].references == ["requirements/base.txt"]
    assert [r.spec for r in files["requirements/test.txt"].requirements] == ["pytest"]
    assert [p.name for p in facts.apt_packages] == ["libpq-dev"]
    assert facts.services[0].image == "redis:7"
    assert any(c.text == "python -m pytest" and c.purpose == "test" for c in facts.commands)


def test_malformed_files_become_notes(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "[project\nname=",
            "tox.ini": "deps = x\n[testenv",
            "setup.py": "def (:\n",
            "noxfile.py": "import nox\n@nox.session\ndef t(s:\n",
            ".github/workflows/x.yml": "jobs: [unclosed",
            "pytest.ini": "no section\n",
            "tests/test_a.py": "def test_a(:\n",
        },
    )
    facts = survey(tmp_path)
    joined = "\n".join(facts.notes)
    for name in ("pyproject.toml", "tox.ini", "setup.py", "noxfile.py", "x.yml", "pytest.ini"):
        assert name in joined
    assert facts.tests.files == 1


def test_imports_skip_stdlib_local_relative_and_flag_optional(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "import os\nfrom . import sub\nfrom pkg import sub\nimport helpers\n"
            "try:\n    import ujson\nexcept ImportError:\n    ujson = None\n"
            "from google.protobuf import message\n",
            "pkg/sub.py": "",
            "tests/helpers.py": "",
            "tests/test_x.py": "import numpy as np\n",
        },
    )
    facts = survey(tmp_path)
    found = {m.name: (m.optional, m.in_tests) for m in facts.imports}
    assert found == {"ujson": (True, False), "google.protobuf": (False, False), "numpy": (False, True)}
    assert [i.name for i in extract_imports(b"import a.b as c, d\nfrom .x import y\n")] == ["a.b", "d"]


def test_tox_substitutions_are_expanded_not_cut() -> None:
    assert tox_substitute("pytest {env:PYTEST_ADDOPTS:-x} {toxinidir}/tests {posargs:-q}") == "pytest -x ./tests -q"
    assert tox_substitute("{envpython} -m pytest {tox_root}/src {posargs}") == "python -m pytest ./src"
    assert tox_substitute("pytest {env:NOPE} tests") == "pytest tests"


def test_services_keep_their_container_env_and_the_literal_env_of_the_job(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".github/workflows/tests.yml": "env:\n  TOP: '1'\njobs:\n  t:\n    env:\n      APP_DB: app\n"
            "      PY: ${{ matrix.python }}\n    services:\n      pg:\n        image: postgres:16\n"
            "        env:\n          POSTGRES_DB: app\n    steps:\n      - run: pytest\n        env:\n"
            "          APP_DB_HOST: pg\n",
            ".gitlab-ci.yml": "variables:\n  CACHE_URL: redis://cache:6379/0\n"
            "test:\n  services:\n    - name: redis:7\n      alias: cache\n  script:\n    - pytest\n",
        },
    )
    facts = survey(tmp_path)
    pg, redis = facts.services
    assert (pg.name, pg.env) == ("pg", {"POSTGRES_DB": "app"})
    assert pg.client_env == {"TOP": "1", "APP_DB": "app", "APP_DB_HOST": "pg"}  # expressions are dropped
    assert (redis.name, redis.image, redis.client_env) == ("cache", "redis:7", {"CACHE_URL": "redis://cache:6379/0"})


def test_service_fixture_records_what_ci_gives_the_postgres_container() -> None:
    service = _facts("service_postgres").services[0]
    assert service.env == {"POSTGRES_USER": "notes", "POSTGRES_PASSWORD": "secret", "POSTGRES_DB": "notes_test"}
    assert service.client_env["NOTES_DB_HOST"] == "localhost"


def test_tox_default_envs_and_nested_substitutions(tmp_path: Path) -> None:
    assert tox_substitute("pytest {posargs:{toxinidir}/tests}") == "pytest ./tests"
    assert tox_substitute("pytest {env:T:{env:U:{toxinidir}/t}} --basetemp={envtmpdir}") == \
        "pytest ./t --basetemp={envtmpdir}"
    (tmp_path / "tox.ini").write_text(
        "[tox]\nenvlist = py3{11,12}-unit, lint\n\n[base]\ncmd = pytest {posargs:tests}\n\n"
        "[testenv]\ncommands = {[base]cmd}\n\n[testenv:lint]\ncommands = ruff check .\n\n"
        "[testenv:perf]\ncommands = pytest bench\n")
    envs = {e.name: e for e in survey(tmp_path).task_envs}
    assert envs["testenv"].commands == ["pytest tests"]  # a {[section]key} reference, resolved
    assert (envs["testenv"].default, envs["lint"].default, envs["perf"].default) == (True, True, False)
    (tmp_path / "tox.ini").unlink()
    (tmp_path / "noxfile.py").write_text(
        "import nox\nnox.options.sessions = ['tests']\n\n@nox.session\ndef tests(session):\n"
        "    session.run('pytest')\n\n@nox.session\ndef bench(session):\n    session.run('pytest', 'bench')\n")
    assert {e.name: e.default for e in survey(tmp_path).task_envs} == {"tests": True, "bench": False}
    (tmp_path / "noxfile.py").unlink()
    (tmp_path / "tox.toml").write_text('env_list = ["unit"]\n[env.bench]\ncommands = [["pytest", "bench"]]\n'
                                       '[env.unit]\ncommands = [["pytest", {replace = "posargs", default = ["tests"]}]]\n')
    assert {e.name: (e.default, e.commands) for e in survey(tmp_path).task_envs} == {
        "bench": (False, ["pytest bench"]), "unit": (True, ["pytest tests"])}


# -- hostile files: read by lstat, never across a link out, never a FIFO; every malformed file a note ------

SECRET = "zqsurveysecret"
ECOSYSTEM_FILES = {
    "python": {"setup.py": "from setuptools import setup\nsetup(name='p')\n",
               "tests/test_a.py": "def test_a(): pass\n"},
    "node": {"package.json": '{"name": "n", "scripts": {"test": "jest"}}'},
    "go": {"go.mod": "module example.com/g\n\ngo 1.21\n", "g_test.go": "package g\n"},
    "rust": {"Cargo.toml": '[package]\nname = "r"\nversion = "0.1.0"\n',
             "src/lib.rs": "#[test]\nfn t() {}\n"},
    "java": {"pom.xml": "<project><artifactId>j</artifactId></project>"},
}
"""A minimal project of each ecosystem; the hostile files go beside it."""
READ_BESIDE = ["requirements.txt", "requirements-dev.txt", "tox.ini", "setup.cfg", "pytest.ini", "noxfile.py",
               "Makefile", "README.md", ".nvmrc", "yarn.lock", "go.sum", "main.go", "rust-toolchain",
               "Cargo.lock", "src/main.rs", ".mvn/wrapper/maven-wrapper.properties", "mvnw",
               "src/test/ATest.java",
               ".github/workflows/ci.yml", "docker-compose.yml", "tests/test_b.py", "conftest.py"]
"""Files some survey reads: each becomes a FIFO or a link out."""
SOCKET_AT = {"python": "b.py", "go": "s.go", "rust": "tests/s.rs", "java": "src/test/STest.java",
             "node": "tsconfig.json"}


def _project(root: Path, ecosystem: str) -> Path:
    return write_tree(root / "repo", ECOSYSTEM_FILES[ecosystem])


def _plan_text(repo: Path) -> str:
    from autoinstall.options import BuildOptions
    from autoinstall.plan import propose

    facts = survey(repo)
    return facts.model_dump_json() + propose(repo, BuildOptions(), facts)[1].model_dump_json()


@pytest.mark.timeout(60)  # a FIFO opened for reading blocks forever: the test fails instead of hanging
@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEM_FILES))
def test_fifos_and_sockets_are_skipped_with_a_note_and_never_opened(tmp_path: Path, ecosystem: str) -> None:
    import os
    import socket

    repo = _project(tmp_path, ecosystem)
    for rel in READ_BESIDE:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(repo / rel)
    at = SOCKET_AT[ecosystem]
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(repo / at))
        except OSError:  # a path too long for a socket address
            pass
        _plan_text(repo)
        notes = "\n".join(survey(repo).notes)
    assert "a FIFO, not a regular file: skipped" in notes
    assert f"{at}: a socket, not a regular file: skipped" in notes or not (repo / at).exists()


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEM_FILES))
def test_nothing_is_read_or_listed_across_a_link_out_of_the_checkout(tmp_path: Path, ecosystem: str) -> None:
    host = write_tree(tmp_path / "host", {name: f"{SECRET}\n" for name in READ_BESIDE})
    write_tree(host, {"workflows/ci.yml": f"jobs:\n  t:\n    steps:\n      - run: pytest {SECRET}\n",
                  "Cargo.toml": f'[package]\nname = "{SECRET}"\n',
                  "package.json": json.dumps({"name": SECRET}), "pkg/__init__.py": f"import {SECRET}\n",
                  f"{SECRET}.py": "", "go.mod": f"module {SECRET}\n"})
    repo = _project(tmp_path, ecosystem)
    for rel in READ_BESIDE:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        if not (repo / rel).parent.is_symlink():
            (repo / rel).symlink_to(host / Path(rel).name)
    (repo / ".github" / "workflows" / "ci.yml").unlink()
    (repo / ".github" / "workflows").rmdir()
    (repo / ".github" / "workflows").symlink_to(host / "workflows")  # a folder out: not even listed
    for folder in ("lib", "docs", "sub", "crates"):
        (repo / folder).symlink_to(host)
    (repo / "loop").symlink_to("loop")
    (repo / "dangling.py").symlink_to("/nonexistent/x.py")
    text = _plan_text(repo)
    assert SECRET not in text
    assert "points outside the checkout" in "\n".join(survey(repo).notes)


def test_huge_empty_and_undecodable_files_are_notes(tmp_path: Path) -> None:
    import os

    repo = _project(tmp_path, "python")
    (repo / "pyproject.toml").write_text("[project]\n")
    os.truncate(repo / "pyproject.toml", 50 * 1024 * 1024)  # sparse: costs no disk, and is never read
    (repo / "requirements.txt").write_bytes(b"six==1.16\n\xff\xfe\xfa broken\n")
    (repo / "setup.cfg").write_text("")
    facts = survey(repo)
    notes = "\n".join(facts.notes)
    assert "pyproject.toml: 52428800 bytes, over the 2000000 byte cap: skipped" in notes
    assert "requirements.txt: not UTF-8, read with replacement characters" in notes
    assert [r.spec for f in facts.requirements_files for r in f.requirements][:1] == ["six==1.16"]


MALFORMED = {
    "package.json is a list": {"package.json": "[1, 2]"},
    "package.json is a string": {"package.json": '"just a string"'},
    "package.json of wrong types": {
        "package.json": '{"name": 1, "scripts": {"test": "jest"}, "devDependencies": {"jest": 5}, '
                        '"engines": [], "workspaces": {"packages": 3}, "exports": {"./x": 1}, "main": 7, '
                        '"packageManager": 1}'},
    "package.json nested deep": {"package.json": "[" * 100_000},
    "Cargo.toml of wrong types": {"Cargo.toml": 'package = 1\nfeatures = 3\ndependencies = [1]\n'
                                                '[workspace]\nmembers = "x"\npackage = "y"\n'},
    "Cargo.toml members out": {"Cargo.toml": '[workspace]\nmembers = [1, "../..", "/etc", "*", ""]\n',
                               "Cargo.lock": 'package = "x"\n'},
    "Cargo.toml workspace package": {"Cargo.toml": '[package]\nname = "r"\n[workspace]\nmembers = []\n'
                                                   'package = [1]\n[build-dependencies]\nopenssl-sys = 1\n'},
    "go.mod garbage": {"go.mod": "\x00\xff module\nrequire (\n  )\n go x y z\ntoolchain\n" * 50},
    "pom.xml malformed": {"pom.xml": "<project><modules><module>../../etc</module></modules>"},
    "pom.xml entities": {
        "pom.xml": '<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
                   '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY s SYSTEM "file:///etc/passwd">]>'
                   "<project><artifactId>&c;&s;</artifactId></project>"},
    "pom.xml of modules out": {"pom.xml": "<project><modules><module>../../..</module><module>/etc</module>"
                                          "</modules><properties/></project>"},
    "pyproject.toml of wrong types": {"pyproject.toml": 'build-system = []\ntool = 1\nproject = "x"\n',
                                      "setup.py": "x"},
    "pyproject.toml tools of wrong types": {
        "pyproject.toml": '[tool]\nmaturin = []\npytest = 1\npoetry = "x"\nsetuptools-rust = 2\n'
                          'tox = {legacy_tox_ini = 1}\n[build-system]\nrequires = "maturin"\n'},
    "setup.py nested deep": {"setup.py": "-" * 100_000 + "1", "noxfile.py": "not " * 100_000 + "x"},
    "setup.py with a NUL": {"setup.py": "setup(\x00)", "noxfile.py": "\x00"},
    "workflow YAML recursive": {"setup.py": "", ".github/workflows/ci.yml": "a: &x [*x]\njobs: &j {t: *j}\n",
                                "docker-compose.yml": "services: &s {db: *s}\n"},
    "workflow YAML nested deep": {"setup.py": "", ".github/workflows/ci.yml": "[" * 50_000},
    "TOML nested deep": {"pyproject.toml": "a = " + "[" * 50_000, "Cargo.lock": "a = " + "{b = " * 5000},
    "Pipfile.lock of wrong types": {"setup.py": "", "Pipfile.lock": '{"default": [1], "develop": {"x": 1}}'},
    "tox.ini garbage": {"tox.ini": "deps = x\n[testenv\n[a]\n[a]\n%(x)s\n", "setup.cfg": "\x00[\n"},
}


VALID_BUT_ODD = {"workflow YAML recursive"}
"""YAML anchors may make a structure contain itself: valid, read without a note, and without a loop."""


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_manifests_are_notes_never_tracebacks(tmp_path: Path, case: str) -> None:
    repo = write_tree(tmp_path / "repo", MALFORMED[case])
    facts = survey(repo)
    _plan_text(repo)
    assert facts.notes or case in VALID_BUT_ODD, "a malformed manifest says so"
