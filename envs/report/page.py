"""The report's HTML: the sections around the charts, and a sortable row per environment.

Every text that comes from a record (repository names, commits, failure messages and evidence, paths) goes
through `text()` (escaped, control characters dropped); links to logs are file:// URIs made by pathlib
(percent-encoded), then escaped.
"""
from __future__ import annotations

import html
import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from string import Template

from envs.report import plots
from envs.report.rows import EnvRow

TEMPLATE = Path(__file__).parent / "templates" / "report.html"
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def text(value: object) -> str:
    """A stranger's text as HTML text or an attribute value: escaped, control characters dropped."""
    return html.escape(_CONTROLS.sub("", str(value)), quote=True)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def log_link(row: EnvRow) -> str:
    """A file:// link to the build's log, marked when it is gone from disk."""
    uri = Path(row.log).absolute().as_uri()
    name = Path(row.log).name
    gone = "" if row.log_exists else ' <span class="gone">(gone)</span>'
    return f'<a href="{text(uri)}" title="{text(row.log)}">{text(name)}</a>{gone}'


def _cell(value: object, sort: object | None = None, cls: str = "") -> str:
    key = f' data-v="{text(sort)}"' if sort is not None else ""
    klass = f' class="{cls}"' if cls else ""
    return f"<td{key}{klass}>{value}</td>"


def _table(headers: Sequence[str], rows: Sequence[str], cls: str = "", numeric: Sequence[bool] = ()) -> str:
    heads = "".join(f'<th{" data-num" if i < len(numeric) and numeric[i] else ""}>{text(h)}</th>'
                    for i, h in enumerate(headers))
    return f'<table class="{cls}"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{text(title)}</h2>{body}</section>'


def status_section(rows: Sequence[EnvRow]) -> str:
    if not rows:
        return section("status", "Status by ecosystem", "<p>The catalog is empty.</p>")
    counts = Counter((r.lead, r.record.status) for r in rows)
    leads = sorted({r.lead for r in rows})
    lines = [f"<tr><td>{text(e)}</td>" + "".join(_cell(counts[e, s]) for s in plots.STATUSES) +
             _cell(sum(counts[e, s] for s in plots.STATUSES)) + "</tr>" for e in leads]
    table = _table(["ecosystem", *plots.STATUSES, "all"], lines, "small")
    return section("status", "Status by ecosystem", plots.status_by_ecosystem(rows) + table)


def _failure_rows(rows: Sequence[EnvRow]) -> str:
    lines = [f"<tr><td>{text(r.record.name or r.record.repo)}<br><code>{text(r.record.id)}</code></td>"
             f"<td><pre>{text(r.failure) or '&mdash;'}</pre></td><td>{log_link(r)}</td></tr>" for r in rows]
    return _table(["environment", "message and evidence", "log"], lines, "failures")


