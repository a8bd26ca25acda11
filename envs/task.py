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
TaskSource = Literal["history", "mutation"]


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


class TaskValidation(BaseModel):
    """What validation saw: each kept task is run twice both ways in a fresh container."""

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
    validation: TaskValidation = Field(default_factory=TaskValidation)
    grading: Grading | None = None
    """How every surface grades an attempt (envs/grading/): what of the agent's change is taken, how the tests
    run and are read. None: a task made before grading existed; remake it (`autoinstall tasks make ENV_ID`)."""
    created_at: str = ""
