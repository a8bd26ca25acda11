"""The task store: $AUTOINSTALL_HOME/tasks/<env_id>.jsonl, one envs.task.Task per line.

The exports read it through envs/export/tasks.py (same path). Writes are atomic: the new file is written
beside the old one and renamed over it, so an interrupted write leaves the previous store whole.
"""
from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path

from pydantic import ValidationError

from autoinstall.errors import AutoinstallError
from envs.home import autoinstall_home
from envs.task import DIFFICULTIES, Task

KIND_NAMES = ("history", "mutation", "combined")

TASKS_DIR = "tasks"


class TaskStoreError(AutoinstallError):
    """The task store cannot be read or written; the message names the file."""


class TaskStore:
    """The tasks of every environment under `root` (default: $AUTOINSTALL_HOME/tasks)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or autoinstall_home() / TASKS_DIR

    def path(self, env_id: str) -> Path:
        return self.root / f"{env_id}.jsonl"

    def read(self, env_id: str) -> list[Task]:
        """The stored tasks of one environment ([] when none)."""
        path = self.path(env_id)
        if not path.is_file():
            return []
        tasks = []
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                tasks.append(Task.model_validate_json(line))
            except ValidationError as e:
                msg = f"{path}:{number} is not a task ({e.errors()[0]['msg']}); remove the line or the file."
                raise TaskStoreError(msg) from e
        return tasks

    def write(self, env_id: str, tasks: list[Task]) -> Path:
        """Replace the tasks of one environment, atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path(env_id)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{env_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.writelines(task.model_dump_json() + "\n" for task in tasks)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def merge(self, env_id: str, tasks: list[Task]) -> list[Task]:
        """Add `tasks` to the stored ones (a task with the same instance_id is replaced); returns them all."""
        merged = {t.instance_id: t for t in self.read(env_id)}
        merged.update((t.instance_id, t) for t in tasks)
        everything = sorted(merged.values(), key=lambda t: t.instance_id)
        self.write(env_id, everything)
        return everything

    def counts(self) -> dict[str, int]:
        """env_id -> number of stored tasks, for every environment with a store file."""
        if not self.root.is_dir():
            return {}
        return {p.stem: sum(1 for line in p.read_text().splitlines() if line.strip())
                for p in sorted(self.root.glob("*.jsonl"))}


def task_counts(tasks: list[Task]) -> dict[str, int]:
    """Tasks by kind and by difficulty (`unknown`, when any: made before difficulty was recorded)."""
    kinds = Counter(t.kind for t in tasks)
    buckets = Counter(t.difficulty or "unknown" for t in tasks)
    return {"tasks": len(tasks), **{k: kinds[k] for k in KIND_NAMES}, **{d: buckets[d] for d in DIFFICULTIES},
            **({"unknown": buckets["unknown"]} if buckets["unknown"] else {})}
