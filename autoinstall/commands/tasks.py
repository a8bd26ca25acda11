"""`autoinstall tasks make ID` and `autoinstall tasks list`: RL tasks from a verified environment."""
from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from autoinstall.commands.catalog import open_catalog
from autoinstall.commands.options import CatalogDir, IdArg, JsonOut
from autoinstall.commands.output import err, escape, out, print_table

tasks_app = typer.Typer(no_args_is_help=True, help="Make and list RL tasks (bugs with tests that tell they "
                        "are fixed) from verified environments.")
KIND_NAMES = ("history", "mutation")


def _kinds(value: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KIND_NAMES]
    if unknown or not kinds:
        msg = f"{', '.join(unknown) or value!r}: choose among {', '.join(KIND_NAMES)} (comma-separated)"
        raise typer.BadParameter(msg, param_hint="--kinds")
    return kinds


@tasks_app.command("make")
def make_cmd(
    env_id: IdArg,
    catalog: CatalogDir = None,
    max_tasks: Annotated[int, typer.Option("--max", min=1, help="Validated tasks to make at most.")] = 25,
    kinds: Annotated[str, typer.Option(help="Kinds of bug, comma-separated: history, mutation.")] =
        "history,mutation",
    include_partial: Annotated[bool, typer.Option(
        "--include-partial", help="Also accept a `partial` environment (its suite runs, but too much of it "
                                  "is deselected).")] = False,
    max_fail: Annotated[int, typer.Option(
        "--max-fail", min=1, help="K: keep a bug that 1..K tests catch.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the mutation order.")] = 0,
    time_budget: Annotated[Optional[float], typer.Option(
        "--time-budget", min=1.0, help="Stop searching after this many seconds.")] = None,
    full_gold_runs: Annotated[bool, typer.Option(
        "--full-gold-runs", help="Validate the gold state with the whole suite even when the gold patch "
                                 "restores the files byte for byte.")] = False,
    json_out: JsonOut = False,
) -> None:
    """Make validated tasks for environment ID and add them to $AUTOINSTALL_HOME/tasks/ID.jsonl."""
    # Imported here: the generator loads tree-sitter and docker, which `autoinstall --help` does not need.
    from autoinstall.options import docker_factory
    from autoinstall.tasks import MakeOptions, TaskStore, make_tasks

    options = MakeOptions(max_tasks=max_tasks, kinds=_kinds(kinds), include_partial=include_partial,  # type: ignore[arg-type]
                          max_fail=max_fail, seed=seed, time_budget_s=time_budget,
                          full_gold_runs=full_gold_runs)
    store = TaskStore()
    report = make_tasks(env_id, docker_factory(), catalog=open_catalog(catalog), store=store, options=options,
                        log=lambda line: err.print(f"[dim]{escape(line)}[/]", highlight=False))
    if json_out:
        out.print_json(json.dumps([t.model_dump(mode="json") for t in report.tasks]))
        return
    rows = [[escape(t.instance_id), escape(t.kind), str(len(t.FAIL_TO_PASS)), str(len(t.PASS_TO_PASS)),
             str(t.fix_lines)]
            for t in report.tasks]
    print_table(out, f"{len(report.tasks)} validated tasks", ["instance", "kind", "F2P", "P2P", "fix lines"],
                rows)
    dropped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.dropped.items())) or "none"
    out.print(f"searched {report.searched} of {report.candidates} candidates in {report.seconds:.0f}s; "
              f"dropped: {escape(dropped)}; stored in {escape(str(store.path(report.env_id)))}",
              highlight=False)


@tasks_app.command("list")
def list_cmd(json_out: JsonOut = False) -> None:
    """The environments that have tasks, and how many of each kind."""
    # Imported here: the task store loads pydantic models, which `autoinstall --help` does not need.
    from autoinstall.tasks import TaskStore

    store = TaskStore()
    summary = []
    for env_id in store.counts():
        tasks = store.read(env_id)
        summary.append({"env_id": env_id, "tasks": len(tasks), "repo": tasks[0].repo if tasks else "",
                        "history": sum(t.kind == "history" for t in tasks),
                        "mutation": sum(t.kind == "mutation" for t in tasks),
                        "path": str(store.path(env_id))})
    if json_out:
        out.print_json(json.dumps(summary))
        return
    rows = [[escape(s["env_id"]), escape(s["repo"]), str(s["tasks"]), str(s["history"]), str(s["mutation"])]
            for s in summary]
    print_table(out, f"{len(summary)} environments with tasks", ["env", "repository", "tasks", "history",
                                                                  "mutation"], rows)
