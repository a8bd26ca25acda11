"""The embedded prior model: deterministic rules, no key and no network beyond package registries.

Files: `propose.py` (phase 1: facts -> plan), `repair.py` (phase 2: diagnosis -> fix), `deps.py` (what to install), `testcmd.py` (test command
and checks), `system.py` (interpreter and Debian packages).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from autoinstall.models.embedded.propose import propose_plan
from autoinstall.models.embedded.repair import repair
from autoinstall.plan import Plan
from autoinstall.repair import Repair, RepairContext
from autoinstall.survey import RepoFacts


class EmbeddedModelConfig(BaseModel):
    """Settings of the embedded model."""

    model_config = ConfigDict(extra="forbid")
    pythons: tuple[str, ...] = ("3.11", "3.13")
    """Interpreters the sandboxes can provide, in order of preference."""


class EmbeddedModel:
    """Rule-based prior model."""

    name = "embedded"

    def __init__(self, **kwargs: object) -> None:
        self.config = EmbeddedModelConfig(**kwargs)  # type: ignore[arg-type]

    def propose(self, facts: RepoFacts, repo: Path, tools: object = None) -> Plan:
        """A plan of at most 10 steps from the survey's facts (see `propose.py`)."""
        return propose_plan(facts, Path(repo), self.config.pythons)

    def repair(self, context: RepairContext, tools: object = None) -> Repair | None:
        """One rule-based fix for a diagnosed failure, or None to give up (see `repair.py`)."""
        return repair(context)


__all__ = ["EmbeddedModel", "EmbeddedModelConfig"]
