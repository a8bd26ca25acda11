"""The test command (from CI, tox, nox, make or the defaults) and the checks that verify an install."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from autoinstall.ecosystems.python.survey.facts import RepoFacts
from envs.spec import Check, Evidence

DROP_WITH_VALUE = {
    "-n",
    "--numprocesses",
    "--dist",
    "--tb",
    "--durations",
    "--color",
    "--cov-report",
    "--cov-config",
    "--junitxml",
    "--junit-xml",
    "--basetemp",
    "--maxfail",
    "--html",
    "--cov-fail-under",
    "--log-file",
    "--result-log",
    "--reruns",
    "--timeout",
    "--rootdir",
}
KEEP_WITH_VALUE = {
    "-m",
    "-k",
    "-p",
    "-c",
    "-o",
    "-W",
    "--ignore",
    "--deselect",
    "--import-mode",
    "--confcutdir",
    "--ignore-glob",
    "--override-ini",
    "--pyargs",
}
SOURCE_ORDER = {"ci": 2, "tox": 0, "nox": 1, "hatch": 3, "make": 4, "just": 4, "poe": 5, "docs": 6}
OTHER_RUNNER = re.compile(
    r"-m (unittest|testtools\.run|twisted\.trial|subunit\.run|nose2?)\b|\bnosetests\b|"
    r"\bstestr\b|\btrial\b|\bsetup\.py test\b|\bpython3? (\S+\.py|-m tests?)(\s|$)"
)


@dataclass
class TestPlan:
    """The chosen runner, command, its evidence, and notes about the choice."""

    runner: str = "none"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    """pytest arguments shared by the collect check and the test command."""
    evidence: Evidence | None = None
    notes: list[str] = field(default_factory=list)


def _candidates(facts: RepoFacts) -> list[tuple[str, Evidence | None]]:
    """Test commands in order of trust: the test env of tox/nox, CI, hatch, make, docs."""
    found: list[tuple[int, str, Evidence | None]] = []
    for env in facts.task_envs:
        if env.test_like:
            rank = SOURCE_ORDER[env.tool] + (
                0 if env.name in ("testenv", "tests", "test", "hatch-test") else 0.5
            )
            found += [(rank, c, env.evidence) for c in env.commands]  # type: ignore[misc]
    found += [(SOURCE_ORDER[c.source], c.text, c.evidence) for c in facts.commands if c.purpose == "test"]
    found.sort(key=lambda item: item[0])
    return [
        (text, evidence)
        for _, text, evidence in found
        if not re.match(r"^(tox|nox|make|just|poe|hatch)\b", text)
    ]


def _pytest_args(words: list[str], repo: Path, test_dirs: list[str]) -> list[str]:
    """The arguments worth keeping from a project's pytest command (no coverage, xdist, reports)."""
    kept, i = [], 0
    while i < len(words):
        word = words[i]
        option = word.split("=", 1)[0]
        takes_value = "=" not in word and i + 1 < len(words)
        if option in DROP_WITH_VALUE or option.startswith("--cov"):
            i += 1
            if takes_value and (
                option in DROP_WITH_VALUE
                or (option == "--cov" and not words[i].startswith("-") and words[i] not in test_dirs)
            ):
                i += 1
            continue
        if option in KEEP_WITH_VALUE:
            kept += [word, words[i + 1]] if takes_value else [word]
            i += 2 if takes_value else 1
            continue
        if re.fullmatch(
            r"-(v+|q+|x|s|l|r\w+|n\w+)|--(verbose|quiet|exitfirst|showlocals|no-header|.*color.*)", word
        ):
            i += 1
            continue
        if (
            word.startswith("-")
            or "{" not in word
            and "$" not in word
            and (repo / word.split("::")[0]).exists()
        ):
            kept.append(word)
        i += 1
    return kept


def _pytest_words(command: str) -> list[str] | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word in ("pytest", "py.test") or word.endswith("/pytest"):
            return words[i + 1 :]
        if word == "-m" and i + 1 < len(words) and words[i + 1] == "pytest":
            return words[i + 2 :]
    return None


