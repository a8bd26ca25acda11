"""THE task record: a verified environment plus a goal a trainer can score.

A task is a bug applied to the environment's repository (from its history or a mutation) and the tests that
tell it is fixed. The task generator writes these; the task store, exports (envs/export/) and
the runtime (envs/runtime/) read them. Pydantic models only, like envs/spec.py, so every layer can import it.

    bug state     = environment image + `bug_patch` applied to WORKDIR
    solved state  = bug state + `gold_patch` applied (== the environment's verified tree)
    reward        = every FAIL_TO_PASS and every PASS_TO_PASS test passes, graded on the start state plus the
                    agent's change to product code, in a container the agent never touched (envs/grading/)
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.grading.policy import Grading

TASK_FORMAT = "autoinstall-task/1"
TaskSource = Literal["history", "mutation", "combined"]
"""history: a past commit reversed; mutation: one tree-sitter rewrite; combined: 2-4 validated bugs at once."""
PartSource = Literal["history", "mutation"]
StatementStyle = Literal["tests", "issue", "terse"]
STATEMENT_STYLES: tuple[StatementStyle, ...] = ("tests", "issue", "terse")
"""tests: the failing test ids and what they report; issue: a user's report of the symptom in prose (no test
id, no failure output, no code of the fix); terse: one or two lines, as a hurried developer writes."""
Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")


class MutationInfo(BaseModel):
    """How a mutation task's bug was made (tree-sitter rewrite of one function)."""

    model_config = ConfigDict(extra="forbid")
    operator: str
    """e.g. "flip_comparison", "off_by_one", "swap_operands", "remove_statement", "change_constant"."""
    file: str
    """Repository-relative path of the mutated file."""
    function: str
    """Qualified name of the mutated function."""
    line: int


class HistoryInfo(BaseModel):
    """Which commit of the repository's history a history task mirrors."""

    model_config = ConfigDict(extra="forbid")
    commit: str
    """The commit whose source change is reversed to make the bug."""
    message: str = ""


class TaskPart(BaseModel):
    """One of the bugs a combined task applies together (each was validated as a task of its own)."""

    model_config = ConfigDict(extra="forbid")
    kind: PartSource
    files: list[str] = Field(default_factory=list)
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    """The tests this bug alone makes fail."""
    gold_patch: str = ""
    """What fixes this bug alone (applied on the task's bug state, the other parts stay)."""
    mutation: MutationInfo | None = None
    history: HistoryInfo | None = None


class Statements(BaseModel):
    """The problem statement in each style (envs.task.STATEMENT_STYLES); "" when not written."""

    model_config = ConfigDict(extra="forbid")
    tests: str = ""
    issue: str = ""
    terse: str = ""


class StatementCheck(BaseModel):
    """The leak check of one statement: no line of the gold patch, and (issue, terse) no test id."""

    model_config = ConfigDict(extra="forbid")
    style: StatementStyle
    passed: bool
    leaks: list[str] = Field(default_factory=list)
    """What leaked, e.g. `gold line: return high`, `test id: tests/t.py::test_f`."""
    writer: str = "embedded"
    """Who wrote the statement: `embedded` (templates) or `openai:NAME` (a chat model)."""
    note: str = ""
    """e.g. why the model's text was replaced by the template's."""


class TaskFeatures(BaseModel):
    """What makes a task hard, recorded when it is made; `Task.difficulty` is derived from these."""

    model_config = ConfigDict(extra="forbid")
    fix_files: int = 0
    fix_lines: int = 0
    failing_tests: int = 0
    changed_functions: list[str] = Field(default_factory=list)
    """`file::qualified.name` of the functions the fix changes (from tree-sitter)."""
    tests_name_function: bool = False
    """A failing test's id or body names a changed function."""
    call_distance: int | None = None
    """Calls from the nearest failing test to a changed function (1: the test calls it); None: no path found."""
    parts: int = 1


class TaskFilter(BaseModel):
    """Which tasks a listing or an export takes; empty lists take every value."""

    model_config = ConfigDict(extra="forbid")
    kinds: list[TaskSource] = Field(default_factory=list)
    difficulties: list[Difficulty] = Field(default_factory=list)
    statement: StatementStyle | None = None
    """Take this style as `problem_statement`; a task without it, or whose check of it failed, is left out."""
    min_fix_files: int = 0
    min_fix_lines: int = 0
    max_call_distance: int | None = None

    def matches(self, task: Task) -> bool:
        features = task.features
        distance = features.call_distance if features else None
        return ((not self.kinds or task.kind in self.kinds)
                and (not self.difficulties or task.difficulty in self.difficulties)
                and task.fix_files >= self.min_fix_files and task.fix_lines >= self.min_fix_lines
                and (self.max_call_distance is None or (distance is not None and distance <= self.max_call_distance))
                and (self.statement is None or task.has_statement(self.statement)))

    def apply(self, tasks: list[Task]) -> list[Task]:
        """The tasks that match, each with the chosen style as its `problem_statement`."""
        return [t.with_statement(self.statement) if self.statement else t for t in tasks if self.matches(t)]


