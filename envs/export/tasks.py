"""The task store the exports read: $AUTOINSTALL_HOME/tasks/<env_id>.jsonl, one envs.task.Task per line.

`autoinstall tasks ENV_ID` (autoinstall/tasks/) writes it; `export --tasks` reads it for the selected
environments and writes one Harbor task, SWE-bench row or verl row per task.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from envs.export.common import Entry, ExportError
from envs.home import autoinstall_home
from envs.task import Task, TaskFilter

TASKS_DIR = "tasks"


def tasks_path(env_id: str, home: Path | None = None) -> Path:
    """Where the tasks of one environment are stored."""
    return (home or autoinstall_home()) / TASKS_DIR / f"{env_id}.jsonl"


def read_tasks(env_id: str, home: Path | None = None) -> list[Task]:
    """The stored tasks of one environment ([] when it has none).

    Raises:
        ExportError: a line is not a task (naming the file and line).
    """
    path = tasks_path(env_id, home)
    if not path.is_file():
        return []
    tasks = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.model_validate_json(line))
        except ValidationError as e:
            msg = (f"{path}:{number} is not a task ({e.error_count()} errors, first: {e.errors()[0]['msg']}); "
                   f"regenerate it with `autoinstall tasks {env_id}`.")
            raise ExportError(msg) from e
    return tasks


@dataclass(frozen=True)
class TaskEntry:
    """One task to export, with the environment it is built on."""

    entry: Entry
    task: Task

    @property
    def slug(self) -> str:
        """The instance id made safe for directories, image repositories and Harbor task names."""
        return re.sub(r"[^a-z0-9._-]+", "-", self.task.instance_id.lower()).strip("-._") or "task"

    @property
    def tests(self) -> list[str]:
        """What scores the task: every FAIL_TO_PASS and every PASS_TO_PASS test must pass."""
        return [*self.task.FAIL_TO_PASS, *self.task.PASS_TO_PASS]


def select_tasks(entries: list[Entry], home: Path | None = None,
                 chosen: TaskFilter | None = None) -> list[TaskEntry]:
    """The stored tasks of the selected environments that `chosen` takes (each with the chosen statement
    style as its `problem_statement`), in order.

    Raises:
        ExportError: none of them has tasks (saying how to make some), none matches `chosen` (saying how many
            there are), or a store line is not a task.
    """
    stored = [(e, t) for e in entries for t in read_tasks(e.record.id, home)]
    chosen = chosen or TaskFilter()
    selected = [TaskEntry(e, t) for e, t in stored for t in chosen.apply([t])]
    if stored and not selected:
        asked = chosen.model_dump(exclude_defaults=True)
        msg = (f"None of the {len(stored)} stored tasks matches {asked}; see `autoinstall tasks list --env ID` "
               "for their kinds, difficulties and statements, or export with fewer conditions.")
        raise ExportError(msg)
    if not selected:
        names = ", ".join(f"{e.record.id} ({e.record.name or e.record.repo})" for e in entries)
        where = tasks_path("<id>", home).parent
        msg = (f"No tasks to export: {names} {'has' if len(entries) == 1 else 'have'} none in {where}. "
               "Make some with `autoinstall tasks ENV_ID`, or export without --tasks.")
        raise ExportError(msg)
    return selected
