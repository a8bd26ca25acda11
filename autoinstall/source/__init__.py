"""Stage 1, source: a repository (URL, directory, git directory, bare ok) at a commit -> a clean checkout.

Files: `checkout.py` (clone or copy, resolve the commit), `gitdata.py` (a local git directory read as data into
a fresh repository), `tree.py` (copies by lstat; links leaving the checkout dropped), `digest.py` (content
digest for dirty trees).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.source.checkout import SourceError, SourceInfo, prepare_source, repo_name
from autoinstall.source.digest import tree_digest
from envs.spec import SourceRecord


def check_out(repo: str, commit: str | None, dest: Path) -> SourceRecord:
    """Check `repo` out at `commit` into `dest` and say what it is. Raises SourceError with what to do."""
    source = prepare_source(repo, commit, dest)
    record = SourceRecord(repo=repo, name=source.name, commit=source.commit, commit_date=source.commit_date,
                          is_dirty=source.is_dirty, notes=source.notes)
    if not source.commit or source.is_dirty:
        record.content_digest = tree_digest(dest)
    return record


__all__ = ["SourceError", "SourceInfo", "check_out", "prepare_source", "repo_name", "tree_digest"]
