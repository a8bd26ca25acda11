"""Run many builds on a thread pool (each mostly waits on Docker), recording each in the catalog as it ends.

Resuming: a job (repo, requested commit, model) whose record is verified, or failed without --retry-failed, is
skipped. Ctrl-C (or SIGTERM) stops scheduling and stops running builds: their sandboxes are removed at once
(a local build; a clone or base-image build in progress is waited for), each build unwinds as a `run` does on
Ctrl-C (its snapshots and cache layers removed, its lock released), and their records stay `running`,
and a running record whose process is gone counts as not done, so the next batch builds it again (the same
happens after a crash or SIGKILL). A second Ctrl-C leaves at once. Each job builds into
`<catalog>/envs/<job id>`; retrying a failed job replaces its failed record when the rebuild starts.
"""
from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, Field

from autoinstall.batch.entries import BatchEntry, LineError
from autoinstall.options import BatchOptions, BuildOptions
from autoinstall.record.lock import BuildLockedError
from envs.catalog import Catalog, EnvRecord, new_owner, now, record_id, release_owner

if TYPE_CHECKING:
    from envs.spec import EnvSpec

BATCH_FORMAT = "autoinstall-batch/1"
Report = Callable[[str, str], None]
BuildFn = Callable[[str, BuildOptions, Report], "EnvSpec"]
Outcome = Literal["verified", "partial", "failed", "skipped", "interrupted", "not_started"]
_EXCEPTION_CLASSES = {"SourceError": "source_error", "EnvError": "infrastructure",
                      "ModelError": "model_error"}


class BuildInterrupted(BaseException):  # noqa: N818 (a BaseException, like KeyboardInterrupt)
    """Raised from a build's report callback after Ctrl-C; a BaseException so that no `except Exception`
    inside the pipeline turns it into a recorded failure."""


TEST_COUNTS = {"tests_collected", "tests_selected", "tests_deselected", "tests_passed", "tests_failed", "tests_errors",
               "tests_skipped", "tests_flaky"}
"""What a built entry reports of its suite, as its catalog record has it."""


class EntryResult(BaseModel):
    """What happened to one batch entry."""

    line: int
    repo: str
    commit: str | None = None
    outcome: Outcome
    id: str | None = None
    """The catalog record's id."""
    failure_class: str | None = None
    message: str = ""
    wall_s: float = 0.0
    status: str | None = None
    """The entry's catalog status after this run (for skipped entries: the record that was kept)."""
    tests_collected: int | None = None
    """The suite by its default configuration (None: not counted); the rest as in the catalog record."""
    tests_selected: int | None = None
    tests_deselected: int | None = None
    tests_passed: int = 0
    tests_failed: int = 0
    """Failed or errored (the catalog record's count); `tests_errors` of them errored."""
    tests_errors: int = 0
    tests_skipped: int = 0
    tests_flaky: int = 0


class BatchSummary(BaseModel):
    """The outcome of a batch run (`--json` prints this)."""

    format: str = BATCH_FORMAT
    catalog: str
    interrupted: bool = False
    counts: dict[str, int] = Field(default_factory=dict)
    """Entries by outcome, plus `malformed` lines."""
    by_failure_class: dict[str, int] = Field(default_factory=dict)
    """Failed entries (built in this run) by failure class."""
    results: list[EntryResult] = Field(default_factory=list)
    line_errors: list[LineError] = Field(default_factory=list)
    wall_s: float = 0.0


class BatchObserver(Protocol):
    """Receives progress from the workers (called from several threads)."""

    def started(self, entry: BatchEntry) -> None: ...
    def event(self, entry: BatchEntry, event: str, text: str) -> None: ...
    def finished(self, result: EntryResult) -> None: ...
    def stopping(self) -> None: ...
    def tick(self) -> None: ...


class NullObserver:
    """Shows nothing."""

    def started(self, entry: BatchEntry) -> None: ...
    def event(self, entry: BatchEntry, event: str, text: str) -> None: ...
    def finished(self, result: EntryResult) -> None: ...
    def stopping(self) -> None: ...
    def tick(self) -> None: ...


def failure_class_for(error: BaseException) -> str:
    """source_error / infrastructure / model_error by the error's class hierarchy (matched by name, so this
    module does not import every layer), else crash."""
    for cls in type(error).__mro__:
        if cls.__name__ in _EXCEPTION_CLASSES:
            return _EXCEPTION_CLASSES[cls.__name__]
    return "crash"


def _name(repo: str) -> str:
    return repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or repo


