"""Batch builds: many repositories into one catalog.

- `entries.py` reads the batch file (lines or JSON Lines) into `BatchEntry`s and `LineError`s.
- `runner.py` `run_batch()`: the thread pool, resume/claim logic, Ctrl-C handling, `BatchSummary`.
- `ray_executor.py` `RayExecutor`: the same builds as Ray tasks on a cluster, images pushed to a registry.
- `fake.py` `fake_build` for tests; the live view and the final table are the CLI's
  (autoinstall/commands/batch_display.py).
"""
from __future__ import annotations

from autoinstall.batch.entries import BatchEntry, LineError, parse_batch, read_batch_file
from autoinstall.batch.runner import BatchOptions, BatchSummary, EntryResult, run_batch

__all__ = ["BatchEntry", "BatchOptions", "BatchSummary", "EntryResult", "LineError", "parse_batch",
           "read_batch_file", "run_batch"]
