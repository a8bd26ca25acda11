"""Where commands print: `out` (results, stdout) and `err` (progress, errors, stderr).

On a terminal, tables are rich tables as wide as the terminal and long lines end in an ellipsis; piped,
tables become plain aligned lines and nothing is wrapped or cut at 80 columns, so `| grep` and `| less` see
whole rows.
"""
from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

DEBUG_ENV = "AUTOINSTALL_DEBUG"
"""Set it (to anything) to get the traceback under the one-line error."""


def _console(*, stderr: bool = False) -> Console:
    console = Console(stderr=stderr)
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
        traceback.print_exception(error, file=sys.stderr)
    err.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
