"""What every export writer shares: options, entries, the manifest, record selection."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.catalog import Catalog, CatalogError, EnvRecord, SuiteCounts
from envs.spec import EnvSpec, SourceRecord
from envs.task import TaskFilter
from envs.testrun import abilities, test_command

EXPORT_VERSION = 1
MANIFEST_NAME = "export.json"
WORKDIR = "/workspace"
"""Where the repository lives in every environment image (autoinstall/templates/env.Dockerfile)."""
Format = Literal["harbor", "swebench", "verl", "jsonl"]
TaskKind = Literal["template", "env-setup"]
ImagesMode = Literal["none", "save", "push"]
ExportCounts = dict[str, int | float | str]
"""A `SuiteCounts` as metadata: name -> count, share (threshold, cap) or status."""


class ExportError(CatalogError):
    """An export cannot be made as asked; the message says what to do instead."""


class ExportOptions(BaseModel):
    """What to export, in which format, and how to make the images reachable."""

    model_config = ConfigDict(extra="forbid")
    out: Path
    """Directory to write to (created); files an earlier export wrote for the same ids are replaced."""
    format: Format
    ids: list[str] = Field(default_factory=list)
    """Record ids or unique prefixes; empty = every record with `status`."""
    status: Literal["verified", "partial", "failed"] = "verified"
    include_partial: bool = False
    """Export partial environments too (their suites run and pass, but with more than the cap deselected)."""
    include_failed: bool = False
    """Export failed environments too (refused otherwise)."""
    task: TaskKind = "template"
    """Harbor only, without tasks: `template` starts from the verified image and has no goal (a template to put a
    goal into, not a training task: doing nothing scores 1); `env-setup` starts from the base image with the
    bare checkout, to be installed."""
    network: Literal["public", "no-network"] = "public"
    """Harbor only: the agent's network. Harbor's docker environment enforces no-network with an egress
    sidecar whose images come from Docker Hub, so public is the default that runs everywhere."""
    images: ImagesMode = "none"
    registry: str | None = None
    """HOST:PORT of the registry for images=push."""
    tasks: bool = False
    """Export the environments' tasks (bugs with FAIL_TO_PASS tests, from `autoinstall tasks`), one Harbor task,
    SWE-bench row or verl row per task, instead of one per environment."""
    verifier_network: Literal["public", "no-network"] = "no-network"
    """Harbor tasks: the verifier's network (Harbor's docker environment enforces no-network with its egress
    sidecar, an image from Docker Hub; pass public where that image cannot be had)."""
    start_image: Literal["build", "prebuilt"] = "build"
    """Harbor tasks: `build`: Harbor builds each task's start image from its environment/ folder (FROM the
    environment image), for the agent and again for the verifier, in every trial; `prebuilt`: the export builds
    it (under OUT/harbor-images/, as the SWE-bench export builds its rows' images) and task.toml names it as
    `docker_image`, which Harbor starts without a build (environment/ stays: `harbor run --force-build` builds
    from it). With --images save or push, that image is saved or pushed beside the environment's."""
    agent_user: str | None = "agent"
    """Harbor tasks: the non-root user the agent runs as (created in the task image, owning the workdir);
    None = the image's default user (root)."""
    task_filter: TaskFilter = Field(default_factory=TaskFilter)
    """With tasks: which ones (kind, difficulty, size) and which statement style becomes the instruction."""


class ImageArtifact(BaseModel):
    """One image the export needs, and where the trainer finds it."""

    image: str
    """The local tag (as recorded in the catalog)."""
    reference: str
    """What the exported files name: the local tag, or the pushed reference."""
    tarball: str | None = None
    """Path of its `docker save` tarball, relative to OUT (images=save)."""
    error: str = ""
    """Why saving or pushing it failed (the rest of the export is kept)."""
    context: str | None = None
    """Tasks: the build context (relative to OUT) the export built this image from (bug state on the env)."""


class ExportManifest(BaseModel):
    """OUT/export.json: what an export holds and in which format version."""

    format: str
    """e.g. "autoinstall-export/harbor-1"."""
    created_at: str
    ids: list[str]
    """Catalog record ids, in export order."""
    files: list[str] = Field(default_factory=list)
    """What was written, relative to OUT."""
    task: TaskKind | None = None
    tasks: list[str] = Field(default_factory=list)
    """Task instance ids, in export order (export --tasks)."""
    verification: dict[str, ExportCounts] = Field(default_factory=dict)
    """Per catalog id: what verification counted (`verification_counts`)."""
    images_mode: ImagesMode = "none"
    images: list[ImageArtifact] = Field(default_factory=list)
    registry: str | None = None


@dataclass(frozen=True)
class Entry:
    """One environment to export: its catalog record and its spec."""

    record: EnvRecord
    spec: EnvSpec

    @property
    def slug(self) -> str:
        """A name safe for directories, image repositories and Harbor task names: NAME-ID."""
        name = re.sub(r"[^a-z0-9._-]+", "-", (self.record.name or self.spec.source.name).lower()).strip("-._")
        return f"{name or 'repo'}-{self.record.id}"

    @property
    def test_command(self) -> str:
        return self.spec.test_command or test_command(self.spec.plan) or ""

    @property
    def pass_to_pass(self) -> list[str]:
        """The tests that passed in every verification run, minus flaky ones (a fresh episode scores 1.0 on them):
        a test missing from one run did not pass there."""
        verification = self.spec.verification
        last = verification.last_run if verification else None
        if last is None or verification is None or abilities(self.spec.plan.test_runner).junit_report is None:
            return []  # the exports' scorers read a JUnit report only: other runners' ids cannot be scored
        return verification.passed_every_run()


def repo_name(source: SourceRecord) -> str:
    """`owner/name` of a repository URL (https, ssh or git@host:owner/name), else the checkout's name: never
    a path of the machine that built the environment."""
    repo = source.repo.strip().rstrip("/").removesuffix(".git")
    match = re.match(r"^(?:[a-z][a-z0-9+.-]*://[^/]+/|[^/@\s]+@[^:/\s]+:)(?P<path>.+)$", repo)
    if match:
        parts = [p for p in match.group("path").split("/") if p]
        return "/".join(parts[-2:]) if len(parts) >= 2 else source.repo.strip()
    mirror = re.search(r"([A-Za-z0-9_.-]+)\+([A-Za-z0-9_.-]+)(?:/repo)?$", repo)  # OWNER+NAME mirrors
    if mirror:
        return f"{mirror.group(1)}/{mirror.group(2)}"
    return source.name


def verification_counts(spec: EnvSpec) -> ExportCounts:
    """What verification counted, for every format's metadata (envs/catalog_record.py `SuiteCounts`): the suite
    by its default configuration (collected), selected, deselected, passed (in every run), failed, errors,
    skipped, flaky, stubs, the status, the threshold and the deselection cap; counts not taken are left out."""
    return SuiteCounts.from_spec(spec).metadata()


def format_version(fmt: str) -> str:
    return f"autoinstall-export/{fmt}-{EXPORT_VERSION}"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def select_entries(catalog: Catalog, options: ExportOptions) -> list[Entry]:
    """The records to export, with their specs.

    Raises:
        ExportError: nothing to export; failed (or still running) records without include_failed, naming
            them; records without a stored spec or image.
    """
    if options.ids:
        records = list({r.id: r for r in (catalog.get(i) for i in options.ids)}.values())
    else:
        extra = [s for s, asked in (("partial", options.include_partial), ("failed", options.include_failed))
                 if asked and s != options.status]
        statuses = [options.status, *extra]
        records = [r for s in statuses for r in catalog.list(status=s)]
    if not records:
        msg = (f"Nothing to export: the catalog {catalog.root} has no {options.status} environments"
               f"{' with those ids' if options.ids else ''}; `autoinstall catalog list` shows what it has.")
        raise ExportError(msg)
    running = [r for r in records if r.status == "running"]
    if running:
        msg = f"Still being built, so not exportable: {_names(running)}; wait for the batch to finish."
        raise ExportError(msg)
    partial = [r for r in records if r.status == "partial"]
    if partial and not (options.include_partial or options.include_failed or options.status == "partial"):
        msg = (f"Refusing to export {len(partial)} partial environment(s): {_names(partial)}. Their suites run, "
               "but with more of the tests deselected than the cap; pass --include-partial to export them too.")
        raise ExportError(msg)
    failed = [r for r in records if r.status == "failed"]
    if failed and not options.include_failed:
        msg = (f"Refusing to export {len(failed)} failed environment(s): {_names(failed)}. Their tests do "
               "not pass, so rewards from them mislead training; pass --include-failed to export them too.")
        raise ExportError(msg)
    entries = []
    for record in records:
        spec = catalog.get_spec(record.id)
        if spec is None or not spec.image:
            msg = (f"{record.id} ({record.name or record.repo}) has no {'spec' if spec is None else 'image'} "
                   "to export (its build did not finish); rebuild it or leave it out with --id.")
            raise ExportError(msg)
        entries.append(Entry(record, spec))
    return entries


def _names(records: list[EnvRecord]) -> str:
    return ", ".join(f"{r.id} ({r.name or r.repo}: {r.failure_class or r.status})" for r in records)


def status_of(artifact: ImageArtifact) -> str:
    """One line saying where the trainer finds an image."""
    where = f"saved to {artifact.tarball}" if artifact.tarball else (
        "pushed" if artifact.reference != artifact.image else "local only")
    return f"{artifact.reference}: {artifact.error or where}"


def write_manifest(out: Path, manifest: ExportManifest) -> None:
    """Write OUT/export.json atomically (a temporary file renamed over it)."""
    tmp = out / (MANIFEST_NAME + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n")
    tmp.replace(out / MANIFEST_NAME)


def read_manifest(out: Path) -> ExportManifest:
    return ExportManifest.model_validate_json((out / MANIFEST_NAME).read_text())
