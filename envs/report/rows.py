"""What the report shows of each catalogued environment: one `EnvRow` per record, read from the catalog, the
stored spec and the task store (envs/export/tasks.py)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from envs.catalog import Catalog, EnvRecord
from envs.export.common import ExportError
from envs.export.tasks import read_tasks
from envs.spec import EnvSpec

TASK_FACETS: tuple[str, ...] = ("kind",)
"""Task fields the report counts per value (a column per value, a chart per field); add a field of
envs.task.Task here and it is counted everywhere."""
EVIDENCE_CHARS = 600
"""How much of a failure's evidence (its tail) the report shows."""
UNKNOWN = "unknown"
"""The ecosystem of a record without a spec (a build that raised before it was recorded)."""


class TaskCounts(BaseModel):
    """The stored tasks of one environment."""

    total: int = 0
    by: dict[str, dict[str, int]] = Field(default_factory=dict)
    """facet -> value -> tasks (TASK_FACETS)."""
    error: str = ""
    """Why the store could not be read (its tasks are then not counted)."""


class EnvRow(BaseModel):
    """One environment as the report shows it: its catalog record and what the spec and the task store add.
    Every text field may hold a stranger's text."""

    record: EnvRecord
    ecosystem: str
    """As the plan records it: "python", "python+rust", "python@packages/core"."""
    lead: str
    """The leading ecosystem alone ("python"): what the status chart groups by."""
    failure: str = ""
    """The failure's message and the tail of its evidence."""
    tasks: TaskCounts = Field(default_factory=TaskCounts)
    log: str
    """The build's log: the last failing step's output for a failed or partial build, else the logs folder."""
    log_exists: bool = False

    @property
    def suite(self) -> int | None:
        """The suite's size: its default collection, else what verification selected."""
        r = self.record
        return r.tests_collected if r.tests_collected is not None else r.tests_selected


def lead_ecosystem(ecosystem: str) -> str:
    """"python+rust" and "python@packages/core" -> "python"."""
    return re.split(r"[+@]", ecosystem, maxsplit=1)[0] or UNKNOWN


def build_log(record: EnvRecord, spec: EnvSpec | None) -> Path:
    """The log that tells why a build ended as it did (see EnvRow.log)."""
    env_dir = Path(record.env_dir)
    if spec is not None and record.status in ("failed", "partial"):
        failing = [e for e in spec.log if e.log_file and (e.exit_code != 0 or e.timed_out)]
        if failing:
            return env_dir / failing[-1].log_file
    return env_dir / "logs"


def failure_text(record: EnvRecord, spec: EnvSpec | None) -> str:
    """The failure's message, then the tail of its evidence."""
    failure = spec.failure if spec is not None else None
    message = failure.message if failure is not None else record.failure_message
    evidence = failure.evidence[-EVIDENCE_CHARS:] if failure is not None and failure.evidence else ""
    return "\n".join(part for part in (message, evidence) if part)


def task_counts(env_id: str, home: Path | None = None) -> TaskCounts:
    """The stored tasks of one environment by TASK_FACETS; a store that cannot be read is noted, not raised."""
    try:
        tasks = read_tasks(env_id, home)
    except ExportError as e:
        return TaskCounts(error=str(e))
    by = {facet: dict(Counter(str(getattr(t, facet, None) or "unset") for t in tasks)) for facet in TASK_FACETS}
    return TaskCounts(total=len(tasks), by=by)


def env_row(record: EnvRecord, spec: EnvSpec | None, tasks: TaskCounts) -> EnvRow:
    ecosystem = spec.plan.ecosystem if spec is not None else UNKNOWN
    log = build_log(record, spec)
    return EnvRow(record=record, ecosystem=ecosystem, lead=lead_ecosystem(ecosystem),
                  failure=failure_text(record, spec), tasks=tasks, log=str(log), log_exists=log.exists())


def read_rows(catalog: Catalog, tasks_home: Path | None = None) -> list[EnvRow]:
    """Every record of the catalog, newest first, with its spec's facts and its stored tasks.

    Args:
        catalog: the catalog to read (only read).
        tasks_home: the directory holding tasks/ (default: $AUTOINSTALL_HOME).
    """
    return [env_row(r, catalog.get_spec(r.id) if r.status != "running" else None, task_counts(r.id, tasks_home))
            for r in catalog.list()]
