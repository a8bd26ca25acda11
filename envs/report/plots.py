"""The report's charts, drawn by matplotlib's SVG backend and returned as inline <svg> text.

Text is drawn as paths (no font is needed to view it), ids are salted by a constant (the same chart gives the
same text), math text is off (a label is shown as written, "$" and all), and matplotlib is imported only when a chart is
drawn: `autoinstall` itself starts without it.
"""
from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from envs.report.rows import EnvRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import XAxis, YAxis
    from matplotlib.figure import Figure

STATUSES = ("verified", "partial", "failed", "running")
COLOURS = {"verified": "#2e7d32", "partial": "#f9a825", "failed": "#c62828", "running": "#9e9e9e"}
FINISHED = STATUSES[:3]
STYLE = {"svg.fonttype": "path", "svg.hashsalt": "autoinstall-report", "text.parse_math": False,
         "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
WIDTH = 7.0
"""Inches; the page scales every chart to its column."""


@contextmanager
def _figure(height: float, columns: int = 1) -> Iterator[tuple[Figure, list[Axes]]]:
    # Imported here: matplotlib takes seconds to load and only the report draws.
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(WIDTH, height), layout="constrained")
        yield fig, list(fig.subplots(1, columns, squeeze=False)[0])


def _counts(axis: XAxis | YAxis) -> None:
    """Ticks at whole numbers only: the axis counts environments or tasks."""
    # Imported here: matplotlib loads only when a chart is drawn.
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _svg(fig: Figure) -> str:
    """The figure as an <svg> element (without the XML prolog, which HTML does not take)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _bins(values: Sequence[float]) -> tuple[list[float], bool]:
    """Histogram edges, and whether they are log-spaced (when the values span more than two decades)."""
    # Imported here: numpy comes with matplotlib, loaded only when a chart is drawn.
    import numpy as np

    low, high = max(min(values), 1e-9), max(max(values), 1e-9)
    if high / low > 100:
        return list(np.geomspace(low, high * 1.001, 16)), True
    return list(np.linspace(0, high * 1.001 if high > 0 else 1, 13)), False


def status_by_ecosystem(rows: Sequence[EnvRow]) -> str:
    """Horizontal stacked bars: environments per leading ecosystem, by status."""
    counts = Counter((r.lead, r.record.status) for r in rows)
    ecosystems = sorted({r.lead for r in rows}, key=lambda e: (-sum(counts[e, s] for s in STATUSES), e))
    with _figure(0.9 + 0.35 * len(ecosystems)) as (fig, (ax,)):
        left = [0] * len(ecosystems)
        for status in STATUSES:
            widths = [counts[e, status] for e in ecosystems]
            if any(widths):
                bars = ax.barh(ecosystems, widths, left=left, color=COLOURS[status], label=status)
                ax.bar_label(bars, labels=[str(w) if w else "" for w in widths], label_type="center",
                             color="white", fontsize=8)
                left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.invert_yaxis()
        _counts(ax.xaxis)
        ax.set_xlabel("environments")
        ax.legend(loc="lower right", frameon=False, ncols=4)
        return _svg(fig)


def failure_classes(rows: Sequence[EnvRow]) -> str:
    """Horizontal bars: builds per failure class (failed and partial ones), most frequent first."""
    counts = Counter(r.record.failure_class for r in rows if r.record.failure_class)
    classes = [c for c, _ in counts.most_common()]
    with _figure(0.8 + 0.3 * len(classes)) as (fig, (ax,)):
        bars = ax.barh(classes, [counts[c] for c in classes], color=COLOURS["failed"])
        ax.bar_label(bars, padding=3, fontsize=8)
        ax.invert_yaxis()
        _counts(ax.xaxis)
        ax.set_xlabel("builds")
        return _svg(fig)


def _stacked_histogram(ax: Axes, values: dict[str, list[float]]) -> None:
    # Imported here: matplotlib loads only when a chart is drawn.
    from matplotlib.ticker import NullFormatter, StrMethodFormatter

    edges, log = _bins([v for vs in values.values() for v in vs])
    shown = [s for s in FINISHED if values.get(s)]
    ax.hist([values[s] for s in shown], bins=edges, stacked=True, color=[COLOURS[s] for s in shown],
            label=shown)
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))  # 1, 10, 100 (math text is off)
        ax.xaxis.set_minor_formatter(NullFormatter())
    _counts(ax.yaxis)
    ax.set_ylabel("environments")
    ax.legend(frameon=False)


def build_times(rows: Sequence[EnvRow]) -> str:
    """Histogram of the builds' wall time in minutes, stacked by status."""
    values = {s: [r.record.wall_s / 60 for r in rows if r.record.status == s and r.record.wall_s > 0] for s in FINISHED}
    with _figure(2.8) as (fig, (ax,)):
        _stacked_histogram(ax, values)
        ax.set_xlabel("build time (minutes)")
        return _svg(fig)


def suite_sizes(rows: Sequence[EnvRow]) -> str:
    """Histogram of the suites' sizes (tests), stacked by status."""
    values = {s: [float(r.suite) for r in rows if r.record.status == s and r.suite] for s in FINISHED}
    with _figure(2.8) as (fig, (ax,)):
        _stacked_histogram(ax, values)
        ax.set_xlabel("tests in the suite")
        return _svg(fig)


def tasks_per_environment(rows: Sequence[EnvRow], facets: Sequence[str]) -> str:
    """Left: how many verified environments have N tasks; then, per facet, the tasks by value."""
    per_env = Counter(r.tasks.total for r in rows if r.record.status == "verified")
    with _figure(2.6, 1 + len(facets)) as (fig, axes):
        ns = sorted(per_env)
        if len(ns) > 20:  # too many distinct counts for a bar each
            axes[0].hist(list(per_env.elements()), bins=20, color=COLOURS["verified"])
        else:
            axes[0].bar([str(n) for n in ns], [per_env[n] for n in ns], color=COLOURS["verified"])
        axes[0].set_xlabel("tasks")
        axes[0].set_ylabel("verified environments")
        _counts(axes[0].yaxis)
        for facet, ax in zip(facets, axes[1:], strict=True):
            totals: Counter[str] = Counter()
            for r in rows:
                totals.update(r.tasks.by.get(facet, {}))
            names = sorted(totals, key=lambda k: (-totals[k], k))
            bars = ax.bar(names, [totals[k] for k in names], color="#1565c0")
            ax.bar_label(bars, padding=2, fontsize=8)
            ax.set_xlabel(f"task {facet}")
            ax.set_ylabel("tasks")
            _counts(ax.yaxis)
        return _svg(fig)
