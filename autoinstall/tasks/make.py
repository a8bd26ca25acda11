"""`make_tasks(env_id)`: from a verified catalog environment to validated tasks in the task store.

1. the environment's record and spec from the catalog (verified, or partial with `include_partial`);
2. one search container from its image, network off: a baseline run of the suite, the history candidates
   (git in the container) and the mutation candidates (its non-test sources);
3. each candidate searched (bug applied, suite run, bug reverted); a kept one, unless it duplicates one
   already kept (same failing tests and same hunk), is validated in a fresh container and becomes a Task,
   with groups of validated bugs searched as combined tasks (searching.py);
4. the tasks are merged into the store atomically, only once the run ends (nothing half-written).
"""
from __future__ import annotations

import time
from collections.abc import Callable

from autoinstall.errors import AutoinstallError
from autoinstall.tasks import coverage
from autoinstall.tasks.build import TaskContext
from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.history import HistoryFunnel, history_candidates
from autoinstall.tasks.mutation import mutations
from autoinstall.tasks.searching import Search, validation_workers
from autoinstall.tasks.settings import KINDS, MakeOptions, MakeReport
from autoinstall.tasks.staticreach import StaticReach
from autoinstall.tasks.statement_model import statement_writer
from autoinstall.tasks.store import TaskStore
from autoinstall.tasks.validate import baseline, selectable_ids, stable_ids
from autoinstall.tasks.workspace import Suite, read_sources, source_files
from envs.base import Sandbox, SandboxFactory
from envs.catalog import Catalog, EnvRecord
from envs.errors import ImageNotFoundError
from envs.spec import EnvSpec
from envs.testrun import abilities

__all__ = ["KINDS", "MakeOptions", "MakeReport", "TaskError", "load_environment", "make_tasks"]


class TaskError(AutoinstallError):
    """Tasks cannot be made for this environment; the message says what to do."""


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
    statement_writer(options.model, options.base_url)  # a model spec that cannot work fails before Docker
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
    runner = abilities(suite.runner)
    trace = f"{coverage.PLUGIN_DIR}/trace.json" if runner.coverage_map else None
    if trace:
        coverage.install(sandbox)
    first = suite.run(sandbox, timeout_s=1800, trace=trace)
    passing = baseline(first, suite.flaky)
    if trace and not passing:  # the traced run broke: search without a map
        trace, first = None, suite.run(sandbox, timeout_s=1800)
        passing = baseline(first, suite.flaky)
    passing, unstable = stable_ids(passing, spec)
    if unstable:
        log(f"{unstable} passing tests left out: their ids differ between the verification's runs")
    report.unstable_ids = unstable
    passing, unselectable = selectable_ids(sandbox, suite, passing, timeout_s=1800)
    if unselectable:
        log(f"{unselectable} passing tests left out: a run selecting them by id did not report them passing")
    report.unselectable_ids = unselectable
    reach = coverage.read_map(sandbox, trace, passing, suite.project, log=log) if trace else None
    report.coverage = reach is not None
    report.baseline_tests = len(passing)
    if not passing:
        msg = f"no test of environment {record.id} passes in its image (exit {first.exit_code}); rebuild it."
        raise TaskError(msg)
    timeout_s = max(60.0, 3 * first.duration_s + 30)
    log(f"{len(passing)} baseline tests ({first.duration_s:.1f}s a run)")
    # A runner whose first run compiles for minutes (`warm_up`): validation containers start from a snapshot of
    # the search container taken right after the baseline run (the untouched tree, its build cache warm).
    warm = sandbox.snapshot("autoinstall-tasks-warm") if runner.warm_up else None
    try:
        _search_all(sandbox, factory, warm or image, suite, passing, reach, timeout_s, record, spec, options,
                    report, log, since=time.monotonic() - started)
    finally:
        if warm:
            factory.discard([warm])


def _search_all(sandbox: Sandbox, factory: SandboxFactory, image: str, suite: Suite, passing: list[str],
                reach: coverage.CoverageMap | None, timeout_s: float, record: EnvRecord, spec: EnvSpec,
                options: MakeOptions, report: MakeReport, log: Callable[[str], None], since: float) -> None:
    """Generate the candidates, then search them (searching.py); stop at max_tasks or the budget."""
    started = time.monotonic() - since
    exact = sandbox.exec("git rev-parse --verify -q HEAD", timeout=60).ok
    sources = read_sources(sandbox, source_files(sandbox, suite.project), log=log)
    candidates = _candidates(sandbox, options, log, report.history, sources)
    report.candidates = len(candidates)

    def load_index() -> CodeIndex:
        return CodeIndex.build(sources, read_sources(sandbox, source_files(sandbox, suite.project, tests=True)))

    context = TaskContext(record=record, spec=spec, suite=suite, load_index=load_index,
                          writer=statement_writer(options.model, options.base_url))
    found: coverage.CoverageMap | StaticReach | None = reach
    if reach is None and context.index is not None and context.index.functions:
        found = StaticReach(context.index, passing)  # no per-test call map: the call graph tells
    report.selection = "coverage" if reach is not None else "call graph" if found is not None else "none"
    search = Search(sandbox=sandbox, factory=factory, image=image, passing=passing, reach=found,
                    timeout_s=timeout_s, context=context, options=options, report=report, log=log, exact=exact,
                    workers=validation_workers(factory, options.workers))
    search.run(candidates, started)  # the baseline and generation count toward the first task


def _candidates(sandbox: Sandbox, options: MakeOptions, log: Callable[[str], None],
                funnel: HistoryFunnel, sources: dict[str, str]) -> list[Candidate]:
    history = history_candidates(sandbox, funnel=funnel) if "history" in options.kinds else []
    mutated = mutations(sources, options.seed) if "mutation" in options.kinds else []
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
