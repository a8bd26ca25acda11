"""One catalogued environment (`EnvRecord`, what `catalog list` shows) and the counts every surface shows of its
verification (`SuiteCounts`: the catalog record, `catalog show`, the exports' metadata, the bench rows).

The counts come from the spec alone, so a record, an export row and a bench row of the same build agree.
"""
from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from envs.spec import EnvSpec, TestRun, Verification, pass_rate

CATALOG_FORMAT = "autoinstall-catalog/1"
Status = Literal["verified", "partial", "failed", "running"]


class SuiteCounts(BaseModel):
    """What verification counted, in tests (not deselection entries). A count is None where it was not taken
    (a runner that cannot list its suite; no verification)."""

    status: Literal["verified", "partial", "failed"]
    collected: int | None = None
    """The suite by its default configuration (pytest's ini/testpaths, the default tox env, the CI step)."""
    selected: int | None = None
    """What verification ran: the test command's collection with the deselections."""
    deselected: int | None = None
    """Tests of the test command left out (collected with and without the selection)."""
    deselections: int = 0
    """Deselection entries (test ids or whole files) in the spec."""
    passed: int = 0
    """Tests that passed in every verification run."""
    failed: int = 0
    errors: int = 0
    """Errored tests, and tests missing from a run."""
    skipped: int = 0
    flaky: int = 0
    """Tests whose outcome differed between runs (counted as not passed, left out of reward sets)."""
    stubs: int = 0
    threshold: float | None = None
    """The pass rate the suite needed."""
    max_deselected: float | None = None
    """The cap: the largest share of the suite that may be deselected for `verified`."""

    @classmethod
    def from_spec(cls, spec: EnvSpec) -> SuiteCounts:
        v = spec.verification
        base = cls(status=spec.status, deselections=len(spec.deselected), stubs=len(spec.stubs))
        if v is None:
            return base
        counts = v.counts or _last_run_counts(v)
        collection = v.collection
        return base.model_copy(update={
            "collected": collection.suite if collection else None,
            "selected": collection.selected if collection else None,
            "deselected": collection.deselected if collection else None,
            "passed": counts.get("passed", 0), "failed": counts.get("failed", 0), "errors": counts.get("error", 0),
            "skipped": counts.get("skipped", 0), "flaky": counts.get("flaky", len(v.flaky)),
            "threshold": v.threshold, "max_deselected": v.max_deselected})

    @property
    def pass_rate(self) -> float:
        """Passed over the tests that ran, flaky ones counting as not passed (verification's own rule)."""
        return pass_rate({"passed": self.passed, "failed": self.failed, "error": self.errors, "flaky": self.flaky})

    def metadata(self) -> dict[str, int | float | str]:
        """The counts for an export's metadata: what was not counted is left out (TOML has no null)."""
        return self.model_dump(exclude_none=True)


def _last_run_counts(v: Verification) -> dict[str, int]:
    """Counts of a record written before verification combined its runs: the last run's, flaky tests apart."""
    last: TestRun | None = v.last_run
    if last is None:
        return {}
    if not last.results:
        return {**last.counts, "flaky": len(v.flaky)}
    flaky = set(v.flaky)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "flaky": len(flaky)}
    for r in last.results:
        if r.test_id not in flaky:
            counts[r.outcome] += 1
    return counts


class EnvRecord(BaseModel):
    """One catalogued environment (what `catalog list` shows); the full spec is stored beside it."""

    format: str = CATALOG_FORMAT
    id: str
    """12 hex digits: a stable hash of (repo, commit, base image, model)."""
    repo: str
    name: str = ""
    commit: str | None = None
    commit_date: str | None = None
    requested_commit: str | None = None
    """The revision asked for (branch, tag, sha); None means the default branch's HEAD."""
    model: str
    base_image: str | None = None
    python: str | None = None
    status: Status
    failure_class: str | None = None
    """A spec FailureClass, or for builds that raised: source_error, infrastructure, model_error, crash."""
    failure_message: str = ""
    image: str | None = None
    env_dir: str
    """Where spec.json, Dockerfile and logs/ live."""
    tests_passed: int = 0
    """Tests that passed in every verification run."""
    tests_failed: int = 0
    """Failed and errored tests (and those missing from a run)."""
    tests_errors: int = 0
    """Of `tests_failed`, those that errored (or were missing from a run)."""
    tests_skipped: int = 0
    tests_flaky: int = 0
    """Tests whose outcome differed between the verification runs (not counted as passed)."""
    tests_collected: int | None = None
    """The suite's size by its default configuration (None when the runner cannot collect)."""
    tests_selected: int | None = None
    """What verification ran: the test command's collection with the deselections."""
    tests_deselected: int | None = None
    """Tests of the test command left out by deselections."""
    stubs: int = 0
    threshold: float | None = None
    """The pass rate verification asked for."""
    max_deselected: float | None = None
    """The deselection cap verification applied (a share of the suite)."""
    wall_s: float = 0.0
    owner: str = ""
    """For running records: host:pid:token of the process building it."""
    created_at: str
    updated_at: str


def record_id(repo: str, commit: str | None, base_image: str | None, model: str) -> str:
    """The stable 12-hex id of (repository, commit, base image, model)."""
    key = "\0".join((repo, commit or "", base_image or "", model))
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def record_from_spec(spec: EnvSpec, env_dir: Path, requested_commit: str | None = None) -> EnvRecord:
    """The catalog record summarising a spec."""
    src = spec.source
    n = SuiteCounts.from_spec(spec)
    stamp = now()
    return EnvRecord(
        id=record_id(src.repo, src.commit, spec.base_image, spec.model), repo=src.repo, name=src.name,
        commit=src.commit, commit_date=src.commit_date, requested_commit=requested_commit, model=spec.model,
        base_image=spec.base_image, python=spec.python, status=spec.status,
        failure_class=spec.failure.failure_class if spec.failure else None,
        failure_message=spec.failure.message if spec.failure else "", image=spec.image, env_dir=str(env_dir),
        tests_passed=n.passed, tests_failed=n.failed + n.errors, tests_errors=n.errors, tests_skipped=n.skipped,
        tests_flaky=n.flaky, tests_collected=n.collected, tests_selected=n.selected, tests_deselected=n.deselected,
        stubs=n.stubs, threshold=n.threshold, max_deselected=n.max_deselected, wall_s=spec.timings.total_s,
        created_at=spec.created_at or stamp, updated_at=stamp)
