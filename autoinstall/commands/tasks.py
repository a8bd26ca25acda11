"""`autoinstall tasks make ID` and `autoinstall tasks list`: RL tasks from a verified environment."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from autoinstall.commands.app import App
from autoinstall.commands.catalog import open_catalog
from autoinstall.commands.options import BaseUrl, CatalogDir, IdArg, JsonOut, Model
from autoinstall.commands.output import err, escape, out, print_table

if TYPE_CHECKING:
    from envs.task import Task, TaskFilter

tasks_app = App(no_args_is_help=True, help="Make and list RL tasks (bugs with tests that tell they "
                        "are fixed) from verified environments.")
KIND_NAMES = ("history", "mutation", "combined")
DIFFICULTY_NAMES = ("easy", "medium", "hard")
"""As envs.task's TaskSource and Difficulty (not imported here: `autoinstall --help` needs no pydantic)."""
STYLE_NAMES = ("tests", "issue", "terse")


def _choices(value: str, names: tuple[str, ...], hint: str) -> tuple[str, ...]:
    chosen = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in chosen if k not in names]
    if unknown or not chosen:
        msg = f"{', '.join(unknown) or value!r}: choose among {', '.join(names)} (comma-separated)"
        raise typer.BadParameter(msg, param_hint=hint)
    return chosen


def _kinds(value: str) -> tuple[str, ...]:
    return _choices(value, KIND_NAMES, "--kinds")


def task_filter(kinds: str | None = None, difficulty: str | None = None, statement: str | None = None,
                min_files: int = 0, min_lines: int = 0, max_distance: int | None = None) -> TaskFilter:
    """The selection `tasks list` and `export --tasks` take (their --kind, --difficulty, --statement...)."""
    from envs.task import TaskFilter  # pydantic models, which `autoinstall --help` does not need

    if statement is not None and statement not in STYLE_NAMES:
        msg = f"{statement!r}: choose among {', '.join(STYLE_NAMES)}"
        raise typer.BadParameter(msg, param_hint="--statement")
    return TaskFilter(kinds=list(_choices(kinds, KIND_NAMES, "--kind")) if kinds else [],  # type: ignore[arg-type]
                      difficulties=list(_choices(difficulty, DIFFICULTY_NAMES, "--difficulty"))  # type: ignore[arg-type]
                      if difficulty else [], statement=statement,  # type: ignore[arg-type]
                      min_fix_files=min_files, min_fix_lines=min_lines, max_call_distance=max_distance)


KindOpt = Annotated[Optional[str], typer.Option("--kind", help="Only these kinds: history, mutation, combined "
                                                               "(comma-separated).")]
DifficultyOpt = Annotated[Optional[str], typer.Option(
    "--difficulty", help="Only these buckets: easy, medium, hard (comma-separated).")]
StatementOpt = Annotated[Optional[str], typer.Option(
    "--statement", help="The statement style to show or export: tests, issue or terse (tasks without one that "
                        "passed its leak check are left out).")]


