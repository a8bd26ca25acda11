"""The catalog: one SQLite record per environment, keyed by (repository, commit, base image, model).

Safe for several processes at once: WAL journal, a busy timeout, and every write in one `BEGIN IMMEDIATE`
transaction, so a process killed mid-write leaves either the whole record or none of it. A record keeps the
full spec JSON, so `show` works after its directory is gone. The record and its test counts are
envs/catalog_record.py. `running` records name their owner
(host:pid:token, envs/catalog_owners.py); once that owner is gone they count as not done.
"""
from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from pydantic import BaseModel, Field

from envs.catalog_owners import new_owner, owner_alive, release_owner
from envs.catalog_record import CATALOG_FORMAT, EnvRecord, Status, SuiteCounts, now, record_from_spec, record_id
from envs.errors import EnvError
from envs.home import autoinstall_home
from envs.spec import EnvSpec

SCHEMA_VERSION = 1
DB_NAME = "catalog.sqlite"
FINAL_STATUSES = ("verified", "partial", "failed")
__all__ = ["CATALOG_FORMAT", "Catalog", "CatalogError", "EnvRecord", "GcReport", "RemoveResult", "Status",
           "SuiteCounts", "new_owner", "now", "owner_alive", "record_from_spec", "record_id", "release_owner"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS envs (
    id TEXT PRIMARY KEY, repo TEXT NOT NULL, requested_commit TEXT, model TEXT NOT NULL,
    status TEXT NOT NULL, failure_class TEXT, env_dir TEXT NOT NULL, updated_at TEXT NOT NULL,
    record TEXT NOT NULL, spec TEXT);
CREATE INDEX IF NOT EXISTS envs_job ON envs (repo, model);
CREATE INDEX IF NOT EXISTS envs_dir ON envs (env_dir);
"""


class CatalogError(EnvError):
    """The catalog cannot do what was asked; the message says what to do instead."""


class RemoveResult(BaseModel):
    """What `remove` did."""

    id: str
    env_dir_removed: bool = False
    image_removed: bool = False
    warnings: list[str] = Field(default_factory=list)


class GcReport(BaseModel):
    """What `gc` removed or found. Records whose directory vanished are kept (their spec is in the database,
    their image may still run); they are listed in `missing_dirs` for `catalog rm`."""

    dry_run: bool
    removed_dirs: list[str] = Field(default_factory=list)
    """Directories under <catalog>/envs that no record points to."""
    missing_dirs: list[str] = Field(default_factory=list)
    """Ids of records whose env_dir no longer exists (kept)."""
    stale_running: list[str] = Field(default_factory=list)
    """Ids of running records whose process is gone: the next batch rebuilds them."""
    removed_images: list[str] = Field(default_factory=list)
    removed_containers: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def default_catalog_dir() -> Path:
    return autoinstall_home() / "catalog"


class Catalog:
    """The environments under one catalog directory: `<dir>/catalog.sqlite` and `<dir>/envs/<id>/`."""

    def __init__(self, root: Path | None = None, *, busy_timeout_s: float = 60.0) -> None:
        self.root = (root or default_catalog_dir()).expanduser().resolve()
        self.envs_dir = self.root / "envs"
        self.path = self.root / DB_NAME
        self.busy_timeout_s = busy_timeout_s
        self.envs_dir.mkdir(parents=True, exist_ok=True)
        with self._write() as db:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                msg = (f"The catalog {self.path} has schema {row[0]}, newer than this autoinstall knows "
                       f"({SCHEMA_VERSION}); upgrade autoinstall or pass another --catalog directory.")
                raise CatalogError(msg)

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            self._use_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as e:
            msg = (f"Cannot open the catalog database {self.path} ({e}). If it is not an autoinstall "
                   "catalog, pass another --catalog directory.")
            raise CatalogError(msg) from e
        return db

    def _use_wal(self, db: sqlite3.Connection) -> None:
        """Switch a new catalog to WAL. The switch needs an exclusive lock and SQLite answers "locked" at once,
        without waiting, when another process is creating the same catalog: retry until the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout_s
        while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            try:
                db.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it lands, or none of it."""
        with self._errors(), closing(self._connect()) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._errors(), closing(self._connect()) as db:
            return db.execute(sql, args).fetchall()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as e:
            msg = (f"The catalog {self.path} could not be used ({e}): another process may hold it for "
                   f"longer than {self.busy_timeout_s:.0f}s, or its disk is full; nothing was half-written, "
                   "try again.")
            raise CatalogError(msg) from e

    def _put(self, db: sqlite3.Connection, record: EnvRecord, spec: str | None) -> EnvRecord:
        """Insert or replace a record; any other record in the same directory is replaced too."""
        old = db.execute("SELECT record FROM envs WHERE id = ?", (record.id,)).fetchone()
        if old is not None:
            record.created_at = json.loads(old[0])["created_at"]
        db.execute("DELETE FROM envs WHERE env_dir = ? AND id != ?", (record.env_dir, record.id))
        db.execute("INSERT OR REPLACE INTO envs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (record.id, record.repo, record.requested_commit, record.model, record.status,
                    record.failure_class, record.env_dir, record.updated_at, record.model_dump_json(), spec))
        return record

    def upsert_spec(self, spec: EnvSpec, env_dir: Path, requested_commit: str | None = None) -> EnvRecord:
        """Record a finished build (replacing the record of the same key, and any other in env_dir)."""
        record = record_from_spec(spec, Path(env_dir).resolve(), requested_commit)
        with self._write() as db:
            return self._put(db, record, spec.model_dump_json())

    def upsert(self, record: EnvRecord) -> EnvRecord:
        """Record without a spec: a running placeholder, or a build that raised."""
        with self._write() as db:
            return self._put(db, record, None)

    def claim(self, placeholder: EnvRecord, *, retry_failed: bool = False) -> EnvRecord | None:
        """Atomically start a job: write `placeholder` (status running) unless the job is done or busy.

        A job is (repo, requested_commit, model). It is done when a record of it is verified, or failed and
        `retry_failed` is off; busy when a record of it is running and its owner is alive.

        Returns:
            None when the placeholder was written, else the record that makes the job done or busy.
        """
        with self._write() as db:
            rows = db.execute("SELECT record FROM envs WHERE repo = ? AND model = ? AND requested_commit IS ?"
                              " ORDER BY updated_at DESC",
                              (placeholder.repo, placeholder.model, placeholder.requested_commit)).fetchall()
            for (raw,) in rows:
                rec = EnvRecord.model_validate_json(raw)
                if rec.status == "verified" or (rec.status in ("partial", "failed") and not retry_failed):
                    return rec
                if rec.status == "running" and owner_alive(rec.owner):
                    return rec
            self._put(db, placeholder, None)
        return None

    def get(self, id_or_prefix: str) -> EnvRecord:
        """The record whose id is, or uniquely starts with, `id_or_prefix`.

        Raises:
            CatalogError: no record matches, or several do (the message lists them).
        """
        prefix = id_or_prefix.strip().lower()
        rows = self._read("SELECT record FROM envs WHERE substr(id, 1, ?) = ? ORDER BY id",
                          (len(prefix), prefix)) if prefix else []
        if not rows:
            msg = (f"No environment with id {id_or_prefix!r} in the catalog {self.root}; "
                   f"`autoinstall catalog list --catalog {self.root}` shows the ids.")
            raise CatalogError(msg)
        records = [EnvRecord.model_validate_json(str(r[0])) for r in rows]
        if len(records) > 1:
            matches = ", ".join(f"{r.id} ({r.name or r.repo} @ {(r.commit or '')[:8]}, {r.model})"
                                for r in records)
            msg = (f"The id prefix {id_or_prefix!r} matches {len(records)} environments: {matches}; "
                   "give more digits.")
            raise CatalogError(msg)
        return records[0]

    def get_spec(self, id_or_prefix: str) -> EnvSpec | None:
        """The stored spec of a record (None for running placeholders and builds that raised)."""
        record = self.get(id_or_prefix)
        rows = self._read("SELECT spec FROM envs WHERE id = ?", (record.id,))
        return EnvSpec.model_validate_json(str(rows[0][0])) if rows and rows[0][0] else None

    def list(self, status: str | None = None, failure_class: str | None = None,
             repo_contains: str | None = None, limit: int | None = None) -> list[EnvRecord]:
        """Records, newest first, filtered by exact status / failure class and a case-insensitive
        repository substring."""
        where, args = ["1"], []
        for column, value in (("status", status), ("failure_class", failure_class)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if repo_contains:
            where.append("instr(lower(repo), lower(?)) > 0")
            args.append(repo_contains)
        sql = f"SELECT record FROM envs WHERE {' AND '.join(where)} ORDER BY updated_at DESC, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [EnvRecord.model_validate_json(str(r[0])) for r in self._read(sql, tuple(args))]

    def remove(self, id_or_prefix: str, *, remove_image: bool = True) -> RemoveResult:
        """Delete a record, its directory (when under <catalog>/envs) and, unless shared, its image.

        Raises:
            CatalogError: unknown id, or the environment is being built right now.
        """
        record = self.get(id_or_prefix)
        if record.status == "running" and owner_alive(record.owner):
            msg = f"{record.id} is being built by {record.owner}; stop that batch first, then remove it."
            raise CatalogError(msg)
        with self._write() as db:
            db.execute("DELETE FROM envs WHERE id = ?", (record.id,))
        result = RemoveResult(id=record.id)
        env_dir = Path(record.env_dir)
        if env_dir.is_dir() and env_dir.parent == self.envs_dir:
            shutil.rmtree(env_dir, ignore_errors=True)
            result.env_dir_removed = True
        if remove_image and record.image:
            self._remove_image(record.image, result)
        return result

    def _remove_image(self, image: str, result: RemoveResult) -> None:
        # Imported here: the docker SDK loads only when an image is to be removed.
        from envs.docker import remove_image

        if any(r.image == image for r in self.list()):
            result.warnings.append(f"image {image} is kept: another catalog record uses it")
            return
        try:
            result.image_removed = remove_image(image)
        except EnvError as e:
            result.warnings.append(f"the record is removed but its image is not: {e} "
                                   f"(remove it later with `docker rmi {image}`)")

    def gc(self, *, dry_run: bool = False, images: bool = True) -> GcReport:
        """Remove unreferenced directories under <catalog>/envs, then leaked containers and dangling snapshot
        images (skipped while a build is running). Records whose directory vanished are kept and reported."""
        report = GcReport(dry_run=dry_run)
        on_disk = sorted(p for p in self.envs_dir.iterdir() if p.is_dir())  # listed before reading records
        records = self.list()
        referenced = {r.env_dir for r in records}
        for path in on_disk:
            if str(path) not in referenced:
                report.removed_dirs.append(str(path))
                if not dry_run:
                    shutil.rmtree(path, ignore_errors=True)
        report.missing_dirs = [r.id for r in records
                               if r.status != "running" and not Path(r.env_dir).is_dir()]
        running = [r for r in records if r.status == "running"]
        report.stale_running = [r.id for r in running if not owner_alive(r.owner)]
        live = [r for r in running if owner_alive(r.owner)]
        if not images:
            return report
        if live:
            owners = ", ".join(sorted({r.owner for r in live}))
            report.warnings.append(f"{len(live)} builds are running ({owners}); "
                                   "containers and images were left alone: run gc again when they finish")
            return report
        self._gc_images(report)
        return report

    def _gc_images(self, report: GcReport) -> None:
        # Imported here: the docker SDK loads only when gc cleans images.
        from envs.docker import cleanup

        try:
            cleaned = cleanup(dry_run=report.dry_run)
        except EnvError as e:
            report.warnings.append(f"images and containers were not cleaned: {e}")
            return
        report.removed_images, report.removed_containers = cleaned.images, cleaned.containers
        report.warnings += cleaned.errors
