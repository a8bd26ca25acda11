"""The search loop of one run: candidates in order, each searched in the long-lived container; a kept one,
unless it duplicates one already kept, is checked gradable and validated in a fresh container while the
search goes on (validation is where the time goes: `workers` validations run beside the search, as many as
the machine's cores allow at the sandbox's CPU limit, in containers reused while a validation leaves them
exactly as it found them: validate.Containers; one no worker has started yet runs on the search's thread
rather than leave it waiting), then built into a Task. Every `combined_every`
validated bugs, and once the candidates run out, a group of validated bugs is searched as one combined task
(combine.py). Stops at max_tasks or the time budget; a task's seconds are the wall time since the last one.
"""
from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from autoinstall.tasks import coverage
from autoinstall.tasks.build import TaskContext, build_task
from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.combine import Kept, Pool, search_combined
from autoinstall.tasks.combine import selection as group_selection
from autoinstall.tasks.difficulty import changed_functions
from autoinstall.tasks.grading import gold_problem, grading_for, task_rules
from autoinstall.tasks.settings import MakeOptions, MakeReport, ValidationFailure
from autoinstall.tasks.staticreach import StaticReach
from autoinstall.tasks.containers import Containers
from autoinstall.tasks.validate import Disagreement, Verdict, search, validate
from autoinstall.tasks.workspace import read_sources
from envs.base import Sandbox, SandboxFactory
from envs.task import TaskValidation
from envs.testrun.grading import NotGradable


def validation_workers(factory: SandboxFactory, asked: int | None) -> int:
    """Validations beside the search: `asked`, else the cores left beside the search at the sandboxes'
    CPU limit (at least 1)."""
    if asked is not None:
        return max(1, asked)
    limits = getattr(factory, "limits", None)
    cpus = max(1.0, float(getattr(limits, "cpus", 1.0) or 1.0))
    return max(1, int((os.cpu_count() or 1) / cpus) - 1)


Validated = tuple[TaskValidation, Disagreement | None]


@dataclass
class Pending:
    """A kept candidate whose validation runs (or waits for a worker)."""

    candidate: Candidate
    verdict: Verdict
    reaching: list[str] | None
    job: Callable[[], Validated]
    future: Future[Validated]

    def steal(self) -> bool:
        """Run the validation on this thread if no worker has started it yet; False when one has."""
        if not self.future.cancel():
            return False
        done: Future[Validated] = Future()
        try:
            done.set_result(self.job())
        except Exception as e:  # noqa: BLE001 - raised again by result(), as a worker's would be
            done.set_exception(e)
        self.future = done
        return True