def _default_args(facts: RepoFacts, repo: Path) -> list[str]:
    if facts.pytest and facts.pytest.testpaths:
        return []
    dirs = [d for d in facts.tests.dirs if d != "." and (repo / d).is_dir()]
    return sorted({d.split("/")[0] for d in dirs} if len(dirs) > 3 else dirs)


def choose_tests(facts: RepoFacts, repo: Path) -> TestPlan:
    """Runner and command: the project's pytest invocation if it has one, else `python -m pytest`."""
    if not facts.tests.files:
        note = (
            "no test modules found (test_*.py, *_test.py, tests/test*.py): nothing can verify "
            "the environment beyond imports"
        )
        return TestPlan(notes=[note])
    plan = TestPlan(runner="pytest")
    for text, evidence in _candidates(facts):
        words = _pytest_words(text)
        if words is not None:
            plan.args = _pytest_args(words, repo, facts.tests.dirs)
            plan.evidence = evidence
            plan.notes.append(f"test command adapted from `{text}`")
            break
        other = OTHER_RUNNER.search(text)
        if other:
            script = other.group(2)
            if script and not facts.tests.load_tests and "setup.py" not in text:
                plan.runner, plan.command, plan.evidence = "custom", text, evidence
                plan.notes.append(
                    f"the project runs its tests with its own script `{text}`; the verifier has "
                    "only its exit status"
                )
                return plan
            if facts.tests.load_tests:
                plan.runner, plan.command, plan.evidence = "unittest", text, evidence
                plan.notes.append(
                    f"tests use unittest's load_tests protocol, which pytest ignores: running `{text}`"
                )
                return plan
            plan.evidence = evidence
            plan.notes.append(
                f"the project runs `{text}`; pytest runs these unittest-style tests too and reports "
                "each test, so the plan uses pytest"
            )
            break
    if not plan.args or not any(not a.startswith("-") for a in plan.args):
        plan.args += _default_args(facts, repo)
    if facts.tests.file_pattern != "test_*.py" and not any("python_files" in a for a in plan.args):
        plan.args += ["-o", "python_files=test*.py *_test.py"]
    plan.command = " ".join(["python", "-m", "pytest", *(shlex.quote(a) for a in plan.args)])
    return plan


def checks(facts: RepoFacts, tests: TestPlan) -> list[Check]:
    """Imports of the project's packages, test collection, the tests, and console scripts' --help."""
    found = [
        Check(
            name=f"import {pkg}",
            kind="import",
            command=f"python -c 'import {pkg}'",
            why=f"the project's package {pkg} imports",
            required=i == 0,
        )
        for i, pkg in enumerate(facts.packages[:3])
    ]
    if tests.runner == "pytest":
        collect = " ".join(
            ["python", "-m", "pytest", "--collect-only", "-q", *(shlex.quote(a) for a in tests.args)]
        )
        found.append(
            Check(
                name="collect tests",
                kind="collect",
                command=collect,
                why="pytest can import every test module",
            )
        )
    elif tests.runner == "unittest":
        start = next((d for d in facts.tests.dirs if d != "."), ".")
        found.append(
            Check(
                name="collect tests",
                kind="collect",
                why="unittest discovers at least one test",
                command=f"python -c 'import sys, unittest; s = unittest.defaultTestLoader.discover("
                f'"{start}", top_level_dir="."); sys.exit(0 if s.countTestCases() else 1)\'',
            )
        )
    if tests.command:
        found.append(
            Check(name="tests", kind="tests", command=tests.command, why="the project's own test suite")
        )
    for entry in facts.entry_points[:3]:
        found.append(
            Check(
                name=f"{entry.name} --help",
                kind="entrypoint",
                command=f"{entry.name} --help",
                why=f"console script declared in {entry.evidence.file}",
                required=False,
            )
        )
    return found