def failures_section(rows: Sequence[EnvRow]) -> str:
    failed = [r for r in rows if r.record.failure_class]
    if not failed:
        return section("failures", "Failure classes", "<p>No build failed.</p>")
    by_class: dict[str, list[EnvRow]] = {}
    for r in failed:
        by_class.setdefault(r.record.failure_class, []).append(r)
    ordered = sorted(by_class.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    details = "".join(f'<details class="failure-class"><summary><b>{text(c)}</b>: {len(rs)}</summary>'
                      f"{_failure_rows(rs)}</details>" for c, rs in ordered)
    return section("failures", "Failure classes", plots.failure_classes(failed) + details)


def _spread(values: Sequence[float], show: Callable[[float], str]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"median {show(statistics.median(ordered))}, p90 {show(p90)}, max {show(ordered[-1])} "
            f"over {len(ordered)}")


def times_section(rows: Sequence[EnvRow]) -> str:
    times = [r.record.wall_s for r in rows if r.record.status in plots.FINISHED and r.record.wall_s > 0]
    if not times:
        return section("times", "Build time", "<p>No finished build has a time.</p>")
    note = f"<p>Build time: {_spread(times, minutes)}; {minutes(sum(times))} in all.</p>"
    return section("times", "Build time", plots.build_times(rows) + note)


def suites_section(rows: Sequence[EnvRow]) -> str:
    sizes = [float(r.suite) for r in rows if r.record.status in plots.FINISHED and r.suite]
    if not sizes:
        return section("suites", "Suite sizes", "<p>No suite was counted.</p>")
    uncounted = sum(1 for r in rows if r.record.status in plots.FINISHED and not r.suite)
    note = (f"<p>Tests per suite: {_spread(sizes, lambda v: f'{v:.0f}')}; "
            f"{uncounted} finished builds without a count.</p>")
    return section("suites", "Suite sizes", plots.suite_sizes(rows) + note)


def tasks_section(rows: Sequence[EnvRow], facets: Sequence[str]) -> str:
    total = sum(r.tasks.total for r in rows)
    with_tasks = sum(1 for r in rows if r.tasks.total)
    unreadable = [r for r in rows if r.tasks.error]
    note = f"<p>{total} tasks in {with_tasks} environments.</p>"
    if unreadable:
        items = "".join(f"<li><code>{text(r.record.id)}</code>: {text(r.tasks.error)}</li>" for r in unreadable)
        note += f"<p>Task stores that could not be read:</p><ul>{items}</ul>"
    if not total:
        return section("tasks", "Tasks per environment", note)
    return section("tasks", "Tasks per environment", plots.tasks_per_environment(rows, facets) + note)


def _facet_values(rows: Sequence[EnvRow], facets: Sequence[str]) -> list[tuple[str, str]]:
    return sorted({(f, v) for r in rows for f in facets for v in r.tasks.by.get(f, {})})


def _env_row(r: EnvRow, columns: Sequence[tuple[str, str]]) -> str:
    rec, suite = r.record, r.suite
    name, commit, failed = rec.name or rec.repo, (rec.commit or "")[:8], rec.tests_failed
    task_counts = [r.tasks.by.get(f, {}).get(v, 0) for f, v in columns]
    cells = [
        _cell(f"<code>{text(rec.id)}</code>", rec.id), _cell(text(name), name, "repo"),
        _cell(f'<span class="st {text(rec.status)}">{text(rec.status)}</span>', rec.status),
        _cell(text(r.ecosystem), r.ecosystem), _cell(text(commit), commit),
        _cell(minutes(rec.wall_s) if rec.wall_s else "", rec.wall_s),
        _cell("" if suite is None else suite, -1 if suite is None else suite),
        _cell(rec.tests_passed, rec.tests_passed), _cell(failed, failed), _cell(rec.tests_flaky, rec.tests_flaky),
        _cell(r.tasks.total if not r.tasks.error else "?", r.tasks.total), *(_cell(n, n) for n in task_counts),
        _cell(text(rec.failure_class or ""), rec.failure_class or ""), _cell(log_link(r), r.log)]
    return f'<tr data-status="{text(rec.status)}">{"".join(cells)}</tr>'


def environments_section(rows: Sequence[EnvRow], facets: Sequence[str]) -> str:
    columns = _facet_values(rows, facets)
    headers = ["id", "repository", "status", "ecosystem", "commit", "build time", "suite", "passed",
               "failed", "flaky", "tasks", *(v for _, v in columns), "failure", "log"]
    numeric = [False] * 5 + [True] * (6 + len(columns)) + [False, False]
    body = (f'<p><input id="filter" type="search" placeholder="filter rows" aria-label="filter rows"> '
            f'<span id="shown">{len(rows)}</span> of {len(rows)} shown; click a heading to sort.</p>'
            + _table(headers, [_env_row(r, columns) for r in rows], "sortable", numeric))
    return section("environments", "Environments", body)


def render(rows: Sequence[EnvRow], facets: Sequence[str], catalog: str, generated_at: str) -> str:
    """The whole page."""
    statuses = Counter(r.record.status for r in rows)
    summary = ", ".join(f'<span class="st {s}">{statuses[s]} {s}</span>' for s in plots.STATUSES if statuses[s])
    body = "".join((status_section(rows), failures_section(rows), times_section(rows), suites_section(rows),
                    tasks_section(rows, facets), environments_section(rows, facets)))
    return Template(TEMPLATE.read_text()).substitute(
        catalog=text(catalog), generated_at=text(generated_at), count=len(rows), summary=summary or "empty",
        body=body)
