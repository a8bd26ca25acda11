"""How the grader runs a task's tests, per runner: the exact command (selection, reporting and deselection
flags included), the report format the kit parses and where the reports are. Built on the host when a task is
made (Node reads the package's scripts through the sandbox); run by envs/grading/kit/ in the task image.

    runner      command                                            parser    reports
    pytest      + `-p` guard, selection, timeout plug-ins, JUnit   junit     @REPORT_DIR@/junit.xml
    go          `go test -json` (+ -skip for deselections)         gotest    (its output)
    cargo       `cargo test` with --skip, stderr merged            libtest   (its output)
    maven       Surefire's excludes file, old reports cleared, -fae surefire  **/target/surefire-reports/TEST-*.xml
                (the three: test binaries confined by the launcher, envs/testrun/confine.py)
    node        the runner's own name filters (the selected tests   node      (its output)
                and their files, where it can: node_only.py), hidden
                files, the exit guard of node:test's children
    unittest    `-v` verbose lines, the guard's sitecustomize        unittest  (its output)
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from envs.base import Sandbox
from envs.folder import InFolder, split_folder
from envs.grading.kit.run import REPORT_DIR, RUN_DIR
from envs.grading.policy import Grading, GradingRun
from envs.spec import Deselection
from envs.testrun import cargo_runner, confine, go_runner, maven_runner, node_select, pytest_runner, unittest_runner
from envs.testrun.abilities import abilities, registered
from envs.testrun.pytest_output import TIMEOUT_ENV

IGNORE_FAILURES = "-Dmaven.test.failure.ignore=true"
_JS_FILE = re.compile(r"\.[cm]?[jt]sx?$")


class NotGradable(ValueError):
    """This runner's tests cannot be graded by id (it names no test)."""


def guard_files() -> dict[str, str]:
    """The guard of a graded Python run (envs/testrun/guard_plugin.py) in the run's folder, with the
    sitecustomize that installs it in every Python process started with GUARD_PATH and its helpers (doctests,
    child processes, threads, comparisons)."""
    return {f"{RUN_DIR}/{pytest_runner.GUARD_PLUGIN}.py": pytest_runner.GUARD_PLUGIN_SOURCE,
            f"{RUN_DIR}/{pytest_runner.GUARD_DOCTESTS}.py": pytest_runner.GUARD_DOCTESTS_SOURCE,
            f"{RUN_DIR}/{pytest_runner.GUARD_HANDOFFS}.py": pytest_runner.GUARD_HANDOFFS_SOURCE,
            f"{RUN_DIR}/{pytest_runner.GUARD_THREADS}.py": pytest_runner.GUARD_THREADS_SOURCE,
            f"{RUN_DIR}/{pytest_runner.GUARD_COMPARISONS}.py": pytest_runner.GUARD_COMPARISONS_SOURCE,
            f"{RUN_DIR}/sitecustomize.py": pytest_runner.GUARD_SITE_SOURCE}


GUARD_PATH = (f'export PYTHONPATH={RUN_DIR}"${{PYTHONPATH:+:$PYTHONPATH}}" AUTOINSTALL_REPORT_DIR={REPORT_DIR}; ')
"""The run's folder first on PYTHONPATH: its sitecustomize starts the guard before any of the agent's code."""


NODE_GUARD = "autoinstall_guard.cjs"
NODE_GUARD_SOURCE = (Path(__file__).parent / "node_guard.cjs").read_text()
NODE_GUARD_OPTIONS = f'export NODE_OPTIONS="--require={RUN_DIR}/{NODE_GUARD}${{NODE_OPTIONS:+ $NODE_OPTIONS}}"; '
"""Every node process of a graded Node run loads the guard (envs/testrun/node_guard.cjs) first: in a node:test
child, an explicit exit is refused."""


def node_guard_files() -> dict[str, str]:
    """The Node guard, with the launcher it starts the agent's child processes through (guard_handoffs.py)."""
    return {f"{RUN_DIR}/{NODE_GUARD}": NODE_GUARD_SOURCE,
            f"{RUN_DIR}/{pytest_runner.GUARD_HANDOFFS}.py": pytest_runner.GUARD_HANDOFFS_SOURCE}


def current_guards() -> dict[str, str]:
    """Every file a graded run carries to watch the agent's code (the Python guard and its sitecustomize, the
    Node guard and its launcher, the launcher confining compiled tests and its wrapper), by its path in the run's
    folder, as this version writes them."""
    return {**guard_files(), **node_guard_files(), **confine.files()}


def with_current_guards(grading: Grading) -> Grading:
    """`grading` with each guard file its record carries replaced by this version's: a task stores its run's
    files when it is made, and a guard fixed since (a cheat found, a hole closed) must reach every task graded
    or exported from now on, as the kit does (it is always this version's). Files that are not guards (the
    selection, the excludes, the timeout plug-in) stay as recorded: they describe the task. A Go, Rust or Java
    run made before its test binaries were confined is confined now (confine.py)."""
    current = current_guards()
    files = {path: current.get(path, text) for path, text in grading.run.files.items()}
    if set(files) & (set(guard_files()) - set(node_guard_files())):  # the Python guard comes whole (since: its helpers)
        files.update(guard_files())
    if f"{RUN_DIR}/{NODE_GUARD}" in files:  # so does the Node guard (since: the launcher of the agent's children)
        files.update(node_guard_files())
    run = confine.confined(grading.run.model_copy(update={"files": files}))
    if run == grading.run:
        return grading
    return grading.model_copy(update={"run": run})


