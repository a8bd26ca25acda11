"""`make_tasks(env_id)`: from a verified catalog environment to validated tasks in the task store.

1. the environment's record and spec from the catalog (verified, or partial with `include_partial`);
2. one search container from its image, network off: a baseline run of the suite, the history candidates
   (git in the container) and the mutation candidates (its non-test sources);
3. each candidate searched (bug applied, suite run, bug reverted); a kept one, unless it duplicates one
   already kept (same failing tests and same hunk), is validated in a fresh container and becomes a Task;
4. the tasks are merged into the store atomically, only once the run ends (nothing half-written).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import statistics
import time
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel, Field

from autoinstall.errors import AutoinstallError
from autoinstall.tasks import coverage
from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.grading import gold_problem, grading_for, task_rules
from autoinstall.tasks.history import HistoryFunnel, history_candidates
from autoinstall.tasks.mutation import mutations
from autoinstall.tasks.statement import problem_statement
from autoinstall.tasks.store import TaskStore
from autoinstall.tasks.validate import Verdict, baseline, search, validate
from autoinstall.tasks.workspace import Suite, read_sources, source_files
from envs.base import Sandbox, SandboxFactory
from envs.catalog import Catalog, EnvRecord
from envs.errors import ImageNotFoundError
from envs.export.common import repo_name
from envs.grading.policy import Grading
from envs.spec import EnvSpec
from envs.task import Task, TaskSource, TaskValidation
from envs.testrun.grading import NotGradable

KINDS: tuple[TaskSource, ...] = ("history", "mutation")
WARM_RUNNERS = ("go", "cargo")
"""Runners whose first run compiles for minutes: validation containers start from a snapshot of the search
container taken right after the baseline run (the untouched tree, its build cache warm)."""


class TaskError(AutoinstallError):
    """Tasks cannot be made for this environment; the message says what to do."""


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
    max_candidates: int | None = None
    """Stop after searching this many candidates (None: until max_tasks or the time budget)."""
    time_budget_s: float | None = None
    max_history: int = 10
    """History tasks kept at most, so mutations have room."""


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
    coverage: bool = False
    """Candidates were searched with only the tests that reach them (a per-test call map was read)."""
    task_seconds: list[float] = Field(default_factory=list)
    """Wall time spent per validated task (search share + validation)."""
    history: HistoryFunnel = Field(default_factory=HistoryFunnel)
    """How many commits reached each stage of history task making."""
    tasks: list[Task] = Field(default_factory=list)

    @property
    def yield_(self) -> float:
        return self.validated / self.searched if self.searched else 0.0

    @property
    def seconds_per_task(self) -> float:
        return statistics.median(self.task_seconds) if self.task_seconds else 0.0


def load_environment(catalog: Catalog, env_id: str, include_partial: bool) -> tuple[EnvRecord, EnvSpec]:
    """The record and spec of an environment tasks can be made for, or a TaskError saying why not."""
    record = catalog.get(env_id)
    if record.status != "verified" and not (include_partial and record.status == "partial"):
        hint = " (pass --include-partial to use it anyway)" if record.status == "partial" else ""
        msg = f"environment {record.id} is {record.status}, not verified{hint}; tasks need a verified suite."
        raise TaskError(msg)
    spec = catalog.get_spec(record.id)
    if spec is None or not (spec.image or record.image):
        msg = f"environment {record.id} has no stored spec or image; rebuild it: autoinstall {record.repo}"
        raise TaskError(msg)
    if Suite.from_spec(spec) is None:
        msg = f"environment {record.id} has no test command, so no test can tell a bug from its fix."
        raise TaskError(msg)
    return record, spec


def make_tasks(env_id: str, factory: SandboxFactory, *, catalog: Catalog | None = None,
               store: TaskStore | None = None, options: MakeOptions | None = None,
               log: Callable[[str], None] = lambda _: None) -> MakeReport:
    """Generate, search and validate tasks for one environment and merge them into the store."""
    options = options or MakeOptions()
    record, spec = load_environment(catalog or Catalog(), env_id, options.include_partial)
    suite = Suite.from_spec(spec)
    assert suite is not None  # checked by load_environment
    image = spec.image or record.image or ""
    report = MakeReport(env_id=record.id)
    started = time.monotonic()
    try:
        with factory.sandbox(image, network=False) as sandbox:
            _run(sandbox, factory, image, suite, record, spec, options, report, log)
    except ImageNotFoundError as e:
        msg = (f"the image {image} of environment {record.id} was removed; rebuild it with "
               f"`autoinstall {record.repo}" + (f" --commit {record.commit}`" if record.commit else "`") +
               f" and run tasks on the new environment ({e})")
        raise TaskError(msg) from e
    report.seconds = round(time.monotonic() - started, 2)
    if report.tasks:
        (store or TaskStore()).merge(record.id, report.tasks)
    return report


def _run(sandbox: Sandbox, factory: SandboxFactory, image: str, suite: Suite, record: EnvRecord,
         spec: EnvSpec, options: MakeOptions, report: MakeReport, log: Callable[[str], None]) -> None:
    started = time.monotonic()
    trace = f"{coverage.PLUGIN_DIR}/trace.json" if suite.runner == "pytest" else None
    if trace:
        coverage.install(sandbox)
    first = suite.run(sandbox, timeout_s=1800, trace=trace)
    passing = baseline(first, suite.flaky)
    if trace and not passing:  # the traced run broke: search without a map
        trace, first = None, suite.run(sandbox, timeout_s=1800)
        passing = baseline(first, suite.flaky)
    reach = coverage.read_map(sandbox, trace, passing, suite.project, log=log) if trace else None
    report.coverage = reach is not None
    report.baseline_tests = len(passing)
    if not passing:
        msg = f"no test of environment {record.id} passes in its image (exit {first.exit_code}); rebuild it."
        raise TaskError(msg)
    timeout_s = max(60.0, 3 * first.duration_s + 30)
    log(f"{len(passing)} baseline tests ({first.duration_s:.1f}s a run)")
    warm = sandbox.snapshot("autoinstall-tasks-warm") if suite.runner in WARM_RUNNERS else None
    try:
        _search_all(sandbox, factory, warm or image, suite, passing, reach, timeout_s, record, spec, options,
                    report, log, since=time.monotonic() - started)
    finally:
        if warm:
            factory.discard([warm])


def _search_all(sandbox: Sandbox, factory: SandboxFactory, image: str, suite: Suite, passing: list[str],
                reach: coverage.CoverageMap | None, timeout_s: float, record: EnvRecord, spec: EnvSpec,
                options: MakeOptions, report: MakeReport, log: Callable[[str], None], since: float) -> None:
    """Search the candidates in order, validate each new kept one; stop at max_tasks or the budget."""
    started = time.monotonic() - since
    exact = sandbox.exec("git rev-parse --verify -q HEAD", timeout=60).ok
    candidates = _candidates(sandbox, options, log, report.history, suite.project)
    report.candidates = len(candidates)
    seen: set[tuple[frozenset[str], str]] = set()
    dropped: Counter[str] = Counter()
    history_kept = 0
    since = time.monotonic() - started  # the baseline and candidate generation count toward the first task
    for candidate in candidates:
        if len(report.tasks) >= options.max_tasks or _out_of_budget(options, report, started):
            break
        if candidate.kind == "history" and history_kept >= options.max_history:
            continue
        step = time.monotonic()
        report.searched += 1
        report.history.searched += candidate.kind == "history"
        verdict, candidate = search(sandbox, suite, candidate, passing, max_fail=options.max_fail,
                                    timeout_s=timeout_s, exact_patches=exact,
                                    selection=reach.selection(candidate) if reach else None)
        if not verdict.kept:
            dropped[verdict.reason] += 1
            since += time.monotonic() - step
            continue
        report.kept += 1
        report.history.failing += candidate.kind == "history"
        key = (frozenset(verdict.fail_to_pass), candidate.hunk_key)
        if key in seen:
            report.duplicates += 1
            dropped["duplicate"] += 1
            since += time.monotonic() - step
            continue
        seen.add(key)
        if why := gold_problem(task_rules(spec, suite, [*verdict.fail_to_pass, *verdict.pass_to_pass]),
                               candidate.files, candidate.gold_patch, read_sources(sandbox, candidate.files)):
            dropped["fix not gradable"] += 1
            log(f"dropped {candidate.kind} {_describe(candidate)}: {why}")
            since += time.monotonic() - step
            continue
        gold_select = None
        if reach is not None and not options.full_gold_runs:
            gold_select = sorted(set(verdict.fail_to_pass) | set(reach.reaching(candidate)))
        validation = validate(factory, image, suite, candidate, verdict, runs=options.validation_runs,
                              timeout_s=timeout_s, gold_select=gold_select)
        since += time.monotonic() - step
        if not validation.valid:
            dropped["failed validation"] += 1
            continue
        try:
            grading = grading_for(spec, suite, sandbox, [*verdict.fail_to_pass, *verdict.pass_to_pass], timeout_s)
        except NotGradable:
            dropped["not gradable by test id"] += 1
            continue
        report.tasks.append(build_task(candidate, verdict, validation, record, spec, suite, grading))
        report.task_seconds.append(round(since, 2))
        since = 0.0
        history_kept += candidate.kind == "history"
        report.history.validated = history_kept
        report.validated = len(report.tasks)
        log(f"task {len(report.tasks)}: {candidate.kind} {_describe(candidate)} "
            f"({len(verdict.fail_to_pass)} failing)")
    report.dropped = dict(dropped)


def _candidates(sandbox: Sandbox, options: MakeOptions, log: Callable[[str], None],
                funnel: HistoryFunnel, project: str = ".") -> list[Candidate]:
    history = history_candidates(sandbox, funnel=funnel) if "history" in options.kinds else []
    mutated = mutations(read_sources(sandbox, source_files(sandbox, project), log=log), options.seed) \
        if "mutation" in options.kinds else []
    log(f"{len(history)} history candidates, {len(mutated)} mutation candidates")
    merged = _interleave(history, mutated)
    return merged[:options.max_candidates] if options.max_candidates else merged


HISTORY_EVERY = 2
"""One history candidate every this many mutations (history is in its best-first order, see history.py)."""


def _interleave(history: list[Candidate], mutated: list[Candidate]) -> list[Candidate]:
    """One history candidate every HISTORY_EVERY mutations, so both kinds are tried early."""
    out: list[Candidate] = []
    h, m = list(history), list(mutated)
    while h or m:
        if h:
            out.append(h.pop(0))
        out.extend(m[:HISTORY_EVERY])
        del m[:HISTORY_EVERY]
    return out


def _out_of_budget(options: MakeOptions, report: MakeReport, started: float) -> bool:
    if options.max_candidates is not None and report.searched >= options.max_candidates:
        return True
    return options.time_budget_s is not None and time.monotonic() - started > options.time_budget_s


def _describe(candidate: Candidate) -> str:
    if candidate.mutation:
        m = candidate.mutation
        return f"{m.operator} in {m.function} ({m.file}:{m.line})"
    return f"commit {candidate.history.commit[:10]}" if candidate.history else ""


def build_task(candidate: Candidate, verdict: Verdict, validation: TaskValidation, record: EnvRecord,
               spec: EnvSpec, suite: Suite, grading: Grading | None = None) -> Task:
    """The Task record of a validated candidate."""
    repo = repo_name(spec.source)
    slug = repo.replace("/", "__")
    digest = hashlib.sha256(f"{record.id}\0{candidate.bug_patch}".encode()).hexdigest()[:8]
    return Task(
        instance_id=f"{slug}-{candidate.kind}-{digest}", env_id=record.id, repo=repo,
        base_commit=spec.source.commit or spec.source.revision, image=spec.image or record.image or "",
        kind=candidate.kind, bug_patch=candidate.bug_patch, gold_patch=candidate.gold_patch,
        problem_statement=problem_statement(candidate, verdict.fail_to_pass, verdict.messages),
        FAIL_TO_PASS=verdict.fail_to_pass, PASS_TO_PASS=verdict.pass_to_pass, test_command=suite.command,
        test_runner=suite.runner, env=dict(suite.env), fix_files=len(candidate.files),
        fix_lines=candidate.fix_lines, mutation=candidate.mutation, history=candidate.history,
        validation=validation, grading=grading, created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
