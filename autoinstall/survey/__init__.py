"""Stage 2, survey: what a checkout's files say about installing and testing it (nothing is run).

The survey itself belongs to the ecosystem that detects the repository (`autoinstall/ecosystems/`); this
stage picks it and hands over its facts.
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import Facts
from autoinstall.ecosystems.detect import detect


def survey(repo: Path) -> Facts:
    """The leading ecosystem's facts about `repo`, each with its evidence; malformed files become notes.

    Raises:
        NotADirectoryError: `repo` is not a directory.
    """
    if not Path(repo).is_dir():
        msg = f"{repo} is not a directory"
        raise NotADirectoryError(msg)
    return detect(Path(repo))[0].survey(Path(repo))


__all__ = ["Facts", "survey"]
