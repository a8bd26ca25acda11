"""The test command (from CI, tox, nox, make or the defaults) and the checks that verify an install."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from autoinstall.ecosystems.python.proposal.runners import discover, script_subcommands, with_test_subcommand
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.python.survey.tasks import expand_envlist
from autoinstall.ecosystems.repofiles import RepoFiles, kind_of
from envs.spec import Check, Evidence
from envs.testrun.unittest_runner import listing_check

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
    r"\bstestr\b|\btrial\b|\bsetup\.py test\b|(?:\bpython3? |(?:^|(?<=[\s;&]))\./(?=\S+\.py))(\S+\.py|-m tests?)(\s|$)"
)
"""Another runner than pytest, or the project's own script (group 2: `python runtests.py`, `./run.py`)."""


@dataclass
class TestPlan:
    """The chosen runner, command, its evidence, and notes about the choice."""

    runner: str = "none"
    command: str | None = None
    args: list[str] = field(default_factory=list)
    """pytest arguments shared by the collect check and the test command."""
    evidence: Evidence | None = None
    notes: list[str] = field(default_factory=list)


SIDE_WORDS = {"docs", "doc", "sphinx", "lint", "linters", "linting", "flake8", "pylint", "ruff", "mypy", "typing",
              "types", "type", "typecheck", "pyright", "pytype", "stubtest", "bench", "benchmark", "benchmarks",
              "perf", "performance", "codspeed", "asv", "report", "clean", "build", "release", "publish",
              "packaging", "format", "fmt", "black", "isort", "style", "pep8", "precommit", "spell", "spelling",
              "linkcheck", "manifest", "readme", "bandit", "safety", "audit", "upload", "deploy"}
"""Words in a tox/nox/hatch env, CI job or make target name that mark a side suite, not the project's tests."""
SIDE_COMMAND = re.compile(r"--benchmark-only|--benchmark-enable|--codspeed|\bsphinx-build\b|\bmypy\b|\bflake8\b"
                          r"|\bcoverage (?:report|combine|html|xml|erase)\b|\bpre-commit\b")
SIDE_PATH = re.compile(r"^(?:\./)?(?:docs?|bench\w*|perf\w*|examples?)(?:/|$)")
DEFAULT_NAMES = ("testenv", "tests", "test", "hatch-test")
CI_ENVS = re.compile(r"\b(?:tox|nox)\b.*?\s(?:-e|--envlist|-s|--sessions?)[\s=]+(\S+)")


def side_name(name: str) -> bool:
    """True for an env, CI job or target named for a side suite (`docs`, `py311-lint`, `coverage-report`)."""
    return any(p in SIDE_WORDS for p in re.split(r"[-_.:\s]+", name.lower()))


def side_command(command: str) -> bool:
    """True for a command that runs a side suite: benchmarks, docs, type checks, coverage reports, or a
    pytest run whose only paths are docs/, benchmarks/ or examples/."""
    if SIDE_COMMAND.search(command):
        return True
    words = _pytest_words(command) or []
    paths = [w for i, w in enumerate(words) if not w.startswith("-")
             and not (i and words[i - 1] in KEEP_WITH_VALUE | DROP_WITH_VALUE)]
    return bool(paths) and all(SIDE_PATH.match(w) for w in paths)


def is_side(name: str, commands: list[str]) -> bool:
    """True for a side suite, by its name or what its commands run."""
    return side_name(name) or any(side_command(c) for c in commands)


def _ci_envs(facts: RepoFacts) -> set[str]:
    """tox envs and nox sessions the CI runs by name (`tox -e py,unit` -> py, unit)."""
    names: set[str] = set()
    for command in facts.commands:
        if command.source == "ci" and (m := CI_ENVS.search(command.text)) and "$" not in m[1]:
            names.update(expand_envlist(m[1]))
    return names