@dataclass
class Search:
    """The state of one run's search (the search container, the baseline, what was kept and dropped)."""

    sandbox: Sandbox
    factory: SandboxFactory
    image: str
    """What validation containers start from (the environment's image, or a warm snapshot of it)."""
    passing: list[str]
    reach: coverage.CoverageMap | StaticReach | None
    timeout_s: float
    context: TaskContext
    options: MakeOptions
    report: MakeReport
    log: Callable[[str], None]
    exact: bool = False
    workers: int = 1
    dropped: Counter[str] = field(default_factory=Counter)
    seen: set[tuple[frozenset[str], str]] = field(default_factory=set)
    pool: Pool = field(default_factory=Pool)
    pending: list[Pending] = field(default_factory=list)
    last: float = 0.0
    """When the last task was made (or the run started)."""
    singles: int = 0
    history_kept: int = 0
    _executor: ThreadPoolExecutor | None = None
    _containers: Containers | None = None

    def run(self, candidates: list[Candidate], started: float) -> None:
        self.last = started
        self._containers = Containers(self.factory, self.image, self.context.suite)
        try:
            with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="validate") as executor:
                self._executor = executor
                try:
                    self._search(candidates, started)
                finally:
                    while self.pending:
                        self._wait_one()
        finally:
            self._containers.close()
        self.report.dropped = dict(self.dropped)
        self.report.containers = {"started": self._containers.started, "reused": self._containers.reused,
                                  "unchecked": self._containers.unchecked}

    def _search(self, candidates: list[Candidate], started: float) -> None:
        for candidate in candidates:
            if self._full(started):
                break
            if candidate.kind == "history" and self.history_kept + self._pending("history") >= \
                    self.options.max_history:
                continue
            self._single(candidate)
            self._make_room()
        while "combined" in self.options.kinds and not self._full(started):
            if self._combined() is None:
                if not self.pending:
                    break
                self._wait_one()  # a bug still validating may make a group
            self._make_room()

    def _pending(self, kind: str) -> int:
        return sum(p.candidate.kind == kind for p in self.pending)

    def _full(self, started: float) -> bool:
        """Out of budget, or max_tasks made or being validated (then the validations are waited for)."""
        options, report = self.options, self.report
        if options.time_budget_s is not None and time.monotonic() - started > options.time_budget_s:
            return True
        if options.max_candidates is not None and report.searched >= options.max_candidates:
            return True
        if len(report.tasks) + len(self.pending) >= options.max_tasks:
            self._wait_one()
        return len(report.tasks) >= options.max_tasks

    def _single(self, candidate: Candidate) -> None:
        """Search one candidate; a kept one goes to validation."""
        self.report.searched += 1
        self.report.history.searched += candidate.kind == "history"
        select = self.reach.selection(candidate) if self.reach else None
        verdict, candidate = search(self.sandbox, self.context.suite, candidate, self.passing,
                                    max_fail=self.options.max_fail, timeout_s=self.timeout_s,
                                    exact_patches=self.exact, selection=select)
        if not verdict.kept:
            self.dropped[verdict.reason] += 1
            return
        self.report.kept += 1
        self.report.history.failing += candidate.kind == "history"
        self._submit(candidate, verdict, self.reach.reaching(candidate) if self.reach else None)

    def _combined(self) -> bool | None:
        """Search the next group of validated bugs as one task: True submitted, False not, None no group."""
        group = self.pool.next_group()
        if group is None:
            return None
        self.report.combined_tried += 1
        verdict, candidate = search_combined(self.sandbox, self.context.suite, group, self.passing,
                                             timeout_s=self.timeout_s, exact_patches=self.exact)
        if not verdict.kept:
            self.dropped[f"combined: {verdict.reason.split(' (')[0]}"] += 1
            return False
        return self._submit(candidate, verdict, group_selection(group))

    def _submit(self, candidate: Candidate, verdict: Verdict, reaching: list[str] | None) -> bool:
        """Dedup and gradability, then the validation in the background; False when dropped here."""
        key = (frozenset(verdict.fail_to_pass), candidate.hunk_key)
        if key in self.seen:
            self.report.duplicates += 1
            self.dropped["duplicate"] += 1
            return False
        self.seen.add(key)
        listed = [*verdict.fail_to_pass, *verdict.pass_to_pass]
        if why := gold_problem(task_rules(self.context.spec, self.context.suite, listed), candidate.files,
                               candidate.gold_patch, read_sources(self.sandbox, candidate.files),
                               candidate.bug_patch):
            self.log(f"dropped {candidate.kind} {describe(candidate)}: {why}")
            self.dropped["fix not gradable"] += 1
            return False
        gold_select = None
        if reaching is not None and not self.options.full_gold_runs:
            gold_select = sorted(set(verdict.fail_to_pass) | set(reaching))
        assert self._executor is not None
        job = functools.partial(
            validate, self.factory, self.image, self.context.suite, candidate, verdict,
            runs=self.options.validation_runs, timeout_s=self.timeout_s, gold_select=gold_select,
            bug_select=gold_select if in_bodies(candidate) else None, searched_selection=reaching is not None,
            containers=self._containers, searched=verdict.judged if self.options.count_seen_runs else None,
            baseline_counts=self.options.count_seen_runs)
        self.pending.append(Pending(candidate, verdict, reaching, job, self._executor.submit(job)))
        return True

    def _make_room(self) -> None:
        """Make tasks of the finished validations; while some wait for a worker, run them here: the search would
        otherwise wait for them with its core idle (so at most `workers` + 1 containers are busy, as before)."""
        self._harvest(block=False)
        while len(self.pending) > self.workers and self._steal():
            self._harvest(block=False)

    def _wait_one(self) -> None:
        """Make a task of at least one pending validation: run a queued one here, else wait for one."""
        self._harvest(block=not self._steal())

    def _steal(self) -> bool:
        """Run the newest validation no worker has started on this thread; False when every one has started."""
        return any(p.steal() for p in reversed(self.pending))

    def _harvest(self, *, block: bool) -> None:
        """Make tasks of the finished validations (with `block`, wait for at least one)."""
        if not self.pending:
            return
        if block:
            wait([p.future for p in self.pending], return_when=FIRST_COMPLETED)
        for item in [p for p in self.pending if p.future.done()]:
            self.pending.remove(item)
            self._finish(item)

    def _finish(self, item: Pending) -> None:
        candidate, verdict = item.candidate, item.verdict
        validation, why = item.future.result()
        if len(self.report.tasks) >= self.options.max_tasks:
            return  # validated beside the last ones, past max_tasks
        if not validation.valid:
            self.report.failures.append(ValidationFailure(candidate=f"{candidate.kind} {describe(candidate)}",
                                                          run=why.run if why else "", how=str(why or "")))
            self.log(f"failed validation: {candidate.kind} {describe(candidate)}: {why}")
            self.dropped["failed validation"] += 1
            return
        try:
            grading = grading_for(self.context.spec, self.context.suite, self.sandbox, verdict.fail_to_pass,
                                  verdict.pass_to_pass, self.timeout_s)
        except NotGradable:
            self.dropped["not gradable by test id"] += 1
            return
        task = build_task(candidate, verdict, validation, self.context, grading)
        self.report.tasks.append(task)
        now = time.monotonic()
        self.report.task_seconds.append(round(now - self.last, 2))
        self.last = now
        self.report.validated = len(self.report.tasks)
        self.log(f"task {len(self.report.tasks)}: {candidate.kind} {describe(candidate)} "
                 f"({len(verdict.fail_to_pass)} failing, {task.difficulty})")
        if candidate.kind == "combined":
            return
        self.history_kept += candidate.kind == "history"
        self.report.history.validated = self.history_kept
        sites = frozenset(changed_functions(candidate, self.context.index) or candidate.files)
        self.pool.add(Kept(candidate=candidate, verdict=verdict, sites=sites, reaching=item.reaching))
        self.singles += 1
        if "combined" in self.options.kinds and self.singles % max(1, self.options.combined_every) == 0:
            self._combined()


def in_bodies(candidate: Candidate) -> bool:
    """Every change is a mutation inside a function body: only the tests that call it can see it."""
    return candidate.mutation is not None or (bool(candidate.parts) and all(p.mutation for p in candidate.parts))


def describe(candidate: Candidate) -> str:
    if candidate.mutation:
        m = candidate.mutation
        return f"{m.operator} in {m.function} ({m.file}:{m.line})"
    if candidate.parts:
        return " + ".join(p.mutation.function if p.mutation else f"commit {p.history.commit[:10]}"
                          if p.history else p.kind for p in candidate.parts)
    return f"commit {candidate.history.commit[:10]}" if candidate.history else ""
