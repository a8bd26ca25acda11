"""`autoinstall debug ID`: show why an environment failed, then open a shell at its last good state."""
from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from autoinstall.commands.catalog import open_catalog
from autoinstall.commands.options import CatalogDir, IdArg
from autoinstall.commands.output import err, escape, out, print_error, print_table, write_output
from autoinstall.record.lock import build_lock

if TYPE_CHECKING:
    from autoinstall.debug import Recorded
    from envs.catalog import Catalog, EnvRecord
    from envs.spec import EnvSpec


def debug_cmd(
    env_id: IdArg,
    catalog: CatalogDir = None,
    record: Annotated[bool, typer.Option(
        "--record", help="Keep what you run as new steps, then verify again and update the catalog.",
    )] = False,
    yes: Annotated[bool, typer.Option(
        "--yes", "-y", help="With --record: keep the commands without asking.")] = False,
    shell: Annotated[str, typer.Option(
        help="Shell to open in the container (--record needs bash).")] = "bash",
    command: Annotated[Optional[str], typer.Option(
        "--command", "-c", help="Run CMD in the container instead of a shell (no terminal needed).")] = None,
) -> None:
    """Show the plan and the failing step of environment ID, then open a shell in a new container from its
    last good image, with the repository in /workspace, its venv active and the network on.

    Exit status: the shell's or CMD's; with --record and kept steps, 0 verified / 1 not; 1 when there is no
    image to start from; 2 for an unknown ID or no terminal.
    """
    # Imported here: the debug package loads docker, which `autoinstall --help` does not need.
    from autoinstall.debug import DebugError
    from envs.errors import UserFacingError

    # DebugError exits 1 (see above); any other UserFacingError exits 2 as main() does, also when debug_cmd
    # runs on an app of its own.
    try:
        code = _debug(env_id, catalog, record=record, yes=yes, shell=shell, command=command)
    except DebugError as e:
        print_error(e)
        raise typer.Exit(1) from e
    except UserFacingError as e:
        print_error(e)
        raise typer.Exit(2) from e
    raise typer.Exit(code)


def _debug(env_id: str, catalog_dir: Path | None, *, record: bool, yes: bool, shell: str,
           command: str | None) -> int:
    # Imported here: the debug package loads docker, which `autoinstall --help` does not need.
    from autoinstall import debug

    cat = open_catalog(catalog_dir)
    rec, spec = debug.load(cat, env_id)
    if spec is None or not spec.image:
        show_context(rec, spec)
    image = debug.start_image(rec, spec)
    assert spec is not None
    if command is None and not sys.stdin.isatty():
        err.print("[bold red]error:[/] the debug shell needs a terminal, and stdin is not one. Run it "
                      "from a terminal, or pass --command CMD to run one command (e.g. in a script).",
                      highlight=False)
        return 2
    debug.check_present(rec, image)
    show_context(rec, spec)
    # A session that records is a build of the environment: no `run` or `batch` of it at the same time.
    with (build_lock(spec.source.repo, spec.source.revision, spec.model, rec.id) if record else nullcontext()):
        banner(rec, spec, image, record=record, command=command)
        with debug.DebugShell(image, env_id=rec.id) as box:
            if command is None:
                code = box.interactive(shell, record=record)
                recorded = box.recorded() if record else []
            else:
                result = box.run(command)
                write_output(sys.stdout, result.stdout)
                write_output(sys.stderr, result.stderr)
                code = result.exit_code
                recorded = [debug.Recorded(command=command, exit_code=code)]
            if not record:
                return code
            kept = [r for r in recorded if debug.keepable(r)]
            if not _confirm(kept, recorded, yes):
                return code
            snapshot, wheels = box.snapshot(), box.stub_wheels(spec)
        return keep(cat, rec, spec, recorded, snapshot, wheels)


def keep(cat: Catalog, rec: EnvRecord, spec: EnvSpec, recorded: list[Recorded], snapshot: str,
         wheels: dict[str, bytes]) -> int:
    """Save the session: new steps, new image, verification, Dockerfile, spec.json, catalog record."""
    # Imported here: docker and rich.progress load only when a session is kept.
    from autoinstall import debug
    from autoinstall.commands.progress import print_summary

    env_dir = Path(rec.env_dir)
    history = debug.write_history(env_dir, recorded)
    new = debug.add_steps(spec, recorded, history)
    new = debug.reverify(new, env_dir, snapshot, wheels,
                         lambda text: err.print(f"[cyan]{escape(text)}[/]", highlight=False))
    updated = debug.record_result(cat, rec, new)
    print_summary(out, new)
    colour = "green" if updated.status == "verified" else "red"
    err.print(f"catalog record [bold]{escape(updated.id)}[/] is now [{colour}]{updated.status}[/]; "
                  f"{len(new.steps) - len(spec.steps)} step(s) added, "
                  f"session log {escape(str(env_dir / history))}",
                  highlight=False)
    return 0 if updated.status == "verified" else 1


