"""The catalog: records, lookups, removal, gc, and safety against concurrent writers and SIGKILL."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from envs.catalog import (
    Catalog,
    CatalogError,
    EnvRecord,
    new_owner,
    now,
    owner_alive,
    record_from_spec,
    record_id,
    release_owner,
)
from envs.spec import Collection, EnvSpec, Failure, Plan, SourceRecord, TestRun, Verification

ROOT = Path(__file__).resolve().parents[2]


def make_spec(
    repo: str = "https://example.com/org/demo.git",
    *,
    status: str = "verified",
    commit: str = "a" * 40,
    model: str = "embedded",
    image: str | None = "autoinstall-env/demo:aaaa",
    evidence: str = "",
) -> EnvSpec:
    counts = {"passed": 5, "failed": 1, "error": 1, "skipped": 2}
    return EnvSpec(
        status=status,
        model=model,
        plan=Plan(),
        base_image="autoinstall-base:3.11",
        python="3.11",
        source=SourceRecord(
            repo=repo, name=repo.rsplit("/", 1)[-1], commit=commit, commit_date="2024-05-01T00:00:00Z"
        ),
        image=image,
        verification=Verification(verified=status == "verified", runs=[TestRun(exit_code=0, counts=counts)]),
        failure=None
        if status == "verified"
        else Failure(failure_class="install_failed", message="boom", evidence=evidence),
        created_at="2024-05-02T00:00:00+00:00",
    )


def running(catalog: Catalog, repo: str, owner: str, requested_commit: str | None = None) -> EnvRecord:
    rid = record_id(repo, requested_commit, None, "embedded")
    return EnvRecord(
        id=rid,
        repo=repo,
        requested_commit=requested_commit,
        model="embedded",
        status="running",
        env_dir=str(catalog.envs_dir / rid),
        owner=owner,
        created_at=now(),
        updated_at=now(),
    )


def dead_owner() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{socket.gethostname()}:{proc.pid}:deadbeef"


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(tmp_path / "cat")


def test_record_id_is_short_stable_and_keyed_on_all_four() -> None:
    rid = record_id("r", "c", "b", "m")
    assert rid == record_id("r", "c", "b", "m") and len(rid) == 12 and int(rid, 16) >= 0
    assert (
        len(
            {
                rid,
                record_id("r", "c", "b", "x"),
                record_id("r", "c", "x", "m"),
                record_id("r", "x", "b", "m"),
                record_id("x", "c", "b", "m"),
            }
        )
        == 5
    )


def test_upsert_then_get_by_id_and_prefix(catalog: Catalog, tmp_path: Path) -> None:
    spec = make_spec()
    record = catalog.upsert_spec(spec, tmp_path / "env", requested_commit="main")
    assert record.id == record_id(spec.source.repo, spec.source.commit, spec.base_image, "embedded")
    assert (record.tests_passed, record.tests_failed, record.tests_skipped) == (5, 2, 2)
    assert record.requested_commit == "main" and record.format == "autoinstall-catalog/1"
    assert catalog.get(record.id) == record
    assert catalog.get(record.id[:4].upper()) == record
    assert catalog.get_spec(record.id[:5]) == spec
    assert Catalog(catalog.root).get(record.id) == record  # persisted, reopened


def test_spec_survives_the_env_dir(catalog: Catalog, tmp_path: Path) -> None:
    record = catalog.upsert_spec(make_spec(), tmp_path / "gone")
    assert not Path(record.env_dir).exists()
    assert catalog.get_spec(record.id) == make_spec()


def test_unknown_id_says_how_to_list(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match="autoinstall catalog list"):
        catalog.get("0123abcd")
    with pytest.raises(CatalogError, match="catalog list"):
        catalog.get("")


def test_ambiguous_prefix_lists_the_matches(catalog: Catalog, tmp_path: Path) -> None:
    records = [catalog.upsert_spec(make_spec(f"https://h/r{i}"), tmp_path / f"e{i}") for i in range(17)]
    # 17 ids over 16 hex digits: some first digit is shared
    first = next(r.id[0] for r in records if sum(s.id[0] == r.id[0] for s in records) > 1)
    same = [r.id for r in records if r.id[0] == first]
    with pytest.raises(CatalogError, match="give more digits") as info:
        catalog.get(first)
    assert all(rid in str(info.value) for rid in same)


def test_same_key_replaces_and_keeps_created_at(catalog: Catalog, tmp_path: Path) -> None:
    first = catalog.upsert_spec(make_spec(status="failed"), tmp_path / "a")
    time.sleep(1.1)
    second = catalog.upsert_spec(make_spec(status="verified"), tmp_path / "a")
    assert second.id == first.id and second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert [r.status for r in catalog.list()] == ["verified"]


def test_a_directory_holds_one_record(catalog: Catalog, tmp_path: Path) -> None:
    placeholder = running(catalog, "https://h/x", new_owner())
    catalog.upsert(placeholder)
    final = catalog.upsert_spec(make_spec("https://h/x"), Path(placeholder.env_dir))
    assert [r.id for r in catalog.list()] == [final.id] and final.id != placeholder.id


def test_list_filters(catalog: Catalog, tmp_path: Path) -> None:
    catalog.upsert_spec(make_spec("https://h/Alpha"), tmp_path / "1")
    catalog.upsert_spec(make_spec("https://h/beta", status="failed"), tmp_path / "2")
    catalog.upsert_spec(make_spec("https://h/alphabet", model="openai:x"), tmp_path / "3")
    assert len(catalog.list()) == 3
    assert [r.name for r in catalog.list(status="failed")] == ["beta"]
    assert [r.name for r in catalog.list(failure_class="install_failed")] == ["beta"]
    assert sorted(r.name for r in catalog.list(repo_contains="ALPHA")) == ["Alpha", "alphabet"]
    assert len(catalog.list(limit=2)) == 2
    assert catalog.list(status="running") == []


def test_claim_skips_done_and_busy_jobs(catalog: Catalog, tmp_path: Path) -> None:
    owner = new_owner()
    try:
        catalog.upsert_spec(make_spec("https://h/ok"), tmp_path / "ok")
        catalog.upsert_spec(make_spec("https://h/bad", status="failed"), tmp_path / "bad")
        assert catalog.claim(running(catalog, "https://h/ok", owner)).status == "verified"
        assert catalog.claim(running(catalog, "https://h/ok", owner), retry_failed=True).status == "verified"
        assert catalog.claim(running(catalog, "https://h/bad", owner)).status == "failed"
        assert catalog.claim(running(catalog, "https://h/bad", owner), retry_failed=True) is None
        assert catalog.claim(running(catalog, "https://h/new", owner)) is None
        assert catalog.claim(running(catalog, "https://h/new", new_owner())).owner == owner  # busy
        assert (
            catalog.claim(running(catalog, "https://h/ok", owner, requested_commit="v2")) is None
        )  # another job
    finally:
        release_owner(owner)
    assert catalog.claim(running(catalog, "https://h/new", new_owner())) is None  # owner released: stale


def test_owner_alive() -> None:
    owner = new_owner()
    assert owner_alive(owner)
    release_owner(owner)
    assert not owner_alive(owner)
    assert not owner_alive(dead_owner())
    assert owner_alive(f"{socket.gethostname()}:1:x")  # init: alive (PermissionError or running)
    assert owner_alive("another-host:12345:x")  # cannot tell from here: assumed alive
    assert not owner_alive("") and not owner_alive("garbage")


def test_remove_deletes_record_and_directory(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    env_dir = catalog.envs_dir / "x1"
    (env_dir / "logs").mkdir(parents=True)
    record = catalog.upsert_spec(make_spec(), env_dir)
    result = catalog.remove(record.id[:6])
    assert result.env_dir_removed and not env_dir.exists() and not result.image_removed
    assert any("docker rmi autoinstall-env/demo:aaaa" in w for w in result.warnings)
    assert catalog.list() == []
    with pytest.raises(CatalogError, match="catalog list"):
        catalog.remove(record.id)


def test_remove_keeps_shared_images_and_outside_directories(catalog: Catalog, tmp_path: Path) -> None:
    outside = tmp_path / "user-out"
    outside.mkdir()
    a = catalog.upsert_spec(make_spec(model="embedded"), outside)
    catalog.upsert_spec(make_spec(model="openai:x"), catalog.envs_dir / "b")
    result = catalog.remove(a.id)
    assert outside.is_dir() and not result.env_dir_removed
    assert result.warnings == ["image autoinstall-env/demo:aaaa is kept: another catalog record uses it"]


def test_remove_refuses_a_build_in_progress(catalog: Catalog) -> None:
    owner = new_owner()
    try:
        record = catalog.upsert(running(catalog, "https://h/x", owner))
        with pytest.raises(CatalogError, match="stop that batch first"):
            catalog.remove(record.id)
    finally:
        release_owner(owner)


def test_gc(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    kept = catalog.envs_dir / "kept"
    kept.mkdir()
    orphan = catalog.envs_dir / "orphan"
    orphan.mkdir()
    catalog.upsert_spec(make_spec("https://h/a"), kept)
    vanished = catalog.upsert_spec(make_spec("https://h/b"), catalog.envs_dir / "vanished")
    stale = catalog.upsert(running(catalog, "https://h/c", dead_owner()))
    dry = catalog.gc(dry_run=True)
    assert dry.removed_dirs == [str(orphan)] and orphan.is_dir()
    report = catalog.gc()
    assert report.removed_dirs == [str(orphan)] and not orphan.exists() and kept.is_dir()
    assert report.missing_dirs == [vanished.id] and report.stale_running == [stale.id]
    assert catalog.get(vanished.id).status == "verified"  # kept, with its spec
    assert any("not cleaned" in w and "Docker" in w for w in report.warnings)


def test_gc_leaves_docker_alone_while_a_build_runs(catalog: Catalog) -> None:
    owner = new_owner()
    try:
        catalog.upsert(running(catalog, "https://h/x", owner))
        report = catalog.gc()
    finally:
        release_owner(owner)
    assert report.removed_images == [] and "left alone" in report.warnings[0]


def test_not_a_database_and_newer_schema_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "catalog.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(CatalogError, match="another --catalog"):
        Catalog(bad)
    newer = Catalog(tmp_path / "newer")
    with sqlite3.connect(newer.path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(CatalogError, match="upgrade autoinstall"):
        Catalog(newer.root)


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tests.envs.test_catalog import make_spec
    from envs.catalog import Catalog
    root, tag, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    catalog = Catalog(root)
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.01)
    i = 0
    while count < 0 or i < count:
        spec = make_spec(f"https://h/{tag}/{i}", status="failed", evidence="x" * 200_000)
        catalog.upsert_spec(spec, root / "envs" / f"{tag}-{i}")
        i += 1
        print(i, flush=True)
""")


