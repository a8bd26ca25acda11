"""Where commands print: `out` (results, stdout) and `err` (progress, errors, stderr).

On a terminal, tables are rich tables as wide as the terminal and long lines end in an ellipsis; piped,
tables become plain aligned lines and nothing is wrapped or cut at 80 columns, so `| grep` and `| less` see
whole rows.

Text from repositories (test output, logs, notes, error messages) never drives the terminal:
- this module's `escape()` (use it, not rich's) makes text `visible()` (autoinstall/terminal.py: escape
  sequences removed, other controls shown as symbols) before escaping its markup, so `[link=...]` stays text;
- `out` and `err` are `VisibleConsole`s: every text segment they draw goes through `visible()` as well,
  whatever printed it (a line, a table, the live line, a string printed with markup=False);
- their JSON is the same data, with DEL and C1 controls, which JSON leaves raw, written as `\\u` escapes;
- tracebacks and a sandboxed command's output on a terminal (`write_output`) are made `visible()` too.
"""
from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.highlighter import JSONHighlighter
from rich.json import JSON
from rich.markup import escape as rich_escape
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from autoinstall.terminal import visible

DEBUG_ENV = "AUTOINSTALL_DEBUG"
"""Set it (to anything) to get the traceback under the one-line error."""


_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")
"""What JSON (json.dumps(ensure_ascii=False), pydantic) leaves raw; only ever inside a JSON string."""


class VisibleConsole(Console):
    """A rich Console that draws only visible text: every text segment goes through `visible()`; the
    console's own control segments (cursor moves of the live display) and styles are untouched."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or not segment.text:
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style, segment.control)

    def render_str(self, text: str, **options: Any) -> Text:
        """A string printed without markup is made `visible()` before rich drops BEL and CR from it, so a
        sequence ended by BEL goes whole (markup strings are `escape()`d where they are formatted)."""
        markup = options.get("markup")
        if not (self._markup if markup is None else markup):
            text = visible(text)
        return super().render_str(text, **options)

    def print_json(self, json: str | None = None, *, data: Any = None, highlight: bool = True,
                   **options: Any) -> None:
        """As rich's (same arguments), with DEL and C1 controls, which JSON leaves raw, written as `\\u`
        escapes: the same data, and still valid JSON."""
        drawn = (JSON(json, highlight=False, **options) if json is not None
                 else JSON.from_data(data, highlight=False, **options))
        text = _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m[0]):04x}", drawn.text.plain)
        shown = JSONHighlighter()(text) if highlight else Text(text)
        shown.no_wrap, shown.overflow = True, None
        self.print(shown, soft_wrap=True)


def escape(text: str) -> str:
    """Repository text to format into rich markup: made `visible()`, then rich-escaped, so `[bold]` or
    `[link=...]` in it stays text. Commands import this `escape`, not rich's."""
    return rich_escape(visible(text))


def _console(*, stderr: bool = False) -> Console:
    console = VisibleConsole(stderr=stderr)
    console.soft_wrap = not console.is_terminal
    return console


out = _console()
err = _console(stderr=True)


def print_line(console: Console, markup: str) -> None:
    """One line of rich markup: cut with an ellipsis at the terminal's width, whole when piped."""
    if console.is_terminal:
        console.print(markup, highlight=False, no_wrap=True, overflow="ellipsis")
    else:
        console.print(markup, highlight=False)


def print_table(console: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *,
                right: Sequence[str] = ()) -> None:
    """A table of rich-markup cells: a rich Table on a terminal, plain aligned lines (title, header, rows)
    when piped. `right` names the columns to right-align."""
    if console.is_terminal:
        table = Table(title=title or None, title_justify="left", box=None, padding=(0, 1), pad_edge=False,
                      header_style="bold")
        for column in columns:
            table.add_column(column, overflow="fold", justify="right" if column in right else "left")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    plain = [list(columns)] + [[Text.from_markup(cell).plain for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in plain) for i in range(len(columns))]
    if title:
        console.print(Text.from_markup(title).plain, markup=False, highlight=False)
    for row in plain:
        cells = [cell.rjust(w) if column in right else cell.ljust(w)
                 for cell, w, column in zip(row, widths, columns, strict=True)]
        console.print("  ".join(cells).rstrip(), markup=False, highlight=False)


def print_error(error: BaseException) -> None:
    """One red line with the message; the traceback above it when $AUTOINSTALL_DEBUG is set."""
    if os.environ.get(DEBUG_ENV):
        print_traceback(error)
    err.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)


def print_traceback(error: BaseException) -> None:
    """The traceback as Python prints it, to stderr, made `visible()` (its messages quote repository text)."""
    sys.stderr.write(visible("".join(traceback.format_exception(error))))
    sys.stderr.flush()


def write_output(stream: IO[str], text: str) -> None:
    """A sandboxed command's own output (`exec`, `debug --command`): made `visible()` on a terminal; to a
    pipe or a file it is data, written as it is."""
    stream.write(visible(text) if stream.isatty() else text)
    stream.flush()
