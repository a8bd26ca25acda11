"""What the user sees during a batch: an overall progress bar, one line per running build, a final table.

`LiveDisplay` is the runner's BatchObserver (autoinstall/batch/runner.py); rows fit the terminal's width.
"""
from __future__ import annotations

import threading
import time
from collections import Counter

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autoinstall.batch.entries import BatchEntry
from autoinstall.batch.runner import BatchSummary, EntryResult
from autoinstall.commands.output import escape, print_line, print_table

_MARKS = {"verified": "[green]✓[/]", "partial": "[yellow]~[/]", "failed": "[red]✗[/]", "skipped": "[dim]-[/]",
          "interrupted": "[yellow]![/]"}


class LiveDisplay:
    """A BatchObserver drawing with rich.Live; prints one line per finished entry above the live area."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.progress = Progress(TextColumn("[bold]batch[/]"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[tally]}"), TimeElapsedColumn(), console=console)
        self.task = self.progress.add_task("batch", total=total, tally="")
        self.tally: dict[str, int] = {}
        self.running: dict[int, tuple[BatchEntry, str, float]] = {}
        self.lock = threading.Lock()
        self.note = ""
        self.live = Live(self._render(), console=console, refresh_per_second=4, transient=True)

    def __enter__(self) -> LiveDisplay:
        self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.update(self._render())
        self.live.stop()

    def started(self, entry: BatchEntry) -> None:
        with self.lock:
            self.running[id(entry)] = (entry, "starting", time.monotonic())

    def event(self, entry: BatchEntry, event: str, text: str) -> None:
        if event not in ("phase", "step", "repair"):
            return
        with self.lock:
            if id(entry) in self.running:
                _, _, t0 = self.running[id(entry)]
                self.running[id(entry)] = (entry, f"{event}: {text}", t0)

    def finished(self, result: EntryResult) -> None:
        with self.lock:
            self.running = {k: v for k, v in self.running.items() if v[0].line != result.line}
            self.tally[result.outcome] = self.tally.get(result.outcome, 0) + 1
            tally = " ".join(f"{k} {v}" for k, v in sorted(self.tally.items()))
        self.progress.update(self.task, advance=1, tally=tally)
        detail = f"{result.failure_class}: {result.message}" if result.outcome == "failed" else result.message
        took = f" {result.wall_s:.1f}s" if result.wall_s else ""
        where = result.repo + (f"@{result.commit}" if result.commit else "")
        mark = _MARKS.get(result.outcome, "?")
        print_line(self.console, f"{mark} {escape(where)} [dim]{escape(detail)}{took}[/]")

    def stopping(self) -> None:
        self.note = ("[yellow]interrupted:[/] no new builds; running ones stop at their next step "
                     "(Ctrl-C again to leave now; they are built again next time)")

    def tick(self) -> None:
        self.live.update(self._render())

    def _render(self) -> Group:
        repo_width = max(20, self.console.width // 3)
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(no_wrap=True, max_width=repo_width)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        table.add_column(no_wrap=True, justify="right")
        now = time.monotonic()
        with self.lock:
            rows = sorted(self.running.values(), key=lambda v: v[2])
        for entry, doing, t0 in rows:
            repo = entry.repo[-repo_width:]  # the end of a URL says the most
            table.add_row(f"[cyan]{escape(repo)}[/]", escape(doing), f"[dim]{now - t0:.0f}s[/]")
        parts = [self.progress, table] + ([self.note] if self.note else [])
        return Group(*parts)


def print_summary(console: Console, summary: BatchSummary) -> None:
    """The final table: entries by outcome and failure class (skipped ones by the record kept), then the
    malformed lines."""
    groups = Counter((r.outcome, r.status or "", r.failure_class or "") for r in summary.results)
    order = list(_MARKS) + ["not_started"]
    rows = [[escape(outcome), escape(status), escape(cls), str(n)] for (outcome, status, cls), n
            in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), -kv[1]))]
    if summary.line_errors:
        rows.append(["malformed", "", "", str(len(summary.line_errors))])
    print_table(console, f"Batch ({summary.wall_s:.0f}s){' — interrupted' if summary.interrupted else ''}",
                ["outcome", "status", "failure class", "count"], rows, right=["count"])
    _print_tests(console, summary)
    for error in summary.line_errors:
        print_line(console, f"[red]line {error.line}:[/] {escape(error.message)}: "
                            f"[dim]{escape(error.text.strip())}[/]")
    if summary.interrupted:
        console.print("[yellow]interrupted:[/] finished builds are recorded; run the same command again to "
                      "build the rest", highlight=False)


SHOWN_ENTRIES = 20
"""Built entries listed one per row under the summary; more get the totals only (`catalog list` has them all)."""


def _print_tests(console: Console, summary: BatchSummary) -> None:
    """The suites of the entries built in this run: collected/deselected and outcomes, per entry and in all."""
    built = [r for r in summary.results if r.outcome in ("verified", "partial", "failed") and r.id]
    if not built:
        return

    def suite(r: EntryResult) -> str:
        if r.tests_collected is None:
            return "?"
        selected = "?" if r.tests_selected is None else str(r.tests_selected)
        return f"{r.tests_collected}/{selected}" + (f" -{r.tests_deselected}" if r.tests_deselected else "")

    def outcomes(r: EntryResult) -> str:
        return f"{r.tests_passed}/{r.tests_failed - r.tests_errors}/{r.tests_errors}/{r.tests_skipped}/{r.tests_flaky}"

    if len(built) <= SHOWN_ENTRIES:
        rows = [[escape(r.repo[-50:]), escape(r.outcome), suite(r), outcomes(r)] for r in built]
        print_table(console, "Suites built in this run", ["repository", "status", "suite/selected -deselected",
                                                           "passed/failed/errors/skipped/flaky"], rows)
    total = sum(r.tests_collected or 0 for r in built)
    selected = sum(r.tests_selected or 0 for r in built)
    deselected = sum(r.tests_deselected or 0 for r in built)
    counted = sum(r.tests_collected is not None for r in built)
    errors = sum(r.tests_errors for r in built)
    console.print(f"tests: {total} collected in {counted} of {len(built)} suites, {selected} selected, "
                  f"{deselected} deselected; {sum(r.tests_passed for r in built)} passed, "
                  f"{sum(r.tests_failed for r in built) - errors} failed, {errors} errors, "
                  f"{sum(r.tests_skipped for r in built)} skipped, {sum(r.tests_flaky for r in built)} flaky",
                  highlight=False)
