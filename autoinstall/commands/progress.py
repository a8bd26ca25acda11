"""What the user sees: a spinner with elapsed time per step while building, then a summary."""
from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from envs.spec import EnvSpec, Plan


class Progress:
    """Turns pipeline events into a live status line and one printed line per finished command."""

    def __init__(self, console: Console, *, quiet: bool = False) -> None:
        self.console, self.quiet = console, quiet
        self.status: Status | None = None
        self.started = time.monotonic()
        self.step_started = self.started
        self.current = ""

    def __enter__(self) -> Progress:
        if not self.quiet:
            self.status = self.console.status("starting")
            self.status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.stop()

    def report(self, event: str, text: str) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if event == "phase":
            self.console.print(f"[bold cyan]{text}[/] [dim](+{now - self.started:.1f}s)[/]")
            self._status(text)
        elif event == "step":
            self.step_started, self.current = now, text
            self._status(text)
        elif event in ("done", "fail"):
            mark = "[green]✓[/]" if event == "done" else "[red]✗[/]"
            self.console.print(f"  {mark} {escape(self.current[:110])} [dim]{now - self.step_started:.1f}s[/]",
                               highlight=False)
        elif event == "repair":
            self.console.print(f"    [yellow]repair:[/] {escape(text)}", highlight=False)
        else:
            self.console.print(f"  {escape(text)}", highlight=False)

    def _status(self, text: str) -> None:
        if self.status is not None:
            self.status.update(escape(text[:100]))


def print_plan(console: Console, plan: Plan) -> None:
    table = Table(title=f"Plan (Python {plan.python}, tests: {plan.test_runner})", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("kind")
    table.add_column("command", overflow="fold")
    table.add_column("why / evidence", overflow="fold")
    for i, step in enumerate(plan.steps, 1):
        where = ", ".join(f"{e.file}:{e.line}" if e.line else e.file for e in step.evidence[:3])
        table.add_row(str(i), step.kind, escape(step.command), f"{escape(step.why)} [dim]{escape(where)}[/]")
    console.print(table)
    checks = Table(title="Verification checks")
    for col in ("name", "kind", "command", "required"):
        checks.add_column(col, overflow="fold")
    for check in plan.checks:
        checks.add_row(escape(check.name), check.kind, escape(check.command), "yes" if check.required else "no")
    console.print(checks)
    if plan.test_command:
        console.print(f"test command: [bold]{escape(plan.test_command)}[/]", highlight=False)
    for note in plan.notes:
        console.print(f"[dim]note: {escape(note)}[/]", highlight=False)


def print_summary(console: Console, spec: EnvSpec) -> None:
    colour = "green" if spec.status == "verified" else "red"
    console.print(f"\n[bold {colour}]{spec.status.upper()}[/] {spec.source.name} @ {(spec.source.commit or '')[:12]}"
                  f" in {spec.timings.total_s:.1f}s (model {spec.model}, Python {spec.python})", highlight=False)
    if spec.image:
        console.print(f"image: {escape(spec.image)}", highlight=False)
    v = spec.verification
    if v is not None and v.last_run is not None:
        c = v.last_run.counts
        console.print(f"tests: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, {c.get('error', 0)} errors,"
                      f" {c.get('skipped', 0)} skipped; flaky: {len(v.flaky)}", highlight=False)
    for stub in spec.stubs:
        console.print(f"[yellow]stub:[/] {escape(stub.distribution)} ({escape(stub.reason)})", highlight=False)
    by_reason: dict[str, list[str]] = {}
    for d in spec.deselected:
        by_reason.setdefault(d.reason, []).append(d.test)
    for reason, tests in by_reason.items():
        shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        console.print(f"[yellow]deselected {len(tests)}:[/] {escape(shown)} ({escape(reason)})", highlight=False)
    for skipped in spec.skipped:
        console.print(f"[yellow]skipped step:[/] {escape(skipped.step.command if skipped.step else '')}",
                      highlight=False)
    if spec.failure is not None:
        console.print(f"[red]failure:[/] {spec.failure.failure_class}: {escape(spec.failure.message)}",
                      highlight=False)
        if spec.failure.evidence:
            console.print(f"[dim]{escape(spec.failure.evidence[-800:])}[/]", highlight=False)
