"""Batch builds with a fake build function and a real catalog: parsing, resuming, errors, Ctrl-C,
two batches at once."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.batch import BatchEntry, BatchOptions, parse_batch, run_batch
from autoinstall.batch.fake import fake_build
from autoinstall.batch.runner import EntryResult, NullObserver, failure_class_for
from autoinstall.commands.batch import batch_cmd
from autoinstall.commands.catalog import catalog_app
from autoinstall.options import BuildOptions
from autoinstall.record.lock import BuildLockedError
from envs.catalog import Catalog, CatalogError, EnvRecord, new_owner, now, record_id, release_owner
from envs.errors import EngineUnavailableError

ROOT = Path(__file__).resolve().parents[2]


def entries(*repos: str) -> list[BatchEntry]:
    return [BatchEntry(line=i, repo=repo) for i, repo in enumerate(repos, 1)]


def built(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(tmp_path / "cat")


# --- the batch file ---------------------------------------------------------------------------------------

def test_parse_lines_json_comments_and_commits(tmp_path: Path) -> None:
    text = textwrap.dedent("""\
        # a comment
        https://github.com/org/a.git

        https://github.com/org/b.git@v1.2   # trailing comment
        git@github.com:org/c.git
        git@github.com:org/c.git@abc123
        https://user@host.example/org/d
        {"repo": "https://github.com/org/e", "commit": "feature/x"}
        {"repo": "sub/dir"}
        ./local@deadbeef
        /abs/path
    """)
    got, errors = parse_batch(text, tmp_path)
    assert errors == []
    assert [(e.line, e.repo, e.commit) for e in got] == [
        (2, "https://github.com/org/a.git", None),
        (4, "https://github.com/org/b.git", "v1.2"),
        (5, "git@github.com:org/c.git", None),
        (6, "git@github.com:org/c.git", "abc123"),
        (7, "https://user@host.example/org/d", None),
        (8, "https://github.com/org/e", "feature/x"),
        (9, str(tmp_path / "sub" / "dir"), None),
        (10, str(tmp_path / "local"), "deadbeef"),
        (11, "/abs/path", None),
    ]


@pytest.mark.parametrize(("line", "message"), [
    ("two words", "one repository per line"),
    ("https://h/r@", "nothing after '@'"),
    ('{"repo": "x",', "invalid JSON"),
    ('{"repo": 3}', 'missing "repo"'),
    ('{"repo": "x", "sha": "1"}', "unknown keys ['sha']"),
    ('{"repo": "x", "commit": ""}', '"commit" must be'),
])
def test_malformed_lines_are_reported_with_their_number(line: str, message: str) -> None:
    got, errors = parse_batch(f"https://h/first\n{line}\nhttps://h/last\n")
    assert [e.repo for e in got] == ["https://h/first", "https://h/last"]
    assert len(errors) == 1 and errors[0].line == 2 and message in errors[0].message


def test_failure_class_for_exceptions() -> None:
    assert failure_class_for(EngineUnavailableError("x")) == "infrastructure"
    assert failure_class_for(type("SourceError", (ValueError,), {})("x")) == "source_error"
    assert failure_class_for(KeyError("x")) == "crash"


# --- running ----------------------------------------------------------------------------------------------

def test_outcomes_are_recorded_and_the_batch_goes_on(catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "built.txt"
    batch = entries(f"fake://ok?log={log}", f"fake://bad?outcome=failed&log={log}",
                    f"fake://boom?outcome=raise&log={log}")
    summary = run_batch(batch, catalog, BatchOptions(jobs=2), build=fake_build)
    assert [r.outcome for r in summary.results] == ["verified", "failed", "failed"]
    assert summary.counts["verified"] == 1 and summary.counts["failed"] == 2
    assert summary.by_failure_class == {"tests_failing": 1, "infrastructure": 1}
    by_status = {r.name: r for r in catalog.list()}
    assert by_status["ok"].status == "verified" and by_status["bad"].status == "failed"
    boom = catalog.get(record_id(batch[2].repo, None, None, "embedded"))
    assert boom.status == "failed" and boom.failure_class == "infrastructure"
    assert boom.failure_message == "EnvError: fake engine failure while building boom"
    assert "Traceback" in (Path(boom.env_dir) / "logs" / "batch-error.txt").read_text()
    assert Path(by_status["ok"].env_dir, "spec.json").is_file()
    assert Path(by_status["ok"].env_dir).parent == catalog.envs_dir
    assert sorted(built(log)) == ["bad", "boom", "ok"]


def test_any_exception_is_recorded_as_a_crash(catalog: Catalog) -> None:
    def explode(repo: str, options: object, report: object) -> None:
        return 1 / 0

    summary = run_batch(entries("fake://z"), catalog, build=explode)  # type: ignore[arg-type]
    assert summary.results[0].failure_class == "crash"
    assert catalog.list()[0].failure_message == "ZeroDivisionError: division by zero"


def test_the_real_pipeline_records_a_source_error(catalog: Catalog, tmp_path: Path) -> None:
    summary = run_batch(entries(str(tmp_path / "missing")), catalog)  # default build: build_environment
    assert summary.results[0].failure_class == "source_error"
    assert catalog.list()[0].failure_message.startswith("SourceError: ")


def test_resume_skips_finished_work_and_retries_failures_on_request(catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "built.txt"
    batch = entries(f"fake://ok?log={log}", f"fake://bad?outcome=failed&log={log}",
                    f"fake://boom?outcome=raise&log={log}")
    run_batch(batch, catalog, build=fake_build)
    again = run_batch(batch, catalog, build=fake_build)
    assert [r.outcome for r in again.results] == ["skipped"] * 3
    assert again.results[1].message == "already failed (--retry-failed builds it again)"
    assert len(built(log)) == 3
    retried = run_batch(batch, catalog, BatchOptions(retry_failed=True), build=fake_build)
    assert [r.outcome for r in retried.results] == ["skipped", "failed", "failed"]
    assert sorted(built(log)) == ["bad", "bad", "boom", "boom", "ok"]
    assert len(catalog.list()) == 3  # replaced, not duplicated


def test_the_model_and_the_commit_are_part_of_the_job(catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "built.txt"
    run_batch(entries(f"fake://ok?log={log}"), catalog, build=fake_build)
    run_batch([BatchEntry(line=1, repo=f"fake://ok?log={log}", commit="v2")], catalog, build=fake_build)
    openai = BatchOptions(build=BuildOptions(model="openai:m"))
    run_batch(entries(f"fake://ok?log={log}"), catalog, openai, build=fake_build)
    assert len(built(log)) == 3 and len(catalog.list(status="verified")) == 3


def test_a_record_is_running_while_it_builds(catalog: Catalog) -> None:
    seen: list[str] = []

    def build(repo: str, options: object, report: object) -> object:
        seen.append(catalog.get(record_id(repo, None, None, "embedded")).status)
        return fake_build(repo, options, report)  # type: ignore[arg-type]

    run_batch(entries("fake://a"), catalog, build=build)  # type: ignore[arg-type]
    assert seen == ["running"] and catalog.list()[0].status == "verified"


class Counter(NullObserver):
    def __init__(self) -> None:
        self.lock, self.now, self.peak, self.done = threading.Lock(), 0, 0, 0

    def started(self, entry: BatchEntry) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def finished(self, result: EntryResult) -> None:
        with self.lock:
            self.now -= result.outcome != "skipped"
            self.done += 1


def test_jobs_run_in_parallel(catalog: Catalog) -> None:
    counter = Counter()
    started = time.monotonic()
    summary = run_batch(entries(*(f"fake://r{i}?sleep=0.4" for i in range(8))), catalog, BatchOptions(jobs=4),
                        build=fake_build, observer=counter)
    assert summary.counts["verified"] == 8 and counter.done == 8
    assert counter.peak == 4
    assert time.monotonic() - started < 8 * 0.4 * 0.75


def test_stale_running_records_are_rebuilt_and_live_ones_skipped(catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "built.txt"
    stale_repo, busy_repo = f"fake://stale?log={log}", f"fake://busy?log={log}"
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    live = new_owner()
    for repo, owner in ((stale_repo, f"{os.uname().nodename}:{proc.pid}:x"), (busy_repo, live)):
        rid = record_id(repo, None, None, "embedded")
        catalog.upsert(EnvRecord(id=rid, repo=repo, model="embedded", status="running", owner=owner,
                                 env_dir=str(catalog.envs_dir / rid), created_at=now(), updated_at=now()))
    try:
        summary = run_batch(entries(stale_repo, busy_repo), catalog, build=fake_build)
    finally:
        release_owner(live)
    assert [r.outcome for r in summary.results] == ["verified", "skipped"]
    assert summary.results[1].message == f"being built by {live}"
    assert built(log) == ["stale"]


def test_a_catalog_that_cannot_be_written_ends_the_entry_not_the_batch(catalog: Catalog) -> None:
    class Broken(Catalog):
        def upsert_spec(self, *args: object, **kwargs: object) -> EnvRecord:
            msg = "disk full"
            raise CatalogError(msg)

    summary = run_batch(entries("fake://a", "fake://b"), Broken(catalog.root), build=fake_build)
    assert [r.failure_class for r in summary.results] == ["catalog", "catalog"]
    assert "not recorded" in summary.results[0].message


# --- the CLI commands through a throwaway app ---------------------------------------------------------------

def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("batch")(batch_cmd)
    app.add_typer(catalog_app, name="catalog")
    return app


def test_batch_and_catalog_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("autoinstall.pipeline.build_environment", fake_build)
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    file = tmp_path / "repos.txt"
    file.write_text("fake://ok\nnot a repo line\n{\"repo\": \"fake://bad?outcome=failed\"}\n")
    runner = CliRunner()
    result = runner.invoke(cli(), ["batch", str(file), "--json", "-j", "2"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["counts"]["verified"] == 1 and summary["counts"]["malformed"] == 1
    ok = next(r for r in summary["results"] if r["outcome"] == "verified")
    assert (ok["tests_collected"], ok["tests_selected"], ok["tests_deselected"], ok["tests_passed"],
            ok["tests_errors"], ok["tests_skipped"]) == (6, 5, 1, 3, 0, 1)
    assert summary["line_errors"][0]["line"] == 2 and summary["catalog"] == str(tmp_path / "home" / "catalog")

    listed = json.loads(runner.invoke(cli(), ["catalog", "list", "--json", "--status", "verified"]).stdout)
    assert [r["name"] for r in listed] == ["ok"]
    shown = runner.invoke(cli(), ["catalog", "show", listed[0]["id"][:6]])
    assert shown.exit_code == 0 and "VERIFIED" in shown.stdout and listed[0]["id"] in shown.stdout
    missing = runner.invoke(cli(), ["catalog", "show", "ffffffffffff"])
    assert isinstance(missing.exception, CatalogError) and "catalog list" in str(missing.exception)
    assert runner.invoke(cli(), ["catalog", "list", "--status", "nope"]).exit_code == 2

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    removed = runner.invoke(cli(), ["catalog", "rm", listed[0]["id"], "--json"])
    assert removed.exit_code == 0 and json.loads(removed.stdout)[0]["warnings"]
    assert [r.name for r in Catalog(tmp_path / "home" / "catalog").list()] == ["bad"]
    gc = runner.invoke(cli(), ["catalog", "gc", "--no-images", "--json"])
    assert gc.exit_code == 0 and json.loads(gc.stdout)["removed_dirs"] == []


def test_batch_command_live_display_and_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("autoinstall.pipeline.build_environment", fake_build)
    file = tmp_path / "repos.txt"
    file.write_text("fake://ok?sleep=0.3\nfake://bad?outcome=raise\n")
    result = CliRunner().invoke(cli(), ["batch", str(file), "--catalog", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert "infrastructure" in result.stdout and "verified" in result.stdout
    assert "Suites built in this run" in result.stdout  # what each built suite counted
    assert ("tests: 6 collected in 1 of 2 suites, 5 selected, 1 deselected; 3 passed, 0 failed, 0 errors, 1 skipped, "
            "0 flaky") in " ".join(result.stdout.split())
    again = CliRunner().invoke(cli(), ["batch", str(file), "--catalog", str(tmp_path / "c")])
    assert again.exit_code == 1 and "skipped" in again.stdout  # the failure is still a failure


# --- real processes: Ctrl-C and two batches at once ---------------------------------------------------------

CHILD = textwrap.dedent("""
    import sys, typer
    import autoinstall.pipeline
    from autoinstall.batch.fake import fake_build
    from autoinstall.commands.batch import batch_cmd
    autoinstall.pipeline.build_environment = fake_build
    app = typer.Typer()
    app.command()(batch_cmd)
    app(sys.argv[1:])
