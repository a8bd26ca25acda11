"""Images on the engine: build, import, list, save, remove, and cleanup of what autoinstall left behind."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import docker
import docker.errors
from pydantic import BaseModel, Field

from envs.base import LABEL, Limits
from envs.docker.cachelayer import remove_cache_layer
from envs.docker.engine import (
    _ENGINE_ERRORS,
    KIND_LABEL,
    SNAPSHOT_REPO,
    TASK_KIND,
    connect,
    engine_gone,
    owned_by_another_live_process,
)
from envs.docker.network import sandbox_network
from envs.errors import EnvError, ImageBuildError, ImageNotFoundError


class CleanupReport(BaseModel):
    """What `cleanup` removed (or would remove, with dry_run)."""

    dry_run: bool
    containers: list[str] = Field(default_factory=list)
    images: list[str] = Field(default_factory=list)
    volumes: list[str] = Field(default_factory=list)
    """Private cache layers left by sandboxes that were never stopped."""
    left_alone: list[str] = Field(default_factory=list)
    """Containers, snapshots and cache layers of another autoinstall process that still runs (a concurrent
    build): removing them would break it. They go in a cleanup after that process ends."""
    errors: list[str] = Field(default_factory=list)


def cleanup(
    dry_run: bool = False, *, labels: Mapping[str, str] | None = None, base_url: str | None = None
) -> CleanupReport:
    """Remove every container labelled autoinstall=1, every snapshot image no user name points to and every
    untagged autoinstall image nothing uses, except what another running autoinstall process owns (listed in
    `left_alone`).

    Args:
        dry_run: only list what would be removed.
        labels: narrow to containers/images that also carry these labels; then the task start images built
            from those images (which inherit their labels) go too.
        base_url: engine address (default DOCKER_HOST or the local socket).

    Returns:
        The ids removed (or to remove), and errors for those that could not be removed (e.g. in use).

    Raises:
        EngineUnavailableError: no engine answers.
    """
    extra = [f"{k}={v}" for k, v in (labels or {}).items()]
    report = CleanupReport(dry_run=dry_run)
    client = connect(base_url)
    try:
        api = client.api
        for c in api.containers(all=True, filters={"label": [f"{LABEL}=1", *extra]}):
            if owned_by_another_live_process(c.get("Labels")):
                report.left_alone.append(c["Id"])
                continue
            report.containers.append(c["Id"])
            if not dry_run:
                _try(report, lambda cid=c["Id"]: api.remove_container(cid, force=True, v=True))
        snapshots = api.images(all=True, filters={"label": [f"{KIND_LABEL}=snapshot", *extra]})
        starts = api.images(filters={"label": [f"{KIND_LABEL}={TASK_KIND}", *extra]}) if extra else []
        rebuilds = [i for i in api.images(filters={"label": [f"{KIND_LABEL}=rebuild", *extra]})
                    if _tags(i) and all(REBUILD_TAG.search(t) for t in _tags(i))]  # a replay an interrupt left
        for img in sorted(starts + snapshots + rebuilds, key=lambda i: i.get("Created", 0), reverse=True):
            snapshot = (img.get("Labels") or {}).get(KIND_LABEL) == "snapshot"  # children first, by time
            if snapshot and any(not t.startswith(f"{SNAPSHOT_REPO}:") for t in _tags(img)):
                continue
            if owned_by_another_live_process(img.get("Labels")):
                report.left_alone.append(img["Id"])
                continue
            report.images.append(img["Id"])
        if not dry_run:
            _remove_images(api, report, report.images, force=True)
        while True:  # a former environment, replaced by a rebuild of its tag (dangling once its snapshots went)
            dangling = api.images(filters={"dangling": True, "label": [f"{LABEL}=1", *extra]})
            fresh = [img["Id"] for img in dangling if img["Id"] not in report.images + report.left_alone]
            report.images.extend(fresh)
            if dry_run or not fresh:
                break
            _remove_images(api, report, fresh, force=False)
        layers = api.volumes(filters={"label": [f"{KIND_LABEL}=cache-layer", *extra]}).get("Volumes") or []
        for volume in layers:
            if owned_by_another_live_process(volume.get("Labels")):
                report.left_alone.append(volume["Name"])
                continue
            report.volumes.append(volume["Name"])
            if not dry_run:
                _try(report, lambda v=volume: remove_cache_layer(api, v["Name"], _layer_dir(v), in_use_wait_s=0))
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, "cleanup", base_url) from e
    finally:
        client.close()
    return report


REBUILD_TAG = re.compile(r"-rebuild(-\d+)?$")
"""The tag of a replay's build (autoinstall/record/replay.py) before the environment's tag takes it."""


def _tags(image: dict[str, object]) -> list[str]:
    return [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]  # type: ignore[attr-defined]


def _layer_dir(volume: dict[str, object]) -> Path:
    """The host folder of a cache layer, read back from its overlay options (upperdir=.../upper)."""
    options = str((volume.get("Options") or {}).get("o", ""))  # type: ignore[union-attr]
    upper = next((o.split("=", 1)[1] for o in options.split(",") if o.startswith("upperdir=")), "")
    return Path(upper).parent if upper else Path("/nonexistent")


_HAS_CHILDREN = "dependent child images"


def _remove_images(api: Any, report: CleanupReport, ids: list[str], *, force: bool) -> None:
    """Remove `ids` (listed in `report.images`), children before parents: the engine refuses a parent while a
    child stands (even forced), and creation times tie within a second, so what was refused is tried again
    after the rest went. An image whose child stays (an image nobody asked to remove was built on it) is in use:
    left alone."""
    pending = list(ids)
    while pending:
        refused = []
        for iid in pending:
            try:
                api.remove_image(iid, force=force)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:
                reason = str(e.explanation or e)
                if _HAS_CHILDREN not in reason:
                    report.errors.append(reason)
                else:
                    refused.append(iid)
        if len(refused) == len(pending):
            report.images = [i for i in report.images if i not in refused]
            report.left_alone.extend(refused)
            return
        pending = refused


def _try(report: CleanupReport, action: Callable[[], object]) -> None:
    try:
        action()
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as e:
        report.errors.append(str(e.explanation or e))


def remove_image(image: str, *, base_url: str | None = None) -> bool:
    """Remove an image by id or tag; False when it did not exist."""
    client = connect(base_url)
    try:
        client.api.remove_image(image, force=True)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as e:
        msg = f"Could not remove image {image}: {e.explanation or e}"
        raise EnvError(msg) from e
    finally:
        client.close()
    return True


# Engine helpers for envs/baseimage.py (only this module imports docker).
def image_labels(ref: str, *, base_url: str | None = None) -> dict[str, str] | None:
    """The labels of a local image, or None when there is no such image."""
    client = connect(base_url)
    try:
        return dict(client.api.inspect_image(ref)["Config"].get("Labels") or {})
    except docker.errors.ImageNotFound:
        return None
    finally:
        client.close()


def list_images(labels: Mapping[str, str], *, base_url: str | None = None) -> list[dict[str, Any]]:
    """Local images carrying all `labels`: id, tags, created, size, labels."""
    client = connect(base_url)
    try:
        rows = client.api.images(filters={"label": [f"{k}={v}" for k, v in labels.items()]})
    finally:
        client.close()
    return [
        {
            "id": r["Id"],
            "tags": r.get("RepoTags") or [],
            "created": r.get("Created"),
            "size": r.get("Size"),
            "labels": r.get("Labels") or {},
        }
        for r in rows
    ]


def try_pull(ref: str, *, timeout: int = 60, base_url: str | None = None) -> str | None:
    """Pull `ref` if a registry answers; None (not an error) when it does not."""
    client = connect(base_url, timeout=timeout)
    repo, _, tag = ref.rpartition(":")
    try:
        client.api.pull(repo, tag=tag)
        return str(client.api.inspect_image(ref)["Id"])
    except _ENGINE_ERRORS:
        return None
    finally:
        client.close()


def import_rootfs(tarball: Path, tag: str, labels: Mapping[str, str], *, base_url: str | None = None) -> str:
    """`docker import` a root filesystem tarball with labels; returns the tag."""
    client = connect(base_url, timeout=1800)
    changes = [f'LABEL "{k}"="{v}"' for k, v in labels.items()]
    changes += ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["bash"]']
    repo, _, name = tag.rpartition(":")
    try:
        client.api.import_image_from_file(str(tarball), repository=repo, tag=name, changes=changes)
        client.api.inspect_image(tag)
    except _ENGINE_ERRORS as e:
        msg = f"docker import of {tarball} as {tag} failed: {e}"
        raise ImageBuildError(msg) from e
    finally:
        client.close()
    return tag


def build_image(
    context: Path,
    tag: str,
    *,
    labels: Mapping[str, str],
    buildargs: Mapping[str, str],
    log: Callable[[str], None] | None = None,
    base_url: str | None = None,
    limits: Limits | None = None,
) -> str:
    """Build `context`/Dockerfile as `tag` (legacy builder), streaming lines to `log`; returns the tag.
    With `limits`, each RUN step's container gets the sandboxes' memory cap, swap included (the engine's build
    API has no pids limit).

    The build's RUN steps are a project's install steps (a replay Dockerfile runs its setup code): they run on
    the sandbox network, off this machine's services, as the sandboxes that first ran them did (on Docker's
    default bridge they could reach every service of the host at 172.17.0.1).

    The image `tag` named before is removed when the build leaves it without a name and nothing uses it
    (a rebuilt environment would otherwise leave its former image behind, untagged, on every rebuild).
    """
    client = connect(base_url, timeout=3600)
    tail: list[str] = []
    try:
        former = _image_id(client.api, tag)
        network = sandbox_network(client.api, base_url)
        for item in client.api.build(
            path=str(context),
            network_mode=network,
            tag=tag,
            labels=dict(labels),
            buildargs=dict(buildargs),
            rm=True,
            forcerm=True,
            decode=True,
            pull=False,
            container_limits=_build_limits(limits),
        ):
            if "error" in item:
                detail = "".join(tail[-30:])
                msg = f"Building {tag} failed: {item['error'].strip()}\nLast build output:\n{detail}"
                raise ImageBuildError(msg)
            line = item.get("stream") or ""
            if line:
                tail.append(line)
                if log and line.strip():
                    log(line.rstrip())
        if former and former != _image_id(client.api, tag):
            _remove_if_unnamed(client.api, former)
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, f"the build of {tag}", base_url) from e
    finally:
        client.close()
    return tag


def _build_limits(limits: Limits | None) -> dict[str, int | str] | None:
    if limits is None:
        return None
    memory = limits.memory_mb * 2**20
    return {"memory": memory, "memswap": memory}


def _image_id(api: docker.APIClient, ref: str) -> str | None:
    try:
        return str(api.inspect_image(ref)["Id"])
    except docker.errors.NotFound:
        return None


def _remove_if_unnamed(api: docker.APIClient, image_id: str) -> None:
    """Remove an image that has no tag left, unless a container or another image still uses it."""
    try:
        if not [t for t in api.inspect_image(image_id).get("RepoTags") or [] if t != "<none>:<none>"]:
            api.remove_image(image_id)
    except docker.errors.APIError:
        pass  # in use (a container, a child image) or already gone: it stays


def save_images(images: list[str], dest: Path, *, base_url: str | None = None) -> Path:
    """`docker save` `images` into one tarball at `dest` (`docker load -i` restores them); returns dest.

    The tarball is streamed to `dest`.partial and renamed when complete, so `dest` is never half-written.

    Raises:
        ImageNotFoundError: an image does not exist locally.
        EnvError: the tarball could not be written (e.g. the disk filled up); nothing is left behind.
    """
    client = connect(base_url, timeout=3600)
    partial = dest.with_name(dest.name + ".partial")
    try:
        for image in images:
            try:
                client.api.inspect_image(image)
            except docker.errors.ImageNotFound as e:
                msg = f"Cannot save {image}: no such local image; build it again or remove it from the export."
                raise ImageNotFoundError(msg) from e
        response = client.api._get(client.api._url("/images/get"), params={"names": images}, stream=True)
        client.api._raise_for_status(response)
        with open(partial, "wb") as f:
            for chunk in response.iter_content(chunk_size=1 << 20):
                f.write(chunk)
        partial.replace(dest)
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, f"`docker save` of {', '.join(images)}", base_url) from e
    except OSError as e:
        if e.errno == errno.ENOSPC:
            msg = (f"The disk holding {dest.parent} filled up while saving {', '.join(images)}; the partial "
                   f"tarball was removed. Free space there (or export to a larger disk) and run the export again.")
        else:
            msg = f"Could not write {dest} while saving {', '.join(images)}: {e}"
        raise EnvError(msg) from e
    finally:
        partial.unlink(missing_ok=True)
        client.close()
    return dest


# Registry push and pull, for images built on one machine and used on another (batch --executor ray).