def _child(tmp_path: Path, root: Path, tag: str, count: int) -> subprocess.Popen[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen(
        [sys.executable, str(script), str(root), tag, str(count), str(tmp_path / "go")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _integrity(root: Path) -> str:
    with sqlite3.connect(root / "catalog.sqlite") as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    children = [_child(tmp_path, root, tag, 200) for tag in ("p1", "p2")]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    for child in children:
        assert child.wait(timeout=240) == 0
    records = Catalog(root).list()
    assert len(records) == 400
    assert {r.repo for r in records} == {f"https://h/{t}/{i}" for t in ("p1", "p2") for i in range(200)}
    assert _integrity(root) == "ok"


@pytest.mark.timeout(120)
def test_sigkill_mid_write_leaves_whole_records(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    child = _child(tmp_path, root, "k", -1)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    written = 0
    while written < 30:
        written = int(child.stdout.readline())
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert _integrity(root) == "ok"
    catalog = Catalog(root)
    records = catalog.list()
    assert len(records) >= written
    for record in records:
        spec = catalog.get_spec(record.id)
        assert spec is not None and len(spec.failure.evidence) == 200_000  # whole, not torn
    catalog.upsert_spec(make_spec("https://h/after"), root / "envs" / "after")
    assert len(catalog.list()) == len(records) + 1


def test_the_record_counts_the_suite_as_verification_did(tmp_path: Path) -> None:
    verification = Verification(verified=True, flaky=["t::b"], collection=Collection(default=120, command=120,
                                                                                      selected=117),
                                counts={"passed": 110, "failed": 2, "error": 1, "skipped": 3, "flaky": 1})
    spec = EnvSpec(status="verified", source=SourceRecord(repo="r", name="r", commit="c" * 40), model="embedded",
                   plan=Plan(), verification=verification)
    record = record_from_spec(spec, tmp_path)
    assert (record.tests_passed, record.tests_failed, record.tests_skipped, record.tests_flaky) == (110, 3, 3, 1)
    assert (record.tests_collected, record.tests_deselected) == (120, 3)
