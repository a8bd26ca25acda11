"""A catalog of many environments made without Docker, for the report's tests: varied statuses, ecosystems,
failure classes, build times, suite sizes, task stores, logs on disk (and gone), and stranger's text that
HTML must not take as markup."""
from __future__ import annotations

from pathlib import Path

from envs.catalog import Catalog, EnvRecord, now, record_id
from envs.export.tasks import tasks_path
from envs.spec import (
    Collection,
    EnvSpec,
    Failure,
    Plan,
    SourceRecord,
    StepLog,
    TestRun,
    Timings,
    Verification,
)
from envs.task import Task

ECOSYSTEMS = ("python", "python+rust", "go", "rust", "node", "java", "python@packages/core")
FAILURES = ("install_failed", "tests_failing", "collection_failed", "no_tests", "tests_timeout")
HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)>'
"""A repository name and failure evidence that would run script if the page took them as markup."""


def spec(i: int, env_dir: Path) -> EnvSpec:
    """The i-th build: every 3rd fails, some are partial, the rest verified."""
    status = "failed" if i % 3 == 0 else "partial" if i % 5 == 2 else "verified"
    suite = [3, 40, 250, 1800, 12][i % 5] * (1 + i % 4)
    failed = 0 if status == "verified" else 1 + i % 5
    counts = {"passed": suite - failed, "failed": failed, "error": 0, "skipped": i % 3}
    repo = f"https://example.com/org{i % 4}/{'evil' + HOSTILE if i == 3 else f'project-{i}'}.git"
    log = [StepLog(index=1, phase="install", command="pip install -e .", exit_code=0, duration_s=3.0,
                   log_file="logs/001-install.log")]
    failure = None
    if status != "verified":
        log.append(StepLog(index=2, phase="tests", command="pytest", exit_code=1, duration_s=2.0,
                           log_file="logs/002-tests.log"))
        failure = Failure(failure_class="narrow_suite" if status == "partial" else FAILURES[i % len(FAILURES)],
                          message=f"step 2 failed ({i})",
                          evidence=f"Traceback: {HOSTILE}\nE   assert 1 == 2 & x < y" if i == 3 else "E   boom")
    for entry in log:
        if i % 11 != 6:  # one failed build's logs are gone from disk
            (env_dir / entry.log_file).parent.mkdir(parents=True, exist_ok=True)
            (env_dir / entry.log_file).write_text(f"$ {entry.command}\n# exit {entry.exit_code}\n")
    return EnvSpec(
        status=status, model="embedded", plan=Plan(ecosystem=ECOSYSTEMS[i % len(ECOSYSTEMS)]),
        base_image="autoinstall-base:3.11", python="3.11",
        source=SourceRecord(repo=repo, name=repo.rsplit("/", 1)[-1].removesuffix(".git"), commit=f"{i:040x}"),
        image=f"autoinstall-env/p{i}:{i:04x}", env_dir=str(env_dir), log=log, failure=failure,
        verification=Verification(verified=status == "verified", runs=[TestRun(exit_code=0, counts=counts)],
                                  collection=Collection(suite=suite, selected=suite)),
        timings=Timings(total_s=[45.0, 130.0, 610.0, 1900.0, 75.0][i % 5] + i),
        created_at="2026-01-02T00:00:00+00:00")


def task(env_id: str, n: int, kind: str) -> Task:
    return Task(instance_id=f"org__p-{kind}-{env_id[:4]}{n}", env_id=env_id, repo="org/p", base_commit="a" * 40,
                image="autoinstall-env/p:1", kind=kind, bug_patch="", gold_patch="",  # type: ignore[arg-type]
                problem_statement="fix it", test_command="pytest")


def fill(root: Path, home: Path, n: int = 14) -> Catalog:
    """A catalog of `n` finished builds, one that raised before it was recorded and one still running; task
    stores under home/tasks for some verified ones (one of them not readable)."""
    catalog = Catalog(root)
    for i in range(n):
        env_dir = catalog.envs_dir / f"e{i}"
        record = catalog.upsert_spec(spec(i, env_dir), env_dir)
        if record.status == "verified" and i % 2:
            tasks = [task(record.id, k, "mutation" if k % 3 else "history") for k in range(i % 6)]
            tasks_path(record.id, home).parent.mkdir(parents=True, exist_ok=True)
            tasks_path(record.id, home).write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    broken = next(r for r in catalog.list(status="verified"))
    tasks_path(broken.id, home).parent.mkdir(parents=True, exist_ok=True)
    tasks_path(broken.id, home).write_text("not json\n")
    for repo, status in (("https://example.com/raised.git", "failed"), ("https://example.com/busy.git", "running")):
        rid = record_id(repo, None, None, "embedded")
        catalog.upsert(EnvRecord(id=rid, repo=repo, model="embedded", status=status,  # type: ignore[arg-type]
                                 failure_class="crash" if status == "failed" else None,
                                 failure_message="RuntimeError: it broke" if status == "failed" else "",
                                 env_dir=str(catalog.envs_dir / rid), wall_s=12.0, created_at=now(),
                                 updated_at=now()))
    return catalog