def _candidates(facts: RepoFacts) -> list[tuple[str, Evidence | None]]:
    """Test commands in order of trust: the default test env of tox/nox (envlist, what CI runs), CI, hatch,
    make, docs; never a side suite (benchmarks, docs, lint, type checks)."""
    found: list[tuple[float, str, Evidence | None]] = []
    ci_envs = _ci_envs(facts)
    envs = [e for e in facts.task_envs if e.test_like and not side_name(e.name)]
    tools_with_default = {e.tool for e in envs if e.default or e.name in ci_envs}
    for env in envs:
        if env.tool in tools_with_default:
            main = env.default or env.name in ci_envs
        else:
            main = env.name in DEFAULT_NAMES
        found += [(SOURCE_ORDER[env.tool] + (0 if main else 0.5), c, env.evidence) for c in env.commands
                  if not side_command(c)]  # one env's factor-conditional commands may mix suites
    # A CI job's name says little (`build` jobs run tests); a make/just/poe target's says what it is for.
    found += [(SOURCE_ORDER[c.source], c.text, c.evidence) for c in facts.commands if c.purpose == "test"
              and not side_command(c.text) and not (c.source != "ci" and side_name(c.context))]
    found.sort(key=lambda item: item[0])
    return [
        (text, evidence)
        for _, text, evidence in found
        if not re.match(r"^(tox|nox|make|just|poe|hatch)\b", text)
    ]


RUNS_TESTS = re.compile(r"\b(unittest|pytest|doctest|testtools|nose2?|"
                        r"TestRunner|TestLoader|TestSuite|TestProgram)\b")


def is_test_script(repo: Path, script: str) -> bool:
    """True when `python SCRIPT` runs tests: its code uses a test framework, or (when it has no code to
    read yet) its path says test. A code generator or a packaging helper is not one."""
    if script.startswith("-m"):
        return True
    named = bool(re.search(r"test", script, re.IGNORECASE))
    text = RepoFiles(repo).text(script)  # nothing across a link out of the checkout, no FIFO, under a cap
    if text is None:
        return named  # not in the checkout (an earlier step makes it): its path is all there is
    text = text[:200_000]
    return bool(RUNS_TESTS.search(text)) or (named and not text.strip())


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
            r"-(v+|q+|x|s|l|[vqxsl]{2,}|r\w+|n\w+)|--(verbose|quiet|exitfirst|showlocals|no-header|.*color.*)", word
        ):
            i += 1
            continue
        if (
            word.startswith("-")
            or "{" not in word
            and "$" not in word
            and kind_of(repo, repo / word.split("::")[0]) in ("file", "dir")
        ):
            kept.append(word if word.startswith("-") or word == "./" else word.removeprefix("./"))
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
    dirs = [d for d in facts.tests.dirs if d != "." and kind_of(repo, repo / d) == "dir"]
    return sorted({d.split("/")[0] for d in dirs} if len(dirs) > 3 else dirs)


STOPS_EARLY = re.compile(r"-x|--exitfirst|--sw|--stepwise|--sw-skip|--stepwise-skip|--maxfail(=\d+)?|-pno:junitxml")
"""addopts the verifier cannot run with: they stop the run at the first failure (so later tests never report),
or (`-p no:junitxml`) turn off the JUnit report that per-test results are read from."""


def _addopts_back(facts: RepoFacts) -> tuple[list[str], list[str]]:
    """`-o addopts=...` without what STOPS_EARLY names (the rest of the project's addopts kept as they are),
    and the options it leaves out; nothing when the addopts have none of them."""
    if facts.pytest is None or not facts.pytest.addopts:
        return [], []
    try:
        words = shlex.split(facts.pytest.addopts)
    except ValueError:
        return [], []
    kept, dropped, i = [], [], 0
    while i < len(words):
        word = words[i]
        if word == "-p" and words[i + 1:i + 2] == ["no:junitxml"] or word == "--maxfail" and i + 1 < len(words):
            dropped.append(f"{word} {words[i + 1]}")
            i += 2
            continue
        if STOPS_EARLY.fullmatch(word):
            dropped.append(word)
        else:
            kept.append(word)
        i += 1
    return (["-o", "addopts=" + shlex.join(kept)], dropped) if dropped else ([], [])


DOCTESTS = re.compile(r"--doctest-(?:modules|glob)\b")
"""pytest options that collect doctests: the project's modules (or text files) are tests too."""


