"""What the user sees while building: one live line (what runs now and for how long), one printed line per
phase and finished command, then a summary. The output of long steps (base image builds) goes to a log file
under autoinstall_home()/logs/, and to the console too with --verbose."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.progress import Progress as Live
from rich.progress import SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column

from autoinstall.commands.output import escape, print_line, print_table
from envs.catalog_record import SuiteCounts
from envs.home import autoinstall_home
from envs.spec import EnvSpec, Plan


class LogFile:
    """Lines appended to `<dir>/<time>-<name>-<pid>.log` (default dir: autoinstall_home()/logs); the file is
    created on the first line, so a run that builds nothing leaves none behind."""

    def __init__(self, name: str, directory: Path | None = None) -> None:
        self.name, self.directory = name, directory
        self.path: Path | None = None
        self._file: IO[str] | None = None

    def write(self, line: str) -> None:
        if self._file is None:
            directory = self.directory or autoinstall_home() / "logs"
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.name}-{os.getpid()}.log"
            self._file = self.path.open("a")
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Progress:
    """Turns pipeline events (`report`) and long-step output (`log`) into what the console shows.

    Use as `with Progress(console) as progress:`; `quiet` shows nothing (for --json), `verbose` prints every
    line given to `log` instead of showing the latest one on the live line. Either way `log` writes them
    to `progress.logfile`.
    """

    def __init__(self, console: Console, *, quiet: bool = False, verbose: bool = False,
                 log_name: str = "build", log_title: str = "base image build log",
                 log_dir: Path | None = None) -> None:
        self.console, self.quiet, self.verbose = console, quiet, verbose
        self.logfile = LogFile(log_name, log_dir)
        self.log_title = log_title
        """How `print_log_path` names the log (after a failure it is printed before the error)."""
        text = Column(no_wrap=True, overflow="ellipsis", ratio=1)  # the rest of the line, cut when too long
        self.live = Live(SpinnerColumn(), TimeElapsedColumn(),
                         TextColumn("{task.description}", table_column=text),
                         console=console, transient=True, expand=True)
        self.task: TaskID | None = None
        self.started = time.monotonic()
        self.step_started = self.started
        self.current = ""

    def __enter__(self) -> Progress:
        if not self.quiet and self.console.is_terminal:  # piped, a live line would show nothing
            self.task = self.live.add_task("starting")
            self.live.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self.task is not None:
            self.live.stop()
        self.logfile.close()
        if exc_type is not None:  # the error comes next: say where the output that led to it is
            self.print_log_path()

    def report(self, event: str, text: str) -> None:
        """A pipeline event: phase, step (started), done / fail (the step), repair, or a note."""
        if self.quiet:
            return
        now = time.monotonic()
        if event == "phase":
            print_line(self.console, f"[bold cyan]{escape(text)}[/] [dim](+{now - self.started:.1f}s)[/]")
            self._restart(text)
        elif event == "step":
            self.step_started = now
            self._restart(text)
        elif event in ("done", "fail"):
            mark = "[green]✓[/]" if event == "done" else "[red]✗[/]"
            took = now - self.step_started
            print_line(self.console, f"  {mark} {escape(self.current)} [dim]{took:.1f}s[/]")
        elif event == "repair":
            print_line(self.console, f"    [yellow]repair:[/] {escape(text)}")
        else:
            print_line(self.console, f"  {escape(text)}")

    def log(self, line: str) -> None:
        """One line of a long step's output: to the log file, and to the live line (printed, if verbose)."""
        self.logfile.write(line)
        if self.quiet:
            return
        if self.verbose:
            self.console.print(line, markup=False, highlight=False)
        elif self.task is not None and line.strip():
            self.live.update(self.task, description=f"{escape(self.current)} [dim]{escape(line.strip())}[/]")

    def print_log_path(self) -> None:
        """Say where the log file is, if anything was logged."""
        if self.logfile.path is not None and not self.quiet:
            self.console.print(f"{self.log_title}: {self.logfile.path}", markup=False, highlight=False,
                               soft_wrap=True)

    def _restart(self, text: str) -> None:
        self.current = text
        if self.task is not None:
            self.live.reset(self.task, description=escape(text))