def _confirm(kept: list[Recorded], recorded: list[Recorded], yes: bool) -> bool:
    skipped = len(recorded) - len(kept)
    if not kept:
        err.print(f"nothing to keep: {len(recorded)} command(s) ran, none both succeeded and changed "
                      "anything (cd/ls/cat/editors/failed commands are left out)", highlight=False)
        return False
    err.print(f"[bold]{len(kept)} command(s) to keep as new steps[/] ({skipped} left out: failed or "
                  "navigation):", highlight=False)
    for r in kept:
        where = "" if r.cwd.rstrip("/") == "/workspace" else f" [dim](in {escape(r.cwd)})[/]"
        err.print(f"  $ {escape(r.command)}{where}", highlight=False)
    if yes:
        return True
    if not sys.stdin.isatty():
        err.print("not kept: stdin is not a terminal to ask on; pass --yes to keep them", highlight=False)
        return False
    return typer.confirm("Keep them, save this container as the environment image and verify it again?",
                         default=True, err=True)


def show_context(rec: EnvRecord, spec: EnvSpec | None) -> None:
    """The plan, the failing step with the tail of its output, and the diagnosis/repair history."""
    # Imported here: docker and rich.progress load only when a context is shown.
    from autoinstall import debug
    from autoinstall.commands.progress import print_plan

    env_dir = Path(rec.env_dir)
    title = f"{rec.id} {rec.name or rec.repo} @ {(rec.commit or '')[:12]}: {rec.status}"
    out.print(f"[bold]{escape(title)}[/]", highlight=False)
    if spec is None:
        out.print(f"[red]failure:[/] {escape(rec.failure_class or '')}: {escape(rec.failure_message)}",
                  highlight=False)
        for log in sorted((env_dir / "logs").glob("*"))[-3:] if (env_dir / "logs").is_dir() else []:
            last = debug.tail(log.read_text(errors="replace"))
            out.print(f"[bold]{escape(str(log))}[/]:\n[dim]{escape(last)}[/]",
                      highlight=False)
        return
    print_plan(out, spec.plan)
    out.print(f"{len(spec.steps)} step(s) succeeded and are in the image:", highlight=False)
    for i, step in enumerate(spec.steps, 1):
        out.print(f"  {i}. {escape(step.command)}", highlight=False)
    _history(spec)
    if spec.failure is not None:
        out.print(f"[red]failure:[/] {spec.failure.failure_class}: {escape(spec.failure.message)}",
                  highlight=False)
    entry = debug.failing_entry(spec)
    if entry is not None:
        where = f" ({env_dir / entry.log_file})" if entry.log_file else ""
        out.print(f"[bold]failing command[/] #{entry.index} ({entry.phase}, exit {entry.exit_code}): "
                  f"{escape(entry.command)}{escape(where)}", highlight=False)
    output = debug.failing_output(env_dir, spec)
    if output:
        out.print(f"[dim]{escape(output)}[/]", highlight=False)


def _history(spec: EnvSpec) -> None:
    rows = [[str(e.index), e.phase, escape(e.command[:200]), str(e.exit_code),
             escape(e.diagnosis.describe() if e.diagnosis else ""),
             escape(f"{e.repair.kind}: {e.repair.reason}" if e.repair else "")]
            for e in spec.log if e.diagnosis is not None or e.repair is not None]
    if rows:
        columns = ["#", "phase", "command", "exit", "diagnosis", "repair"]
        print_table(out, "Diagnoses and repairs", columns, rows, right=["#", "exit"])


def banner(rec: EnvRecord, spec: EnvSpec, image: str, *, record: bool, command: str | None) -> None:
    """What failed, where the shell is, how to leave, and whether commands are kept."""
    why = f"{spec.failure.failure_class}: {spec.failure.message}" if spec.failure else "verified"
    lines = [f"[bold]autoinstall debug {escape(rec.id)}[/] ({escape(why)})",
             f"a new container from {escape(image)}: repository in /workspace, venv active, network on"]
    if command is None:
        lines.append("leave with [bold]exit[/] or [bold]Ctrl-D[/]")
    if record:
        lines.append("[yellow]recording:[/] commands that succeed (except cd/ls/cat/editors...) can be kept "
                     "as new steps when you leave; the environment is then verified again")
    err.print("\n".join(lines), highlight=False)