def choose_tests(facts: RepoFacts, repo: Path) -> TestPlan:
    """Runner and command: the project's pytest invocation if it has one, else `python -m pytest`. A project
    without test modules whose pytest configuration collects doctests has tests all the same."""
    if not facts.tests.files and not (facts.pytest and DOCTESTS.search(facts.pytest.addopts or "")):
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
        script = other.group(2) if other else None
        if script and not script.endswith("setup.py") and not is_test_script(repo, script):
            plan.notes.append(f"`{text}` runs a helper script, not a test runner: not the test command")
            continue
        if other:
            script = other.group(2)
            if script and not facts.tests.load_tests and "setup.py" not in text:
                command, why = with_test_subcommand(text, script, script_subcommands(repo, script))
                plan.notes += [why] if why else []
                if command is None:
                    continue
                plan.runner, plan.command, plan.evidence = "custom", command, evidence
                plan.notes.append(
                    f"the project runs its tests with its own script `{command}`; the verifier reads its "
                    "per-test lines when it prints unittest's verbose ones, else its summary, and its exit status"
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
            if (discovered := discover(text, repo)) is not None:  # the same folder and file names
                start, pattern = discovered
                folders = [start] if start != "." else _default_args(facts, repo)
                plan.args = [*folders, "-o", f"python_files={pattern}"]
                plan.notes.append(f"pytest collects what its discovery does: {shlex.join(plan.args)}")
            break
    if not plan.args or not any(not a.startswith("-") for a in plan.args):
        plan.args += _default_args(facts, repo)
    if facts.tests.file_pattern != "test_*.py" and not any("python_files" in a for a in plan.args):
        plan.args += ["-o", "python_files=test*.py *_test.py"]
    override, dropped = _addopts_back(facts)
    if override:
        plan.args += override
        plan.notes.append(f"{facts.pytest.file if facts.pytest else 'the'} addopts have {', '.join(dropped)}, "
                          "which stop the run at the first failure or turn off pytest's JUnit report (-p no:junitxml) "
                          "that per-test results are read from: the test command overrides addopts without them")
    plan.command = " ".join(["python", "-m", "pytest", *(shlex.quote(a) for a in plan.args)])
    return plan


def import_checks(packages: list[str]) -> list[Check]:
    """Import checks of the project's first packages; only a public one (no leading underscore) is ever
    required. A private package is often the shim of an optional compiled extension (`_speedups/__init__.py`
    that raises ImportError when the extension was not built): its check only records whether it was built."""
    public = [p for p in packages if not p.startswith("_")]
    private = [p for p in packages if p.startswith("_")]
    found = [Check(name=f"import {pkg}", kind="import", command=f"python -c 'import {pkg}'",
                   why=f"the project's package {pkg} imports", required=i == 0)
             for i, pkg in enumerate(public[:3])]
    return found + [Check(name=f"import {pkg}", kind="import", command=f"python -c 'import {pkg}'", required=False,
                          why=f"{pkg} is private (often an optional compiled extension's shim): whether it imports "
                              "is recorded, it fails nothing")
                    for pkg in private[:max(0, 3 - len(found))]]


def _discover_check(facts: RepoFacts, repo: Path) -> Check:
    """unittest's discovery of the first test folder, from the top it imports from: the repository when the
    folder is a package, else the folder itself (as `python -m unittest discover -s FOLDER` does)."""
    start = next((d for d in facts.tests.dirs if d != "."), ".")
    top = "." if start == "." or kind_of(repo, repo / start / "__init__.py") == "file" else start
    loader = f"unittest.defaultTestLoader.discover({start!r}, top_level_dir={top!r})"
    return Check(name="collect tests", kind="collect", why="unittest discovers at least one test",
                 command=shlex.join(["python", "-c", f"import sys, unittest; s = {loader}; "
                                                     "sys.exit(0 if s.countTestCases() else 1)"]))


def checks(facts: RepoFacts, tests: TestPlan, repo: Path) -> list[Check]:
    """Imports of the project's packages, test collection, the tests, and console scripts' --help."""
    found = import_checks(facts.packages)
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
    elif tests.runner == "unittest" and tests.command and (listing := listing_check(tests.command)):
        found.append(Check(name="collect tests", kind="collect", command=listing,
                           why="the project's unittest runner lists at least one test"))
    elif tests.runner == "unittest":
        found.append(_discover_check(facts, repo))
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
