"""Where a debug session starts (the catalog record and its image) and how its result is recorded again."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from autoinstall.debug.shell import DebugError
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.options import BuildOptions, docker_factory
from autoinstall.record import finish
from autoinstall.source import SourceError, prepare_source
from envs.catalog import Catalog, EnvRecord
from envs.docker import image_labels
from envs.errors import EnvError
from envs.spec import DEFAULT_THRESHOLD, EnvSpec, StepLog


def load(catalog: Catalog, env_id: str) -> tuple[EnvRecord, EnvSpec | None]:
    """The record and its spec (None for builds that raised before writing one).

    Raises:
        CatalogError: unknown or ambiguous id (the message shows how to list ids).
    """
    record = catalog.get(env_id)
    return record, catalog.get_spec(record.id)


def failing_entry(spec: EnvSpec) -> StepLog | None:
    """The last command that failed during the build."""
    return next((e for e in reversed(spec.log) if e.exit_code != 0), None)


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def failing_output(env_dir: Path, spec: EnvSpec, lines: int = 40) -> str:
    """The tail of the failing command's log file, else the failure's evidence."""
    entry = failing_entry(spec)
    if entry is not None and entry.log_file and (env_dir / entry.log_file).is_file():
        return tail((env_dir / entry.log_file).read_text(errors="replace"), lines)
    return tail(spec.failure.evidence, lines) if spec.failure else ""


def start_image(record: EnvRecord, spec: EnvSpec | None) -> str:
    """The image a debug container starts from.

    Raises:
        DebugError: the build stopped before its first snapshot, so there is none.
    """
    image = spec.image if spec is not None else None
    if not image:
        why = record.failure_message or (spec.failure.message if spec and spec.failure else "")
        msg = (f"{record.id} has no image to open a shell in: the build stopped before its first snapshot"
               f"{f' ({why})' if why else ''}. Read the logs in {record.env_dir}/logs, fix the cause, and "
               f"build it again with `autoinstall run {record.repo}`.")
        raise DebugError(msg)
    return image


def check_present(record: EnvRecord, image: str) -> None:
    """Raise DebugError unless `image` is on the Docker engine (EngineUnavailableError: no engine)."""
    if image_labels(image) is None:
        msg = (f"The image {image} of {record.id} is no longer on this Docker engine (removed by "
               f"`docker rmi` or `catalog rm`?); build it again with `autoinstall run {record.repo}`.")
        raise DebugError(msg)


# -- keeping the session --------------------------------------------------------------------------------
Report = Callable[[str], None]


def reverify(spec: EnvSpec, env_dir: Path, snapshot: str, stub_wheels: dict[str, bytes],
             report: Report) -> EnvSpec:
    """Record the debug container's snapshot as the environment (`autoinstall.record.finish`): tag it,
    verify it offline in a fresh container, re-render the Dockerfile and build context, write spec.json.
    Never raises for a failed verification: the spec says failed with the new reason, and keeps the steps."""
    threshold = spec.verification.threshold if spec.verification else DEFAULT_THRESHOLD
    factory = docker_factory()
    report("saving the container and verifying it in a fresh container, network off")
    with tempfile.TemporaryDirectory(prefix="autoinstall-debug-src-") as scratch:
        repo = Path(scratch) / "repo"
        problem = _checkout(spec, env_dir, repo)
        try:
            spec = finish(spec, snapshot, repo, env_dir, BuildOptions(threshold=threshold), factory,
                          get_ecosystem(spec.plan.ecosystem), stub_wheels)
        except EnvError as e:
            msg = (f"Could not save the container as an image ({e}). Nothing is lost: the container is the "
                   f"image {snapshot} (`docker run -it {snapshot} bash`) and your commands are in "
                   f"{env_dir}/logs; fix the engine and run `autoinstall debug --record` again.")
            raise DebugError(msg) from e
    factory.discard([snapshot])
    if problem:
        report(f"warning: the Dockerfile is updated but its build context may not be ({problem}); "
               "the image itself is complete")
    return spec


def _checkout(spec: EnvSpec, env_dir: Path, repo: Path) -> str:
    """The source for the new build context: the old context's copy, else a fresh checkout; a warning or ""."""
    existing = env_dir / "context" / "repo"
    try:
        if existing.is_dir():
            shutil.copytree(existing, repo, symlinks=True)
        else:
            prepare_source(spec.source.repo, spec.source.commit, repo)
    except (SourceError, OSError) as e:
        repo.mkdir(parents=True, exist_ok=True)
        return str(e)
    return ""


def record_result(catalog: Catalog, record: EnvRecord, spec: EnvSpec) -> EnvRecord:
    """Update the catalog record from the new spec."""
    return catalog.upsert_spec(spec, Path(record.env_dir), requested_commit=record.requested_commit)
