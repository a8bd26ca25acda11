"""Tasks per environment: validated history and mutation tasks made from verified environments.

    uv run python bench/tasks.py [--env ID ...] [--fixture] [--max 25] [--time-budget 900] [--store DIR]
                                 [--kinds history,mutation,combined] [--max-history 10]
                                 [--model openai:NAME --base-url URL]

Runs `make_tasks` on each environment (default: every verified environment of the catalog whose runner
gives per-test results; --fixture first builds tests/fixtures/repos/tasks_mutable, with a short git
history, and adds it to the catalog). Prints one row per environment (tasks by kind and difficulty, leak
checks, dropped candidates by reason, validation failures), then (last line) one JSON object:
tasks_per_env_median, history_tasks, mutation_tasks, combined_tasks, combined_share (combined / all),
combined_or_multifile_share (combined, or a fix over 2+ files), validation_yield (validated / searched),
seconds_per_validated_task_median, statement_checks (passed, failed), statement_leaks (statements whose
leak check failed), difficulty (easy/medium/hard histogram), dropped (summed by reason), by_language
(per ecosystem: envs, tasks, median seconds per task), oracle_reward_mean (the gold patch's reward in
validation: 1.0 when every FAIL_TO_PASS and PASS_TO_PASS test passed in every run) and nop_reward_mean (the
bug state's reward: 1.0 only if every listed test passed with the bug, which a valid task never allows), and
history_funnel (summed over environments: commits looked at -> modify code -> also touch tests -> reversed on
today's tree -> candidates -> searched -> failing -> validated; see autoinstall/tasks/history.py).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoinstall.options import BuildOptions, docker_factory  # noqa: E402
from autoinstall.pipeline import build_environment  # noqa: E402
from autoinstall.tasks import MakeOptions, MakeReport, TaskError, TaskStore, make_tasks  # noqa: E402
from autoinstall.tasks.history import HistoryFunnel  # noqa: E402
from envs.catalog import Catalog  # noqa: E402
from envs.home import autoinstall_home  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "repos" / "tasks_mutable"
PER_TEST_RUNNERS = ("pytest", "go", "cargo")


def fixture_env(catalog: Catalog) -> str:
    """Build the fixture (as a git repository with two commits) and catalogue it; returns its id."""
    work = Path(tempfile.mkdtemp(prefix="bench-tasks-"))
    repo = work / "tasks_mutable"
    shutil.copytree(FIXTURE, repo)
    source = repo / "ranges" / "__init__.py"
    fixed = source.read_text()
    source.write_text(fixed.replace("    if value > high:\n        return high\n", ""))

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args], cwd=repo,
                       check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "ranges: first version")
    source.write_text(fixed)
    git("commit", "-q", "-am", "clamp: values above the range were returned unchanged")
    out = autoinstall_home() / "bench-envs" / "tasks_mutable"
    spec = build_environment(str(repo), BuildOptions(out_dir=out))
    if spec.status != "verified":
        sys.exit(f"the fixture did not verify: {spec.failure}")
    return catalog.upsert_spec(spec, out).id


def default_envs(catalog: Catalog) -> list[str]:
    ids = []
    for record in catalog.list(status="verified"):
        spec = catalog.get_spec(record.id)
        if spec is not None and spec.plan.test_runner in PER_TEST_RUNNERS and record.tests_passed >= 5:
            ids.append(record.id)
    return ids


def row(report: MakeReport, repo: str) -> str:
    kinds, checks = report.by_kind(), report.statement_checks()
    failures = "; ".join(f"{f.candidate}: {f.run} {f.how}" for f in report.failures[:5])
    return (f"{report.env_id}  {repo[:28]:28}  tests {report.baseline_tests:4}  "
            f"candidates {report.candidates:4}  searched {report.searched:4}  combined tried "
            f"{report.combined_tried:3}  tasks {report.validated:3} {kinds}  yield {report.yield_:.2f}  "
            f"s/task {report.seconds_per_task:6.1f}  total {report.seconds:6.0f}s\n"
            f"  difficulty {report.by_difficulty()}  leak checks {checks['passed']} passed, "
            f"{checks['failed']} failed  selection {report.selection}  validation containers {report.containers}  "
            f"dropped {report.dropped}\n"
            f"  validation failures {len(report.failures)}{': ' + failures if failures else ''}\n"
            f"  history funnel {funnel_line(report.history)}")


def funnel_line(funnel: HistoryFunnel) -> str:
    f = funnel
    return (f"looked at {f.looked_at} -> code {f.code} (with tests {f.with_tests}) -> tried {f.tried} -> "
            f"reversed {f.reversed} (whole {f.whole}) -> candidates {f.candidates} -> searched {f.searched} -> "
            f"failing {f.failing} -> validated {f.validated}")


def summed(funnels: list[HistoryFunnel]) -> dict[str, int]:
    return {name: sum(getattr(f, name) for f in funnels) for name in HistoryFunnel.model_fields}


def by_language(reports: list[MakeReport], languages: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per ecosystem: environments, tasks, and the median seconds per validated task."""
    out: dict[str, dict[str, float]] = {}
    for language in sorted(set(languages.values())):
        mine = [r for r in reports if languages.get(r.env_id) == language]
        seconds = [s for r in mine for s in r.task_seconds]
        out[language] = {"envs": len(mine), "tasks": sum(r.validated for r in mine),
                         "tasks_per_env_median": statistics.median([r.validated for r in mine]),
                         "seconds_per_validated_task_median": round(statistics.median(seconds), 2) if seconds else 0}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", default=[], help="Catalog id (repeatable).")
    parser.add_argument("--fixture", action="store_true", help="Build and include the tasks_mutable fixture.")
    parser.add_argument("--max", type=int, default=25, help="Validated tasks per environment at most.")
    parser.add_argument("--time-budget", type=float, default=900.0, help="Seconds of search per environment.")
    parser.add_argument("--store", type=Path, default=None,
                        help="Task store directory (default: a temp dir).")
    parser.add_argument("--kinds", default="history,mutation,combined", help="Comma-separated task kinds.")
    parser.add_argument("--model", default="embedded", help="Who writes issue/terse statements: embedded or "
                                                            "openai:NAME.")
    parser.add_argument("--base-url", default=None, help="The chat model's endpoint (openai:NAME).")
    parser.add_argument("--max-history", type=int, default=MakeOptions().max_history,
                        help="History tasks per environment at most.")
    args = parser.parse_args()
    catalog = Catalog()
    envs = list(args.env) or default_envs(catalog)
    if args.fixture:
        envs.insert(0, fixture_env(catalog))
    store = TaskStore(args.store or Path(tempfile.mkdtemp(prefix="bench-task-store-")))
    factory = docker_factory()
    reports: list[MakeReport] = []
    languages: dict[str, str] = {}
    for env_id in envs:
        record = catalog.get(env_id)
        started = time.monotonic()
        try:
            report = make_tasks(env_id, factory, catalog=catalog, store=store, options=MakeOptions(
                max_tasks=args.max, time_budget_s=args.time_budget, kinds=tuple(args.kinds.split(",")),
                max_history=args.max_history, model=args.model, base_url=args.base_url),
                log=lambda line: print(f"  {env_id}: {line}", file=sys.stderr, flush=True))
        except TaskError as e:
            print(f"{env_id}  {record.name or record.repo}: {e} ({time.monotonic() - started:.0f}s)",
                  flush=True)
            continue
        reports.append(report)
        spec = catalog.get_spec(record.id)
        languages[report.env_id] = (spec.plan.ecosystem if spec else "unknown").split("@")[0]
        print(row(report, record.name or record.repo), flush=True)
    tasks = [t for r in reports for t in r.tasks]
    per_task = [s for r in reports for s in r.task_seconds]
    searched = sum(r.searched for r in reports)
    oracle = [float(t.validation.gold_all_passed) for t in tasks]
    nop = [float(not t.validation.bug_fail_to_pass_failed) for t in tasks]
    checks = [c for t in tasks for c in t.statement_checks]
    summary = {
        "envs": len(reports),
        "tasks_per_env_median": statistics.median([r.validated for r in reports]) if reports else 0,
        "history_tasks": sum(t.kind == "history" for t in tasks),
        "mutation_tasks": sum(t.kind == "mutation" for t in tasks),
        "combined_tasks": sum(t.kind == "combined" for t in tasks),
        "combined_share": round(sum(t.kind == "combined" for t in tasks) / len(tasks), 3) if tasks else 0.0,
        "combined_or_multifile_share": round(sum(t.kind == "combined" or t.fix_files > 1 for t in tasks) /
                                             len(tasks), 3) if tasks else 0.0,
        "validation_yield": round(sum(r.validated for r in reports) / searched, 3) if searched else 0.0,
        "seconds_per_validated_task_median": round(statistics.median(per_task), 2) if per_task else None,
        "statement_checks": {"passed": sum(c.passed for c in checks), "failed": sum(not c.passed for c in checks)},
        "statement_leaks": sum(not c.passed for c in checks),
        "difficulty": dict(Counter(t.difficulty or "unknown" for t in tasks)),
        "dropped": dict(sum((Counter(r.dropped) for r in reports), Counter())),
        "validation_failures": sum(len(r.failures) for r in reports),
        "by_language": by_language(reports, languages),
        "oracle_reward_mean": round(statistics.mean(oracle), 3) if oracle else None,
        "nop_reward_mean": round(statistics.mean(nop), 3) if nop else None,
        "history_funnel": summed([r.history for r in reports]),
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
