"""What a `make_tasks` run is asked (MakeOptions) and what it did (MakeReport)."""
from __future__ import annotations

import statistics
from collections import Counter

from pydantic import BaseModel, Field

from autoinstall.tasks.history import HistoryFunnel
from envs.task import Task, TaskSource

KINDS: tuple[TaskSource, ...] = ("history", "mutation", "combined")


class MakeOptions(BaseModel):
    max_tasks: int = 25
    kinds: tuple[TaskSource, ...] = KINDS
    include_partial: bool = False
    max_fail: int = 5
    """K: a candidate is kept when 1..K tests fail."""
    seed: int = 0
    validation_runs: int = 2
    full_gold_runs: bool = False
    """Run the whole suite with the gold patch too, even when it restores the files byte for byte (see
    validate.validate: by default those runs take FAIL_TO_PASS and the tests that reach the change)."""
    count_seen_runs: bool = True
    """Runs of the same state already seen count toward `validation_runs` (validate.validate): the search's run
    of the bug (when it judged every test a later bug run would) and the baseline's run of the untouched tree
    (when the gold patch gives the files back byte for byte). False: every run is made in validation."""
    max_candidates: int | None = None
    """Stop after searching this many candidates (None: until max_tasks or the time budget)."""
    time_budget_s: float | None = None
    max_history: int = 10
    """History tasks kept at most, so mutations have room."""
    combined_every: int = 3
    """A combined task is tried after every this many validated single bugs (and, once the candidates run
    out, until max_tasks, the budget or the groups do)."""
    workers: int | None = None
    """Validations run beside the search at once (None: the cores left beside it at the sandbox's CPU
    limit, at least 1)."""
    model: str = "embedded"
    """Who writes the issue and terse statements: `embedded` (templates) or `openai:NAME` (a chat model)."""
    base_url: str | None = None
    """The chat model's OpenAI-compatible endpoint."""


class ValidationFailure(BaseModel):
    """A kept candidate that failed validation: which run disagreed with the search, and how."""

    candidate: str
    """What it was (operator and function, commit, or the combined parts' files)."""
    run: str
    """`bug run N` or `gold run N` (of `validation_runs`), or `bug patch`/`gold patch` (did not apply)."""
    how: str
    """validate.Disagreement: timeout, flaky, order-dependent, fresh container, not reported, fails with the
    fix applied, with the tests."""


class MakeReport(BaseModel):
    """What one `make_tasks` run did."""

    env_id: str
    candidates: int = 0
    """Candidates generated (history + mutation)."""
    searched: int = 0
    kept: int = 0
    """Candidates that passed the search (before dedup and validation)."""
    duplicates: int = 0
    validated: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    seconds: float = 0.0
    baseline_tests: int = 0
    unstable_ids: int = 0
    """Passing tests left out because their ids differ between the verification's runs."""
    unselectable_ids: int = 0
    """Passing tests left out because a run selecting them by id did not report them passing (a runner whose
    selection matches printed names: IdSelection.exact)."""
    coverage: bool = False
    """A per-test call map was read (pytest)."""
    selection: str = "none"
    """How the tests that reach a candidate were known: `coverage` (the call map), `call graph`
    (staticreach.py: every other runner), `none` (the whole suite runs)."""
    task_seconds: list[float] = Field(default_factory=list)
    """Wall time spent per validated task (search share + validation)."""
    history: HistoryFunnel = Field(default_factory=HistoryFunnel)
    """How many commits reached each stage of history task making."""
    containers: dict[str, int] = Field(default_factory=dict)
    """Validation containers started, validations that reused one another left as it found it, and leases not
    looked at for reuse (the run's first containers all came back changed: containers.GIVE_UP_AFTER; or the
    validation changed a file the runner's neutral caches are not keyed by)."""
    combined_tried: int = 0
    """Groups of validated bugs searched as one."""
    failures: list[ValidationFailure] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)

    @property
    def yield_(self) -> float:
        return self.validated / self.searched if self.searched else 0.0

    @property
    def seconds_per_task(self) -> float:
        return statistics.median(self.task_seconds) if self.task_seconds else 0.0

    def by_kind(self) -> dict[str, int]:
        return dict(Counter(t.kind for t in self.tasks))

    def by_difficulty(self) -> dict[str, int]:
        return dict(Counter(t.difficulty or "unknown" for t in self.tasks))

    def statement_checks(self) -> dict[str, int]:
        """Leak checks passed and failed, over every statement of every task."""
        checks = [c for t in self.tasks for c in t.statement_checks]
        return {"passed": sum(c.passed for c in checks), "failed": sum(not c.passed for c in checks)}
