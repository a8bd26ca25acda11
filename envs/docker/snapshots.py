"""Snapshots of a DockerSandbox: a commit of its container, and a new container from one."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import docker

from envs.base import LABEL
from envs.docker.container import DockerSandboxConfig
from envs.docker.engine import KIND_LABEL, SNAPSHOT_REPO, owner_labels

GO_ON_BYTES = 64 * 2**20
"""What a commit must have added for `snapshot_and_continue` to go on in a new container: each later commit would
write it again (about a second at a loaded machine's 60 MB/s), more than a new container costs (about half one)."""
MAX_LAYERS = 100
"""The layers an image may have for `snapshot_and_continue` to stack one more (overlay2 refuses over 125)."""


class SnapshotMixin:
    """snapshot/restore for DockerSandbox, which provides the container, its client and `_create`."""

    config: DockerSandboxConfig
    limit_error: str | None
    _cid: str | None
    _client: docker.DockerClient | None
    _api: docker.APIClient
    _image_env: list[str]
    _image_size: int
    _engine: Callable[[str], AbstractContextManager[None]]
    _check: Callable[[], None]
    _halt_watchdog: Callable[[], None]
    _create: Callable[[str], None]

    def snapshot(self, label: str) -> str:
        """Commit the container to an image labelled autoinstall.kind=snapshot; returns its tag.

        The tag (not the id) is returned so that `remove_image(tag)` can untag a snapshot that later
        images were built on without failing on their dependency.
        """
        tag = (
            (re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip(".-")[:80] or "snap") + "-" + uuid.uuid4().hex[:8]
        )
        labels = {LABEL: "1", KIND_LABEL: "snapshot", f"{LABEL}.label": label[:200], **owner_labels(),
                  **self.config.labels}
        with self._engine("snapshot"):
            self._api.commit(self._cid, SNAPSHOT_REPO, tag, conf={"Labels": labels, "Env": self._image_env})
        return f"{SNAPSHOT_REPO}:{tag}"

    def snapshot_and_continue(self, label: str) -> str:
        """`snapshot`, then, when the commit added GO_ON_BYTES or more, a new container from it (`restore`): a
        container's own layer holds everything written since it was created, so every later commit wrote an
        early step's system packages again (a browser's 500 MB: 7-9 s a commit, each)."""
        tag = self.snapshot(label)
        with self._engine("snapshot"):
            image: dict[str, Any] = self._api.inspect_image(tag)
        added = int(image.get("Size") or 0) - self._image_size
        if added >= GO_ON_BYTES and len((image.get("RootFS") or {}).get("Layers") or []) < MAX_LAYERS:
            self.restore(tag)
        return tag

    def restore(self, snapshot_id: str) -> None:
        """Replace the container by a new one from the snapshot; also clears a disk-limit stop."""
        if self._client is None:
            self._check()
        assert self._client is not None
        self.limit_error = None
        self._halt_watchdog()
        old, self._cid = self._cid, None
        with self._engine("restore"):
            if old:
                self._client.api.remove_container(old, force=True, v=True)
            self._create(snapshot_id)