class TaskValidation(BaseModel):
    """What validation saw: each kept task is run twice both ways in a fresh container (`runs` each way; a run
    of the same state seen before counts as one: the search's run of the bug, the baseline's of the untouched
    tree when the gold patch gives it back byte for byte)."""

    model_config = ConfigDict(extra="forbid")
    runs: int = 0
    bug_fail_to_pass_failed: bool = False
    """With the bug applied, every FAIL_TO_PASS test failed in every run."""
    bug_pass_to_pass_passed: bool = False
    gold_all_passed: bool = False
    """With the gold patch applied on the bug, every FAIL_TO_PASS and PASS_TO_PASS test passed in every run."""
    seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.runs > 0 and self.bug_fail_to_pass_failed and self.bug_pass_to_pass_passed and \
            self.gold_all_passed


class Task(BaseModel):
    """One RL task. `instance_id` is unique across a task store."""

    model_config = ConfigDict(extra="forbid")
    format: str = TASK_FORMAT
    instance_id: str
    """`<owner>__<name>-<kind>-<short hash>`; stable for the same bug on the same environment."""
    env_id: str
    """The catalog record id of the verified environment the task is built on."""
    repo: str
    """`owner/name` when the remote is known, else the repository's name; never a host path."""
    base_commit: str
    """The environment's commit (the solved state's code)."""
    image: str
    """The environment's image (solved state); the bug is applied on top of it."""
    workdir: str = "/workspace"
    kind: TaskSource
    bug_patch: str
    """Unified diff (git apply, -p1) that turns the solved tree into the bug state."""
    gold_patch: str
    """Unified diff that fixes the bug state (the reverse of bug_patch on non-test files)."""
    test_patch: str = ""
    """Test changes that belong to the task (history tasks whose commit added tests); applied in both states."""
    problem_statement: str
    """The chosen statement (the `tests` style unless an export chose another)."""
    problem_statements: Statements = Field(default_factory=Statements)
    statement_checks: list[StatementCheck] = Field(default_factory=list)
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    """Test ids (the runner's own) that fail with the bug and pass with the gold patch."""
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    """Test ids that pass both ways (flaky tests are never listed)."""
    test_command: str
    """The environment's test command, without selection flags."""
    test_runner: str = "pytest"
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables the test command needs (from the environment's spec)."""
    fix_files: int = 0
    fix_lines: int = 0
    mutation: MutationInfo | None = None
    history: HistoryInfo | None = None
    parts: list[TaskPart] = Field(default_factory=list)
    """Combined tasks: the bugs applied together (bug_patch and gold_patch hold them all)."""
    features: TaskFeatures | None = None
    difficulty: Difficulty | None = None
    """easy, medium or hard, from `features` (autoinstall/tasks/difficulty.py); None: made before features."""
    validation: TaskValidation = Field(default_factory=TaskValidation)
    grading: Grading | None = None
    """How every surface grades an attempt (envs/grading/): what of the agent's change is taken, how the tests
    run and are read. None: a task made before grading existed; remake it (`autoinstall tasks make ENV_ID`)."""
    created_at: str = ""

    def statement(self, style: StatementStyle) -> str:
        """The statement of one style ("" when not written); a task made before styles has only `tests`."""
        text = getattr(self.problem_statements, style)
        return text or (self.problem_statement if style == "tests" and not self.statement_checks else "")

    def has_statement(self, style: StatementStyle) -> bool:
        """The task holds a statement of this style and no leak check refused it (issue and terse need one
        that passed: they were never written without a check)."""
        checks = [c for c in self.statement_checks if c.style == style]
        return bool(self.statement(style)) and all(c.passed for c in checks) and (bool(checks) or style == "tests")

    def with_statement(self, style: StatementStyle) -> Task:
        """A copy whose `problem_statement` is the given style (the stored one when the style is missing)."""
        return self.model_copy(update={"problem_statement": self.statement(style) or self.problem_statement})
