"""Cleanup's removal order, against an engine that refuses a parent while a child stands (as Docker does, even
forced): the listing's order (creation time, which ties within a second) must not decide what is left."""
from __future__ import annotations

import docker.errors

from envs.docker.images import CleanupReport, _remove_images


class _Engine:
    """Images and their parents; remove_image refuses an image with a child, as the engine does."""

    def __init__(self, parents: dict[str, str | None]) -> None:
        self.parents = dict(parents)

    def remove_image(self, iid: str, force: bool = False) -> None:
        if iid not in self.parents:
            raise docker.errors.NotFound(iid)
        if any(parent == iid for parent in self.parents.values()):
            msg = f"conflict: unable to delete {iid[:12]} (cannot be forced) - image has dependent child images"
            raise docker.errors.APIError(msg, explanation=msg)
        del self.parents[iid]


def test_parents_listed_before_their_children_still_go() -> None:
    engine = _Engine({"base": None, "env": "base", "snap1": "env", "snap2": "snap1", "start": "snap2"})
    order = ["env", "snap1", "snap2", "start"]  # oldest first: the worst order for a removal
    report = CleanupReport(dry_run=False, images=list(order))
    _remove_images(engine, report, order, force=True)
    assert report.errors == [] and report.left_alone == []
    assert report.images == order and set(engine.parents) == {"base"}


def test_an_image_whose_child_stays_is_left_alone_not_an_error() -> None:
    engine = _Engine({"env": None, "snap": "env", "users_image": "snap", "other": None})
    report = CleanupReport(dry_run=False, images=["env", "snap", "other"])
    _remove_images(engine, report, ["env", "snap", "other"], force=True)
    assert report.errors == []
    assert report.left_alone == ["env", "snap"] and report.images == ["other"]
    assert set(engine.parents) == {"env", "snap", "users_image"}