class _Batch:
    """The shared state of one run: the queue, the results, the stop flag."""

    def __init__(self, entries: Sequence[BatchEntry], catalog: Catalog, options: BatchOptions, build: BuildFn,
                 observer: BatchObserver) -> None:
        self.queue = deque(entries)
        self.catalog, self.options, self.build, self.observer = catalog, options, build, observer
        self.results: list[EntryResult] = []
        self.running: dict[int, BatchEntry] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.owner = new_owner()

    def worker(self, done: threading.Event) -> None:
        try:
            self._work()
        finally:
            done.set()

    def _work(self) -> None:
        while not self.stop.is_set():
            with self.lock:
                if not self.queue:
                    return
                entry = self.queue.popleft()
                self.running[id(entry)] = entry
            try:
                result = self.run_one(entry)
            except Exception as e:  # noqa: BLE001 (a bug here must not hide the entry)
                result = EntryResult(line=entry.line, repo=entry.repo, commit=entry.commit, outcome="failed",
                                     failure_class="crash", message=f"{type(e).__name__}: {e}")
            with self.lock:
                self.results.append(result)
                del self.running[id(entry)]
            self.observer.finished(result)

    def run_one(self, entry: BatchEntry) -> EntryResult:
        base = {"line": entry.line, "repo": entry.repo, "commit": entry.commit}
        job_id = record_id(entry.repo, entry.commit, None, self.options.build.model)
        env_dir = self.catalog.envs_dir / job_id
        stamp = now()
        placeholder = EnvRecord(id=job_id, repo=entry.repo, name=_name(entry.repo),
                                requested_commit=entry.commit, model=self.options.build.model,
                                status="running", env_dir=str(env_dir), owner=self.owner, created_at=stamp,
                                updated_at=stamp)
        try:
            blocking = self.catalog.claim(placeholder, retry_failed=self.options.retry_failed)
        except Exception as e:  # noqa: BLE001 (a catalog failure ends this entry, not the batch)
            return EntryResult(**base, outcome="failed", failure_class="catalog",
                               message=f"{type(e).__name__}: {e}")
        if blocking is not None:
            why = (f"being built by {blocking.owner}" if blocking.status == "running"
                   else f"already {blocking.status}" + (" (--retry-failed builds it again)"
                                                        if blocking.status in ("partial", "failed") else ""))
            return EntryResult(**base, outcome="skipped", id=blocking.id, status=blocking.status,
                               failure_class=blocking.failure_class, message=why)
        return self._build(entry, placeholder, env_dir, base)

    def _build(self, entry: BatchEntry, placeholder: EnvRecord, env_dir: Path,
               base: dict[str, object]) -> EntryResult:
        stopped = threading.Event()

        def report(event: str, text: str) -> None:
            if self.stop.is_set():
                stopped.set()
                raise BuildInterrupted
            self.observer.event(entry, event, text)

        build_options = self.options.build.model_copy(update={"commit": entry.commit, "out_dir": env_dir})
        interrupted = EntryResult(**base, outcome="interrupted", id=placeholder.id, status="running",
                                  message="stopped by Ctrl-C; the next batch builds it again")
        self.observer.started(entry)
        started = time.monotonic()
        try:
            spec = self.build(entry.repo, build_options, report)
        except (BuildInterrupted, KeyboardInterrupt):  # KeyboardInterrupt: from a sandbox interrupt_sandboxes ended
            return interrupted
        except BuildLockedError as e:  # a `run` of the same environment: it records the result
            return EntryResult(**base, outcome="skipped", id=placeholder.id, status="running", message=str(e))
        except Exception as e:  # noqa: BLE001 (one build's error is recorded; the batch goes on)
            if stopped.is_set() or self.stop.is_set():  # what the interrupt broke is no failure of the build
                return interrupted
            return self._record_error(placeholder, env_dir, e, time.monotonic() - started, base)
        if stopped.is_set():
            return interrupted
        try:
            record = self.catalog.upsert_spec(spec, env_dir, entry.commit)
        except Exception as e:  # noqa: BLE001
            return EntryResult(**base, outcome="failed", id=placeholder.id, failure_class="catalog",
                               message=f"built but not recorded: {type(e).__name__}: {e}")
        return EntryResult(**base, outcome=record.status, id=record.id,  # type: ignore[arg-type]
                           failure_class=record.failure_class, message=record.failure_message,
                           wall_s=record.wall_s, status=record.status, **record.model_dump(include=TEST_COUNTS))

    def _record_error(self, placeholder: EnvRecord, env_dir: Path, error: Exception, wall_s: float,
                      base: dict[str, object]) -> EntryResult:
        """Record a build that raised, mini-swe-agent style: the exception type, message and traceback."""
        message = f"{type(error).__name__}: {error}"[:2000]
        failure_class = failure_class_for(error)
        try:
            logs = env_dir / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            (logs / "batch-error.txt").write_text("".join(traceback.format_exception(error)))
            record = self.catalog.upsert(placeholder.model_copy(update={
                "status": "failed", "failure_class": failure_class, "failure_message": message, "owner": "",
                "wall_s": round(wall_s, 3), "updated_at": now()}))
        except Exception as e:  # noqa: BLE001
            message = f"{message} (not recorded: {type(e).__name__}: {e})"
            return EntryResult(**base, outcome="failed", id=placeholder.id, failure_class=failure_class,
                               message=message, wall_s=wall_s)
        return EntryResult(**base, outcome="failed", id=record.id, failure_class=failure_class,
                           message=message, wall_s=round(wall_s, 3), status="failed")