def grade_pytest(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
            per_test_s: float) -> GradingRun:
    plugins = f"-p {pytest_runner.GUARD_PLUGIN} -p {pytest_runner.SELECT_PLUGIN} -p {pytest_runner.PLUGIN}"
    args = pytest_runner.pytest_args(deselected, f"{REPORT_DIR}/junit.xml", REPORT_DIR)
    run = f"{GUARD_PATH}export AUTOINSTALL_SELECT={RUN_DIR}/selected.txt; {command} {plugins} {args}"
    files = {**guard_files(),
             f"{RUN_DIR}/{pytest_runner.SELECT_PLUGIN}.py": pytest_runner.SELECT_PLUGIN_SOURCE,
             f"{RUN_DIR}/{pytest_runner.PLUGIN}.py": pytest_runner.PLUGIN_SOURCE.decode(),
             f"{RUN_DIR}/selected.txt": "".join(t + "\n" for t in selected)}
    return GradingRun(command=run, parser="junit", reports=[f"{REPORT_DIR}/junit.xml"], files=files,
                      env={TIMEOUT_ENV: f"{per_test_s:g}"})


def grade_go(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
        per_test_s: float) -> GradingRun:
    return confine.confined(GradingRun(command=go_runner.go_test_command(command, deselected), parser="gotest"))


def grade_cargo(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
           per_test_s: float) -> GradingRun:
    return confine.confined(GradingRun(command=cargo_runner.cargo_test_command(command, deselected),
                                       parser="libtest"))


def grade_maven(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
           per_test_s: float) -> GradingRun:
    files = {}
    if patterns := maven_runner.excludes(deselected):
        files[maven_runner.EXCLUDES_FILE] = "".join(p + "\n" for p in patterns)
    # Failures fail the build here (at its end: every module's tests still run), so the exit status is checked.
    run = maven_runner.maven_test_command(command, deselected).replace(f" {IGNORE_FAILURES}", " -fae")
    return confine.confined(GradingRun(command=run, parser="surefire",
                                       reports=[f"**/{maven_runner.REPORTS}/TEST-*.xml"], files=files))


def grade_node(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
          per_test_s: float) -> GradingRun:
    folder, inner = split_folder(command)
    where: Sandbox = InFolder(sandbox, folder) if folder else sandbox  # type: ignore[assignment]
    selection = node_select.select(where, inner, deselected, only=selected or None)
    run = f"cd {shlex.quote(folder)} && {selection.command}" if folder else selection.command
    return GradingRun(command=NODE_GUARD_OPTIONS + run, parser="node", env=dict(node_select.ENV),
                      files=node_guard_files())


def grade_unittest(sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
              per_test_s: float) -> GradingRun:
    return GradingRun(command=GUARD_PATH + unittest_runner.verbose_command(command), parser="unittest",
                      files=guard_files())


def grading_run(runner: str, sandbox: Sandbox, command: str, deselected: list[Deselection], selected: list[str],
                per_test_s: float = 120.0) -> GradingRun:
    """How the grader runs `command` of `runner` with `deselected` left out and `selected` scored.

    Raises:
        NotGradable: the runner gives no per-test results.
    """
    grading = abilities(runner).grading
    if grading is None:
        gradable = [name for name in registered() if abilities(name).grading is not None]
        msg = (f"the {runner} runner names no test, so a task's tests cannot be graded by id; "
               f"gradable runners: {', '.join(gradable)}")
        raise NotGradable(msg)
    return grading(sandbox, command, deselected, selected, per_test_s)


def test_files(runner: str, ids: list[str]) -> list[str]:
    """The files the test ids name, where an id names one (the runner's `test_files`): they belong to the task
    whatever the ecosystem's patterns say."""
    files = abilities(runner).test_files(ids)
    return sorted(f for f in files if f and not f.startswith("/") and ".." not in f.split("/"))


def pytest_files(ids: list[str]) -> set[str]:
    """pytest's `path::name` ids name their file; a doctest's (`pkg/mod.py::pkg.mod.func`) names a product module,
    whose docstrings the grader keeps as the task's instead (envs/grading/kit/doc_tests.py)."""
    return {test_id.split("::", 1)[0] for test_id in ids if "::" in test_id and not is_doctest(test_id)}


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def is_doctest(test_id: str) -> bool:
    """Whether a pytest id names a doctest of a Python module (`--doctest-modules`: the item is the docstring's
    dotted name, which holds the module's own name), not a test function."""
    path, _, name = test_id.partition("::")
    if not path.endswith(".py") or not _DOTTED.fullmatch(name):
        return False
    parts = path[:-3].split("/")
    module = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
    if "." not in name and module.startswith("test"):
        return False  # `tests/test_mod.py::test_mod`: a test function named like its module
    return module in name.split(".")


def node_files(ids: list[str]) -> set[str]:
    """A Node id's leading part, when it is a script's file name."""
    files = set()
    for test_id in ids:
        first = test_id.split(node_select.SEP, 1)[0]
        if node_select.SEP in test_id and _JS_FILE.search(first) and " " not in first:
            files.add(first)
    return files


def unittest_files(ids: list[str]) -> set[str]:
    """A dotted unittest id's module, as a path: the longest prefix that looks like a test module (a guess)."""
    files = set()
    for test_id in (i for i in ids if "." in i):
        parts = test_id.split("(", 1)[0].split(".")
        for i in range(len(parts) - 1, 0, -1):
            if parts[i - 1].startswith("test") or parts[i - 1].endswith("tests"):
                files.add("/".join(parts[:i]) + ".py")
                break
    return files
