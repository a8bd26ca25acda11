"""The grading record (a task's `grading`): what of an agent's change is taken, and how its tests run.

Rules come from the ecosystem (autoinstall/ecosystems/*/grading.py: test files, manifests, runner plug-ins,
build output, what shadows an import); the run from the runner (envs/testrun/grading.py: the exact command,
its report format and where its reports are); the selection from the task (FAIL_TO_PASS + PASS_TO_PASS). The
kit (envs/grading/kit/) reads `Grading.policy()` as JSON inside the task image.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

GRADING_FORMAT = "autoinstall-grading/1"
START = "/opt/autoinstall/task/start"
"""The pristine start state in a task image (root's, read-only to everyone else)."""
GRADER = "/opt/autoinstall/grader"
"""The grader in a task image: grade.py, the package autoinstall_grader, policy.json."""
TEST_USER = "agent"
"""The unprivileged user the tests run as (and Harbor's agent runs as); created in the task image."""
Parser = Literal["junit", "gotest", "libtest", "surefire", "node", "unittest"]


class NewModuleRule(BaseModel):
    """A new file with one of `suffixes` is kept only inside a folder that held `anchor` at the start."""

    model_config = ConfigDict(extra="forbid")
    suffixes: list[str]
    anchor: str
    """A file name (`__init__.py`) or, starting with a dot, a suffix (`.java`)."""
    root_ok: bool = False


class GradingRules(BaseModel):
    """What belongs to the task rather than to the agent's fix (an ecosystem's; merged for companions)."""

    model_config = ConfigDict(extra="forbid")
    protected: list[str] = Field(default_factory=list)
    """Path patterns relative to the workdir (`**`, `*`, `{a,b}`): the agent's change to them is dropped."""
    untransferred: list[str] = Field(default_factory=list)
    """Folder names, at any depth, never taken from the agent (dependencies, build output, .git)."""
    new_modules: list[NewModuleRule] = Field(default_factory=list)
    inline_tests: list[str] = Field(default_factory=list)
    """Languages whose source files hold the task's tests too ("rust": `#[cfg(test)]` items and doc tests,
    "doctest": Python's doctest examples in docstrings): the grader keeps the start's (kit/doc_tests.py)."""
    reach: list[str] = Field(default_factory=list)
    """Text no added line of the agent's product code may hold (runner internals, the grader's paths)."""
    code: list[str] = Field(default_factory=list)
    """Suffixes of the language's source files (`.py`, `.c`, ...): only such files are taken from an agent.
    Everything else (snapshots, golden files, data and text the tests may read, wherever they lie) is the
    task's; empty: no such rule."""
    code_checks: list[str] = Field(default_factory=list)
    """Languages whose added product code is also read past its spelling ("python":
    envs/grading/kit/python_reach.py, "node": js_reach.py, "java", "go" and "rust": blind_equality.py), so that
    reaching the runner by a name it does not spell, or an equality that does not look, is refused too."""
    compiled: list[str] = Field(default_factory=list)
    """Folders (`__pycache__`, `target/classes`: a name or a path's tail) of output compiled from the solved
    state: removed from the start image, so the tests build them again from the start's sources. Kept, they
    would hold the fix (to read back, or to run when the agent deletes a source file)."""

    def merged(self, other: GradingRules) -> GradingRules:
        """Both rule sets at once (a lead ecosystem and its companions)."""
        def union(a: list[Any], b: list[Any]) -> list[Any]:
            return a + [x for x in b if x not in a]
        return GradingRules(protected=union(self.protected, other.protected),
                            untransferred=union(self.untransferred, other.untransferred),
                            new_modules=union(self.new_modules, other.new_modules),
                            inline_tests=union(self.inline_tests, other.inline_tests),
                            reach=union(self.reach, other.reach),
                            code=union(self.code, other.code),
                            code_checks=union(self.code_checks, other.code_checks),
                            compiled=union(self.compiled, other.compiled))

    def in_folder(self, folder: str) -> GradingRules:
        """The rules of a project in `folder` of the checkout: its root-anchored patterns moved there, and the
        whole-tree rules (`**/...`) left as they are; what is at the checkout's root stays the task's too."""
        prefix = folder.strip("/")
        if not prefix or prefix == ".":
            return self
        moved = [p if p.startswith("**/") else f"{prefix}/{p}" for p in self.protected]
        return self.model_copy(update={"protected": self.protected + [m for m in moved if m not in self.protected]})


class GradingRun(BaseModel):
    """How the grader runs the task's tests (a runner's, envs/testrun/grading.py)."""

    model_config = ConfigDict(extra="forbid")
    command: str
    """The whole test command, selection and reporting flags included; `@REPORT_DIR@` and `@RUN_DIR@` stand
    for the run's report folder (the test user's) and its own folder (root's)."""
    parser: Parser
    reports: list[str] = Field(default_factory=list)
    """Report files: `@REPORT_DIR@/name`, or patterns relative to the workdir (Surefire's)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Written (root's, read-only to the tests) before the run: plug-ins, the selection, an excludes file."""
    env: dict[str, str] = Field(default_factory=dict)
    exit_consistent: bool = True
    """The runner's exit status says whether a test failed (a zero exit with a failure, or a non-zero one
    without, means the results do not describe the run)."""


class Grading(BaseModel):
    """THE grading of a task, every surface alike."""

    model_config = ConfigDict(extra="forbid")
    format: str = GRADING_FORMAT
    rules: GradingRules
    run: GradingRun
    selected: list[str]
    """FAIL_TO_PASS + PASS_TO_PASS: each must appear by its exact id and pass."""
    fail_at_start: list[str] = Field(default_factory=list)
    """FAIL_TO_PASS, as the task's validation saw them fail in the start state (every other selected test passed
    there). When the grader takes nothing of the agent's, the grading tree is that state: it is graded 0 with
    these outcomes, and no test runs (empty, as in tasks made before 2026-12-07: the tests run)."""
    workdir: str = "/workspace"
    user: str = TEST_USER
    timeout_s: float = 1800.0

    def policy(self) -> dict[str, Any]:
        """The JSON the kit reads (envs/grading/kit/grade.py)."""
        return {"format": self.format, "workdir": self.workdir, "start": START, "user": self.user,
                "timeout_s": self.timeout_s, "selected": self.selected,
                "fail_at_start": self.fail_at_start,
                **self.rules.model_dump(mode="json"), **self.run.model_dump(mode="json")}