""")


def start_batch(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen([sys.executable, str(script), *args], cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


def statuses(root: Path) -> list[str]:
    try:
        with sqlite3.connect(root / "catalog.sqlite") as db:
            return [row[0] for row in db.execute("SELECT status FROM envs")]
    except sqlite3.OperationalError:  # the child has not created the catalog yet
        return []


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_ctrl_c_keeps_finished_work_and_the_next_run_finishes_the_rest(tmp_path: Path) -> None:
    log, root = tmp_path / "built.txt", tmp_path / "cat"
    file = tmp_path / "repos.txt"
    file.write_text("".join(f"fake://r{i}?sleep=1.0&log={log}\n" for i in range(6)))
    child = start_batch(tmp_path, str(file), "--catalog", str(root), "--jobs", "2", "--json")
    deadline = time.monotonic() + 60
    while statuses(root).count("verified") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=30)
    assert child.returncode == 130, stderr
    summary = json.loads(stdout)
    counts = summary["counts"]
    assert summary["interrupted"] and counts["interrupted"] >= 1 and counts["not_started"] >= 1
    after = statuses(root)
    assert set(after) == {"verified", "running"} and after.count("running") == counts["interrupted"]
    done_first = after.count("verified")

    child = start_batch(tmp_path, str(file), "--catalog", str(root), "--jobs", "3", "--json")
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr
    assert json.loads(stdout)["counts"]["skipped"] == done_first
    assert statuses(root) == ["verified"] * 6
    names = built(log)
    assert sorted(set(names)) == [f"r{i}" for i in range(6)]
    assert len(names) == 6 + summary["counts"]["interrupted"]  # only the interrupted ones ran twice


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_two_batches_on_one_catalog_build_each_entry_once(tmp_path: Path) -> None:
    log, root = tmp_path / "built.txt", tmp_path / "cat"
    file = tmp_path / "repos.txt"
    file.write_text("".join(f"fake://r{i}?sleep=0.3&log={log}\n" for i in range(12)))
    args = (str(file), "--catalog", str(root), "--jobs", "3", "--json")
    children = [start_batch(tmp_path, *args) for _ in "ab"]
    outputs = [child.communicate(timeout=90) for child in children]
    assert [c.returncode for c in children] == [0, 0], [o[1] for o in outputs]
    counts = [json.loads(out)["counts"] for out, _ in outputs]
    assert sum(c["verified"] for c in counts) == 12
    assert all(c["skipped"] + c["verified"] == 12 for c in counts)
    assert sorted(built(log)) == sorted(f"r{i}" for i in range(12))
    assert statuses(root) == ["verified"] * 12
    with sqlite3.connect(root / "catalog.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"



def test_an_environment_another_command_is_building_is_skipped_not_failed(catalog: Catalog) -> None:
    def locked(repo: str, options: object, report: object) -> None:
        raise BuildLockedError("fake://z at abc is being built right now by process 4242 (lock ...)")

    summary = run_batch(entries("fake://z"), catalog, build=locked)  # type: ignore[arg-type]
    (result,) = summary.results
    assert result.outcome == "skipped" and "process 4242" in result.message
    assert summary.counts["failed"] == 0
    assert all(r.status != "failed" for r in catalog.list())
