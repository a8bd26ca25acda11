"""Which interpreter a plan asks for: requires-python, .python-version, CI matrices, tox/nox, classifiers, the
nearest buildable version, the failure when none fits, and the switch repair's nearest version."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.proposal.interpreter import (
    NoInterpreterError,
    choose_python,
    python_hints,
    switch_target,
)
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.ecosystems.python.survey.facts import LockFile
from autoinstall.options import BuildOptions
from autoinstall.plan.models import get_model
from autoinstall.plan.propose import propose
from autoinstall.survey import survey
from envs.hostfacts import buildable_pythons, python_patch
from envs.spec import Evidence, Plan, Repair, Step

ALL = ("3.11", "3.13", "3.9", "3.12", "3.10", "3.8")
"""What a host with CPython builds of 3.8, 3.10 and 3.12 offers (buildable_pythons' order)."""


@pytest.fixture
def host_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake host builds of 3.7 (too old), 3.8, 3.10 (two patch releases) and 3.12."""
    root = tmp_path / "builds"
    for full in ("3.7.16", "3.8.18", "3.10.2", "3.10.13", "3.12.1"):
        xy = full.rsplit(".", 1)[0]
        (root / full / "bin").mkdir(parents=True)
        (root / full / "bin" / f"python{xy}").write_text("elf")
        (root / full / "lib" / f"python{xy}").mkdir(parents=True)
        (root / full / "lib" / f"python{xy}" / "os.py").write_text("")
    monkeypatch.setenv("AUTOINSTALL_PYTHON_BUILDS", str(root))
    return root


def _repo(root: Path, files: dict[str, str], requires: str | None = None) -> Path:
    """A project; `files["pyproject.toml"]` is appended to its [project] table."""
    project = '[project]\nname = "p"\nversion = "1"\n' + (f'requires-python = "{requires}"\n' if requires else "")
    for name, text in {**files, "pyproject.toml": project + files.get("pyproject.toml", "")}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _choose(root: Path, pythons: tuple[str, ...] = ALL) -> tuple[str, list[str], list[str]]:
    choice = choose_python(survey(root), root, pythons)
    return choice.python, choice.notes, [f"{e.file}:{e.line}" for e in choice.evidence]


def test_host_builds_join_debian_interpreters_newest_first(host_builds: Path) -> None:
    if not PythonEcosystem().toolchains[3:]:
        pytest.skip("this host is not Debian: its builds are not offered")
    assert buildable_pythons() == list(ALL)
    assert PythonEcosystem().toolchains == ALL
    assert python_patch("3.10") == "3.10.13" and python_patch("3.11") == "3.11.2" and python_patch("3.7") == "3.7.0"


@pytest.mark.parametrize(("requires", "python", "noted"), [
    (None, "3.11", False),
    (">=3.8", "3.11", False),
    (">=3.12", "3.12", True),
    (">=3.8,<3.11", "3.10", True),
    ("~=3.8.0", "3.8", True),
    (">=3.13", "3.13", True),
])
def test_requires_python_alone_picks_the_allowed_version_nearest_the_default(
        tmp_path: Path, host_builds: Path, requires: str | None, python: str, noted: bool) -> None:
    chosen, notes, evidence = _choose(_repo(tmp_path, {}, requires))
    assert chosen == python
    assert any("requires-python" in n for n in notes) == noted
    assert evidence == (["pyproject.toml:4"] if requires else [])


def test_python_version_file_wins_and_is_the_evidence(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path, {".python-version": "# pinned\n3.12.1\n",
                            "setup.cfg": "[metadata]\nclassifiers =\n  Programming Language :: Python :: 3.9\n"})
    assert _choose(root) == ("3.12", ["Python 3.12: .python-version:2 names 3.12"],
                             [".python-version:2"])


@pytest.mark.parametrize(("name", "text", "line"), [
    (".tool-versions", "nodejs 20.1.0\npython 3.12.1 3.11.7\n", 2),
    ("runtime.txt", "python-3.10.13\n", 1),
    ("Pipfile", '[packages]\nattrs = "*"\n\n[requires]\npython_version = "3.8"\n', 5),
])
def test_other_pins_of_the_developers_interpreter(tmp_path: Path, host_builds: Path, name: str, text: str,
                                                  line: int) -> None:
    python, notes, evidence = _choose(_repo(tmp_path, {name: text}))
    assert evidence == [f"{name}:{line}"] and notes[0].startswith(f"Python {python}: {name}:{line} names")
    assert python == {".tool-versions": "3.12", "runtime.txt": "3.10", "Pipfile": "3.8"}[name]


def test_a_lock_compiled_for_one_interpreter(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path, {"requirements/test-cp312.txt": "pytest==8.3.3\n"})
    facts = survey(root)
    facts.locks = [LockFile(path="requirements/test-cp312.txt", kind="pip-tools", python="3.12",
                            evidence=Evidence(file="requirements/test-cp312.txt"))]
    choice = choose_python(facts, root, ALL)
    assert choice.python == "3.12" and choice.notes[0].startswith("Python 3.12: lock file (requirements/test-cp312.txt) names 3.12")


def test_a_version_nobody_can_build_gets_the_nearest_allowed_one(tmp_path: Path, host_builds: Path) -> None:
    python, notes, _ = _choose(_repo(tmp_path, {".python-version": "3.14\n"}))
    assert python == "3.13" and "nearest" in notes[0]
    python, notes, _ = _choose(_repo(tmp_path / "b", {".python-version": "3.10\n"}), ("3.11", "3.13", "3.9"))
    assert python == "3.11"  # 3.9 and 3.11 are as near; the preferred one wins


def test_ci_matrix_inline_and_as_a_block_list(tmp_path: Path, host_builds: Path) -> None:
    inline = "jobs:\n  t:\n    strategy:\n      matrix:\n        python-version: ['3.8', '3.9', 'pypy-3.10']\n"
    root = _repo(tmp_path / "inline", {".github/workflows/ci.yml": inline})
    assert _choose(root)[0] == "3.9"  # of the versions CI tests, the nearest to 3.11
    block = "jobs:\n  t:\n    strategy:\n      matrix:\n        python-version:\n          - \"3.12\"\n" \
            "          - \"3.13\"\n    steps:\n      - uses: actions/setup-python@v5\n" \
            "        with:\n          python-version: ${{ matrix.python-version }}\n"
    root = _repo(tmp_path / "block", {".github/workflows/test.yaml": block})
    python, _, evidence = _choose(root)
    assert python == "3.12" and evidence[0] == ".github/workflows/test.yaml:5"
    assert [h.versions for h in python_hints(root)] == [["3.12", "3.13"]]


def test_tox_envlist_and_nox_sessions(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path / "tox", {"tox.ini": "[tox]\nenvlist = py3{8,9,10}-unit, lint\n"})
    assert _choose(root)[:3:2] == ("3.10", ["tox.ini:2"])
    nox = "import nox\n\n@nox.session(python=['3.12', '3.13'])\ndef tests(session):\n    pass\n"
    assert _choose(_repo(tmp_path / "nox", {"noxfile.py": nox}))[0] == "3.12"


def test_classifiers_prefer_the_default_when_they_name_it(tmp_path: Path, host_builds: Path) -> None:
    many = 'classifiers = [' + ", ".join(f'"Programming Language :: Python :: 3.{m}"' for m in range(8, 13)) + "]\n"
    assert _choose(_repo(tmp_path / "many", {"pyproject.toml": many}))[0] == "3.11"
    one = 'classifiers = ["Programming Language :: Python :: 3.10"]\n'
    python, notes, evidence = _choose(_repo(tmp_path / "one", {"pyproject.toml": one}))
    assert (python, evidence) == ("3.10", ["pyproject.toml:4"]) and "classifiers" in notes[0]


def test_requires_python_bounds_the_hints(tmp_path: Path, host_builds: Path) -> None:
    old = 'classifiers = ["Programming Language :: Python :: 3.8", "Programming Language :: Python :: 3.9"]\n'
    python, notes, evidence = _choose(_repo(tmp_path, {"pyproject.toml": old}, ">=3.12"))
    assert python == "3.12" and "nearest" in notes[0] and "excludes 3.11" in notes[1]
    assert evidence == ["pyproject.toml:5", "pyproject.toml:4"]


def test_no_interpreter_satisfies_requires_python_names_what_is_available(tmp_path: Path,
                                                                          host_builds: Path) -> None:
    root = _repo(tmp_path, {}, ">=3.14")
    with pytest.raises(NoInterpreterError, match=r"'>=3\.14' \(pyproject\.toml:4\) allows none .*: "
                                                 r"3\.8, 3\.9, 3\.10, 3\.11, 3\.12, 3\.13\. Add a CPython build"):
        _choose(root)
    with pytest.raises(NoInterpreterError, match=r"3\.9, 3\.11, 3\.13\."):
        get_model("embedded", pythons=("3.11", "3.13", "3.9")).propose(survey(root), root)


def test_the_embedded_plan_records_choice_and_evidence(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path, {".python-version": "3.10\n", "p/__init__.py": ""}, ">=3.8")
    plan = get_model("embedded", pythons=ALL).propose(survey(root), root)
    assert plan.python == "3.10"
    assert "Python 3.10: .python-version:1 names 3.10" in plan.notes


@pytest.mark.parametrize(("complaint", "current", "tried", "expected"), [
    (">=3.12", "3.11", [], "3.12"),
    (">=3.12", "3.11", ["3.12"], "3.13"),
    ("<3.11", "3.13", [], "3.10"),
    (">=3.7,<3.10", "3.11", [], "3.9"),
    ("", "3.11", [], "3.12"),
    (">=3.14", "3.11", [], None),
])
def test_switch_goes_to_the_nearest_version_the_complaint_allows(
        host_builds: Path, complaint: str, current: str, tried: list[str], expected: str | None) -> None:
    assert switch_target(complaint, current, list(ALL), tried) == expected


def test_switch_repair_from_an_installer_complaint(host_builds: Path) -> None:
    out = "× The current Python version (3.11.2) does not satisfy Python>=3.12"
    step = Step(command="uv pip install -e .", why="the project", kind="project")

    def ctx(python: str, tried: list[Repair]) -> RepairContext:
        return RepairContext(plan=Plan(), failing=step, phase="install", output=out, diagnosis=diagnose(out),
                             python=python, available_pythons=list(ALL), tried=tried)

    first = repair(ctx("3.11", []))
    assert first is not None and (first.kind, first.python) == ("switch_python", "3.12")
    assert "nearest to 3.11" in first.reason
    again = repair(ctx("3.12", [first]))
    assert again is not None and again.python == "3.13"


def test_the_312_fixture_plans_for_312(host_builds: Path) -> None:
    root = Path(__file__).parents[1] / "fixtures" / "repos" / "requires_python_312"
    plan = get_model("embedded").propose(survey(root), root)
    assert plan.python == "3.12"
    assert plan.notes[0] == "Python 3.12: classifiers (pyproject.toml:9) names 3.12"


def test_malformed_files_give_no_hint_and_no_crash(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path, {"tox.ini": "[tox\nenvlist = py312\n", "Pipfile": "[requires\npython_version = '3.8'\n",
                            ".python-version": "system\n", ".github/workflows/ci.yml": "python-version: ${{ x }}\n",
                            "noxfile.py": "@nox.session\ndef t(s): pass\n"})
    assert python_hints(root) == []
    assert _choose(root)[:2] == ("3.11", [])


def test_a_forced_python_wins_over_requires_python(tmp_path: Path, host_builds: Path) -> None:
    root = _repo(tmp_path, {".python-version": "3.13\n"}, ">=3.14")
    with pytest.raises(NoInterpreterError):  # not forced: the failure names what is available
        propose(root, BuildOptions())
    model, plan = propose(root, BuildOptions(python="3.9"))
    assert model.name == "embedded" and plan.python == "3.9"
    assert "Python 3.9: forced by --python; requires-python '>=3.14' (pyproject.toml:4) does not allow it" in \
        plan.notes[0]
    assert not any(".python-version" in n for n in plan.notes)  # the hints no longer choose


def test_a_forced_python_requires_python_allows_is_noted_as_forced(tmp_path: Path, host_builds: Path) -> None:
    python, notes, evidence = _choose(_repo(tmp_path, {".python-version": "3.13\n"}, ">=3.8"), ("3.10",))
    assert (python, notes, evidence) == ("3.10", ["Python 3.10: forced by --python"], ["pyproject.toml:4"])
    plan = get_model("embedded", pythons=ALL, python="3.12").propose(survey(tmp_path), tmp_path)
    assert plan.python == "3.12" and "Python 3.12: forced by --python" in plan.notes


def test_a_forced_python_is_never_switched_by_a_repair(host_builds: Path) -> None:
    out = "× The current Python version (3.11.2) does not satisfy Python>=3.12"
    context = RepairContext(plan=Plan(ecosystem="python"), failing=Step(command="uv pip install -e .", why="p",
                                                                      kind="project"),
                            phase="install", output=out, diagnosis=diagnose(out), python="3.11",
                            available_pythons=list(ALL))
    switched = get_model("embedded", pythons=ALL).repair(context)
    assert switched is not None and (switched.kind, switched.python) == ("switch_python", "3.12")
    forced = get_model("embedded", pythons=ALL, python="3.11").repair(context)
    assert forced is None or forced.kind != "switch_python"
