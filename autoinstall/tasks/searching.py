"""The search loop of one run: candidates in order, each searched in the long-lived container; a kept one,
unless it duplicates one already kept, is checked gradable, validated in a fresh container and built into a
Task. Every `combined_every` validated bugs, and once the candidates run out, a group of validated bugs is
searched as one combined task (combine.py). Stops at max_tasks or the time budget.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from autoinstall.tasks import coverage
from autoinstall.tasks.build import TaskContext, build_task
from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.combine import Kept, Pool, search_combined
from autoinstall.tasks.combine import selection as group_selection
from autoinstall.tasks.difficulty import changed_functions
from autoinstall.tasks.grading import gold_problem, grading_for, task_rules
from autoinstall.tasks.settings import MakeOptions, MakeReport
from autoinstall.tasks.validate import Verdict, search, validate
from autoinstall.tasks.workspace import read_sources
from envs.base import Sandbox, SandboxFactory
from envs.testrun.grading import NotGradable


@dataclass
class Search:
    """The state of one run's search (the search container, the baseline, what was kept and dropped)."""

    sandbox: Sandbox
    factory: SandboxFactory
    image: str
    """What validation containers start from (the environment's image, or a warm snapshot of it)."""
    passing: list[str]
    reach: coverage.CoverageMap | None
    timeout_s: float
    context: TaskContext
    options: MakeOptions
    report: MakeReport
    log: Callable[[str], None]
    exact: bool = False
    dropped: Counter[str] = field(default_factory=Counter)
    seen: set[tuple[frozenset[str], str]] = field(default_factory=set)
    pool: Pool = field(default_factory=Pool)
    since: float = 0.0
    """Seconds spent since the last validated task (charged to the next one)."""

    def run(self, candidates: list[Candidate], started: float) -> None:
        history_kept, singles = 0, 0
        combined = "combined" in self.options.kinds
        for candidate in candidates:
            if self._done(started):
                break
            if candidate.kind == "history" and history_kept >= self.options.max_history:
                continue
            if self._single(candidate):
                history_kept += candidate.kind == "history"
                self.report.history.validated = history_kept
                singles += 1
                if combined and singles % max(1, self.options.combined_every) == 0:
                    self._combined()
        while combined and not self._done(started) and self._combined() is not None:
            pass
        self.report.dropped = dict(self.dropped)

    def _done(self, started: float) -> bool:
        options, report = self.options, self.report
        if len(report.tasks) >= options.max_tasks:
            return True
        if options.max_candidates is not None and report.searched >= options.max_candidates:
            return True
        return options.time_budget_s is not None and time.monotonic() - started > options.time_budget_s

    def _single(self, candidate: Candidate) -> bool:
        """Search one candidate and make a task of it; True when one was made."""
        step = time.monotonic()
        self.report.searched += 1
        self.report.history.searched += candidate.kind == "history"
        select = self.reach.selection(candidate) if self.reach else None
        verdict, candidate = search(self.sandbox, self.context.suite, candidate, self.passing,
                                    max_fail=self.options.max_fail, timeout_s=self.timeout_s,
                                    exact_patches=self.exact, selection=select)
        if not verdict.kept:
            return self._drop(verdict.reason, step)
        self.report.kept += 1
        self.report.history.failing += candidate.kind == "history"
        reaching = self.reach.reaching(candidate) if self.reach else None
        made = self._finish(candidate, verdict, reaching, step)
        if made:
            sites = frozenset(changed_functions(candidate, self.context.index) or candidate.files)
            self.pool.add(Kept(candidate=candidate, verdict=verdict, sites=sites, reaching=reaching))
        return made

    def _combined(self) -> bool | None:
        """Search the next group of validated bugs as one task: True made, False not, None no group left."""
        if len(self.report.tasks) >= self.options.max_tasks:
            return None
        group = self.pool.next_group()
        if group is None:
            return None
        step = time.monotonic()
        self.report.combined_tried += 1
        verdict, candidate = search_combined(self.sandbox, self.context.suite, group, self.passing,
                                             timeout_s=self.timeout_s, exact_patches=self.exact)
        if not verdict.kept:
            return self._drop(f"combined: {verdict.reason.split(' (')[0]}", step)
        return self._finish(candidate, verdict, group_selection(group), step)

    def _drop(self, reason: str, step: float) -> bool:
        self.dropped[reason] += 1
        self.since += time.monotonic() - step
        return False

    def _finish(self, candidate: Candidate, verdict: Verdict, reaching: list[str] | None, step: float) -> bool:
        """Dedup, gradability, validation and grading of a kept candidate; True when it became a task."""
        context, suite = self.context, self.context.suite
        key = (frozenset(verdict.fail_to_pass), candidate.hunk_key)
        if key in self.seen:
            self.report.duplicates += 1
            return self._drop("duplicate", step)
        self.seen.add(key)
        listed = [*verdict.fail_to_pass, *verdict.pass_to_pass]
        if why := gold_problem(task_rules(context.spec, suite, listed), candidate.files, candidate.gold_patch,
                               read_sources(self.sandbox, candidate.files)):
            self.log(f"dropped {candidate.kind} {describe(candidate)}: {why}")
            return self._drop("fix not gradable", step)
        gold_select = None
        if reaching is not None and not self.options.full_gold_runs:
            gold_select = sorted(set(verdict.fail_to_pass) | set(reaching))
        validation = validate(self.factory, self.image, suite, candidate, verdict, runs=self.options.validation_runs,
                              timeout_s=self.timeout_s, gold_select=gold_select)
        if not validation.valid:
            return self._drop("failed validation", step)
        try:
            grading = grading_for(context.spec, suite, self.sandbox, listed, self.timeout_s)
        except NotGradable:
            return self._drop("not gradable by test id", step)
        task = build_task(candidate, verdict, validation, context, grading)
        self.report.tasks.append(task)
        self.since += time.monotonic() - step
        self.report.task_seconds.append(round(self.since, 2))
        self.since = 0.0
        self.report.validated = len(self.report.tasks)
        self.log(f"task {len(self.report.tasks)}: {candidate.kind} {describe(candidate)} "
                 f"({len(verdict.fail_to_pass)} failing, {task.difficulty})")
        return True


def describe(candidate: Candidate) -> str:
    if candidate.mutation:
        m = candidate.mutation
        return f"{m.operator} in {m.function} ({m.file}:{m.line})"
    if candidate.parts:
        return " + ".join(p.mutation.function if p.mutation else f"commit {p.history.commit[:10]}"
                          if p.history else p.kind for p in candidate.parts)
    return f"commit {candidate.history.commit[:10]}" if candidate.history else ""