def _wait(done: list[threading.Event], observer: BatchObserver) -> None:
    """Until every worker has ended. Not Thread.join: in Python 3.11 a join that Ctrl-C interrupts marks the
    still running thread as ended, and the second wait would return at once (leaving its containers)."""
    for event in done:
        while not event.wait(0.2):
            observer.tick()


def run_batch(entries: Sequence[BatchEntry], catalog: Catalog, options: BatchOptions | None = None, *,
              build: BuildFn | None = None, observer: BatchObserver | None = None,
              line_errors: Sequence[LineError] = (),
              stop_running: Callable[[], object] | None = None) -> BatchSummary:
    """Build every entry not already done, `options.jobs` at a time, recording each in `catalog`.

    Args:
        entries: what to build, e.g. from `read_batch_file`.
        catalog: where records go; out dirs are `<catalog>/envs/<job id>`.
        options: jobs, retry, and the build options every entry is built with.
        build: the build function (default `autoinstall.pipeline.build_environment`); tests pass a fake.
        observer: progress display (default: none).
        line_errors: malformed lines, carried into the summary.
        stop_running: called on Ctrl-C to end what running builds are doing (default with the default
            build: `envs.docker.interrupt_sandboxes`; none otherwise).

    Returns:
        The summary. After Ctrl-C it has `interrupted=True` (nothing is half-recorded); it does not raise.
    """
    if build is None:
        # Imported here: the pipeline loads git and docker; tests pass a fake build instead.
        from autoinstall.pipeline import build_environment as build
        # Imported here too: the docker SDK loads only when builds run on this machine's engine.
        from envs.docker import interrupt_sandboxes

        stop_running = stop_running or interrupt_sandboxes
    options = options or BatchOptions()
    observer = observer or NullObserver()
    started = time.monotonic()
    batch = _Batch(entries, catalog, options, build, observer)
    summary = BatchSummary(catalog=str(catalog.root), line_errors=list(line_errors))
    done = [threading.Event() for _ in range(min(options.jobs, len(entries)))]
    threads = [threading.Thread(target=batch.worker, args=(event,), name=f"batch-{i}", daemon=True)
               for i, event in enumerate(done)]
    try:
        for thread in threads:
            thread.start()
        _wait(done, observer)
    except KeyboardInterrupt:
        batch.stop.set()
        summary.interrupted = True
        observer.stopping()
        try:
            if stop_running is not None:
                stop_running()
            _wait(done, observer)
        except KeyboardInterrupt:
            pass  # leave now: running records stay `running` and count as not done next time
    finally:
        release_owner(batch.owner)
    with batch.lock:
        results = list(batch.results)
        pending = list(batch.queue)
        abandoned = list(batch.running.values())
    results += [EntryResult(line=e.line, repo=e.repo, commit=e.commit, outcome="not_started")
                for e in pending]
    results += [EntryResult(line=e.line, repo=e.repo, commit=e.commit, outcome="interrupted",
                            message="abandoned by a second Ctrl-C") for e in abandoned]
    summary.results = sorted(results, key=lambda r: r.line)
    summary.wall_s = round(time.monotonic() - started, 3)
    _count(summary)
    return summary


def _count(summary: BatchSummary) -> None:
    counts = {k: 0 for k in ("verified", "partial", "failed", "skipped", "interrupted", "not_started")}
    for result in summary.results:
        counts[result.outcome] += 1
        if result.outcome in ("partial", "failed"):
            key = result.failure_class or "unknown"
            summary.by_failure_class[key] = summary.by_failure_class.get(key, 0) + 1
    counts["malformed"] = len(summary.line_errors)
    summary.counts = counts
