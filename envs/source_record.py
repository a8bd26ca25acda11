"""The record of where an environment's code came from (EnvSpec.source)."""
from __future__ import annotations

from pydantic import BaseModel, Field


class SourceRecord(BaseModel):
    """Where the code came from."""

    repo: str
    name: str
    commit: str | None = None
    commit_date: str | None = None
    is_dirty: bool = False
    """A local work tree with uncommitted changes: the checkout is not exactly `commit`."""
    content_digest: str | None = None
    """sha256 of the checkout's files (set when there is no clean commit to name it by)."""
    notes: list[str] = Field(default_factory=list)
    """What the checkout left out and why: links to outside it, FIFOs and devices, parts of `.git` not followed."""

    @property
    def revision(self) -> str:
        """What names this version of the code: the commit, or a content digest for plain/dirty dirs."""
        if self.commit and not self.is_dirty:
            return self.commit[:12]
        digest = (self.content_digest or "unknown")[:12]
        return f"{self.commit[:7]}-dirty-{digest[:8]}" if self.commit else f"dir-{digest}"
