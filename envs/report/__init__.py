"""The catalog report: one self-contained HTML page about every environment of a catalog.

    summary = write_report(Catalog(), Path("report.html"))

It shows status by ecosystem, failure classes with a file:// link to each build's log, the build time
distribution, suite sizes, tasks per environment and a sortable row per environment; the charts are inline SVG
drawn by matplotlib. The page loads nothing at view time (its Content-Security-Policy forbids it), and every
text that comes from a record is escaped. The catalog and the task store are only read.

Files: rows.py (one EnvRow per record: catalog, spec, task store), plots.py (matplotlib -> SVG),
page.py (the HTML), templates/report.html (the page around it, with its style and sorting script).
"""
from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from envs.catalog import Catalog, CatalogError, now
from envs.report.page import render
from envs.report.rows import TASK_FACETS, EnvRow, read_rows

__all__ = ["EnvRow", "ReportError", "ReportSummary", "write_report"]


class ReportError(CatalogError):
    """The report cannot be written where it was asked; the message says what to do instead."""


class ReportSummary(BaseModel):
    """What `write_report` wrote."""

    path: str
    environments: int
    statuses: dict[str, int]
    tasks: int
    bytes: int


def write_report(catalog: Catalog, out: Path, *, tasks_home: Path | None = None) -> ReportSummary:
    """Write the report of `catalog` to `out` (replaced whole: a reader never sees half of it).

    Args:
        catalog: the catalog to report on.
        out: the HTML file to write.
        tasks_home: the directory holding tasks/ (default: $AUTOINSTALL_HOME).

    Raises:
        ReportError: `out` cannot be written.
    """
    rows = read_rows(catalog, tasks_home)
    page = render(rows, TASK_FACETS, str(catalog.root), now()).encode()
    out = out.expanduser().absolute()
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(page)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would keep the page from whoever the file is shared with
        os.replace(tmp, out)
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        msg = f"Cannot write the report to {out} ({e.strerror or e}); pass --out a file in a writable folder."
        raise ReportError(msg) from e
    return ReportSummary(path=str(out), environments=len(rows), statuses=dict(Counter(r.record.status for r in rows)),
                         tasks=sum(r.tasks.total for r in rows), bytes=len(page))