@tasks_app.command("make")
def make_cmd(
    env_id: IdArg,
    catalog: CatalogDir = None,
    max_tasks: Annotated[int, typer.Option("--max", min=1, help="Validated tasks to make at most.")] = 25,
    kinds: Annotated[str, typer.Option(help="Kinds of bug, comma-separated: history, mutation, combined (2-4 "
                                            "validated bugs at once).")] = "history,mutation,combined",
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
    every_run: Annotated[bool, typer.Option(
        "--every-run", help="Make every validation run in the validation container, even where the search's "
                            "run of the bug or the baseline's run of the untouched tree already ran that "
                            "state.")] = False,
    model: Model = "embedded",
    base_url: BaseUrl = None,
    json_out: JsonOut = False,
) -> None:
    """Make validated tasks for environment ID and add them to $AUTOINSTALL_HOME/tasks/ID.jsonl.

    Each task carries three statements (tests, issue, terse), each leak-checked; with --model openai:NAME
    --base-url URL a chat model writes the issue and terse ones, else templates do.
    """
    # Imported here: the generator loads tree-sitter and docker, which `autoinstall --help` does not need.
    from autoinstall.options import docker_factory
    from autoinstall.tasks import MakeOptions, TaskStore, make_tasks

    options = MakeOptions(max_tasks=max_tasks, kinds=_kinds(kinds), include_partial=include_partial,  # type: ignore[arg-type]
                          max_fail=max_fail, seed=seed, time_budget_s=time_budget,
                          full_gold_runs=full_gold_runs, count_seen_runs=not every_run, model=model,
                          base_url=base_url)
    store = TaskStore()
    report = make_tasks(env_id, docker_factory(), catalog=open_catalog(catalog), store=store, options=options,
                        log=lambda line: err.print(f"[dim]{escape(line)}[/]", highlight=False))
    if json_out:
        out.print_json(json.dumps([t.model_dump(mode="json") for t in report.tasks]))
        return
    _task_table(report.tasks, f"{len(report.tasks)} validated tasks")
    dropped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.dropped.items())) or "none"
    out.print(f"searched {report.searched} of {report.candidates} candidates in {report.seconds:.0f}s; "
              f"dropped: {escape(dropped)}; stored in {escape(str(store.path(report.env_id)))}",
              highlight=False)


def _task_table(tasks: list[Task], title: str) -> None:
    rows = [[escape(t.instance_id), escape(t.kind), escape(t.difficulty or ""), str(len(t.FAIL_TO_PASS)),
             str(len(t.PASS_TO_PASS)), str(t.fix_files), str(t.fix_lines), _distance(t),
             f"{sum(c.passed for c in t.statement_checks)}/{len(t.statement_checks)}"] for t in tasks]
    print_table(out, title, ["instance", "kind", "difficulty", "F2P", "P2P", "files", "lines", "distance",
                             "leak checks"], rows, right=["F2P", "P2P", "files", "lines", "distance"])


def _distance(task: Task) -> str:
    distance = task.features.call_distance if task.features else None
    return "" if distance is None else str(distance)


@tasks_app.command("list")
def list_cmd(
    env_id: Annotated[Optional[str], typer.Option("--env", help="List the tasks of this environment one by "
                                                                "one.")] = None,
    kind: KindOpt = None,
    difficulty: DifficultyOpt = None,
    statement: StatementOpt = None,
    min_files: Annotated[int, typer.Option("--min-files", min=0, help="Only fixes touching this many files "
                                                                      "or more.")] = 0,
    min_lines: Annotated[int, typer.Option("--min-lines", min=0, help="Only fixes of this many lines or "
                                                                      "more.")] = 0,
    max_distance: Annotated[Optional[int], typer.Option(
        "--max-distance", min=1, help="Only tasks whose failing test reaches the change within this many "
                                      "calls.")] = None,
    json_out: JsonOut = False,
) -> None:
    """The environments that have tasks, with counts by kind and difficulty; with --env, that environment's
    tasks (filtered by kind, difficulty, statement style and size)."""
    # Imported here: the task store loads pydantic models, which `autoinstall --help` does not need.
    from autoinstall.tasks.store import TaskStore, task_counts

    chosen = task_filter(kind, difficulty, statement, min_files, min_lines, max_distance)
    store = TaskStore()
    if env_id is not None:
        tasks = chosen.apply(store.read(env_id))
        if json_out:
            out.print_json(json.dumps([t.model_dump(mode="json") for t in tasks]))
            return
        _task_table(tasks, f"{len(tasks)} tasks of {env_id}")
        return
    summary = []
    for env in store.counts():
        tasks = store.read(env)
        chosen_tasks = chosen.apply(tasks)
        summary.append({"env_id": env, "repo": tasks[0].repo if tasks else "", **task_counts(chosen_tasks),
                        "path": str(store.path(env))})
    if json_out:
        out.print_json(json.dumps(summary))
        return
    columns = ["tasks", *KIND_NAMES, *DIFFICULTY_NAMES]
    rows = [[escape(s["env_id"]), escape(s["repo"]), *(str(s.get(c, 0)) for c in columns)] for s in summary]
    print_table(out, f"{len(summary)} environments with tasks", ["env", "repository", *columns], rows,
                right=columns)