def print_plan(console: Console, plan: Plan) -> None:
    rows = []
    for i, step in enumerate(plan.steps, 1):
        where = ", ".join(f"{e.file}:{e.line}" if e.line else e.file for e in step.evidence[:3])
        rows.append([str(i), step.kind, escape(step.command), f"{escape(step.why)} [dim]{escape(where)}[/]"])
    print_table(console, f"Plan (Python {escape(plan.python)}, tests: {plan.test_runner})",
                ["#", "kind", "command", "why / evidence"], rows, right=["#"])
    checks = [[escape(c.name), c.kind, escape(c.command), "yes" if c.required else "no"] for c in plan.checks]
    print_table(console, "Verification checks", ["name", "kind", "command", "required"], checks)
    if plan.test_command:
        console.print(f"test command: [bold]{escape(plan.test_command)}[/]", highlight=False)
    for note in plan.notes:
        console.print(f"[dim]note: {escape(note)}[/]", highlight=False)


def print_summary(console: Console, spec: EnvSpec) -> None:
    colour = {"verified": "green", "partial": "yellow"}.get(spec.status, "red")
    at = f" @ {spec.source.commit[:12]}" if spec.source.commit else ""
    console.print(f"\n[bold {colour}]{spec.status.upper()}[/] {escape(spec.source.name)}{escape(at)} in "
                  f"{spec.timings.total_s:.1f}s (model {escape(spec.model)}, "
                  f"Python {escape(str(spec.python))})", highlight=False)
    if spec.image:
        console.print(f"image: {escape(spec.image)}", highlight=False)
    v = spec.verification
    n = SuiteCounts.from_spec(spec)
    if v is not None and v.last_run is not None:
        both = " in every run" if len(v.runs) > 1 and v.counts else ""
        console.print(f"tests{both}: {n.passed} passed, {n.failed} failed, {n.errors} errors, {n.skipped} skipped; "
                      f"flaky: {n.flaky}; pass rate {n.pass_rate:.2f} (threshold {v.threshold:.2f})",
                      highlight=False)
        if n.collected is not None:
            console.print(f"suite: {n.collected} collected by its default configuration, {n.selected} selected, "
                          f"{n.deselected or 0} deselected in {n.deselections} entries (cap {v.max_deselected:.0%})",
                          highlight=False)
        else:
            console.print(f"suite: not counted (the {spec.plan.test_runner} runner cannot list its tests); "
                          f"{n.deselections} deselection entries (cap {v.max_deselected:.0%})", highlight=False)
    for stub in spec.stubs:
        console.print(f"[yellow]stub:[/] {escape(stub.distribution)} ({escape(stub.reason)})",
                      highlight=False)
    by_reason: dict[str, list[str]] = {}
    for d in spec.deselected:
        by_reason.setdefault(d.reason, []).append(d.test)
    for reason, tests in by_reason.items():
        shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        console.print(f"[yellow]deselected {len(tests)}:[/] {escape(shown)} ({escape(reason)})",
                      highlight=False)
    for skipped in spec.skipped:
        console.print(f"[yellow]skipped step:[/] {escape(skipped.step.command if skipped.step else '')}",
                      highlight=False)
    if spec.failure is not None:
        console.print(f"[red]failure:[/] {spec.failure.failure_class}: {escape(spec.failure.message)}",
                      highlight=False)
        if spec.failure.evidence:
            console.print(f"[dim]{escape(spec.failure.evidence[-800:])}[/]", highlight=False)
    if spec.env_dir and (Path(spec.env_dir) / "logs").is_dir():
        console.print(f"logs: {Path(spec.env_dir) / 'logs'}", markup=False, highlight=False)
