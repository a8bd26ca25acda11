"""`App`: the typer app every command group is made with, so a switch's help reads as a switch.

typer 0.29's rich panels print a value type beside every option, so a boolean flag (and `--help` itself) reads
`--json  <bool>` as if it took a value. typer's plain help and click leave a flag bare; `App` does the same in
the rich panels: an option that takes no value gets an empty metavar, which the panel prints instead of a type.
"""
from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption


def _bare_switches(params: list[Any]) -> list[Any]:
    """The parameters, each switch (an option that takes no value) with an empty metavar unless it set one."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command whose switches show no value type in `--help`."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        return _bare_switches(super().get_params(ctx))


class Group(TyperGroup):
    """A command group whose switches (its `--help`) show no value type."""

    def get_params(self, ctx: typer.Context) -> list[Any]:
        return _bare_switches(super().get_params(ctx))


class App(typer.Typer):
    """`typer.Typer` whose groups and commands are `Group` and `Command`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=Group, **kwargs)

    def command(self, name: str | None = None, **kwargs: Any) -> Any:
        return super().command(name, cls=Command, **kwargs)
