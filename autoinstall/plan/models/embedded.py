"""The embedded prior model: deterministic rules, no key and no network beyond package registries.

The rules belong to the ecosystems (`autoinstall/ecosystems/<language>/`): this model asks the one that
surveyed the repository.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autoinstall.ecosystems.base import Facts, RepairContext
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.ecosystems.overrun import more_time
from envs.hostfacts import buildable_pythons
from envs.spec import Plan, Repair


class EmbeddedModelConfig(BaseModel):
    """Settings of the embedded model."""

    model_config = ConfigDict(extra="forbid")
    pythons: tuple[str, ...] = Field(default_factory=lambda: tuple(buildable_pythons()))
    """Interpreters the sandboxes can provide, in order of preference (default: all base images can be built
    for here, envs/hostfacts.py `buildable_pythons`)."""
    python: str | None = None
    """The interpreter the user forces (`--python X.Y`, BuildOptions.python): offered to the ecosystem as the only
    candidate, so it is used even where the repository asks for another (the plan notes it)."""


class EmbeddedModel:
    """Rule-based prior model."""

    name = "embedded"

    def __init__(self, **kwargs: object) -> None:
        self.config = EmbeddedModelConfig(**kwargs)  # type: ignore[arg-type]

    def propose(self, facts: Facts, repo: Path, tools: object = None) -> Plan:
        """A plan of at most 10 steps from the survey's facts, by the rules of the facts' ecosystem."""
        toolchains = (self.config.python,) if self.config.python else self.config.pythons
        plan = get_ecosystem(facts.ecosystem).propose(facts, Path(repo), toolchains)
        plan.ecosystem = facts.ecosystem
        return plan

    def forcing(self, python: str) -> EmbeddedModel:
        """This model with `python` forced (see `EmbeddedModelConfig.python`)."""
        return EmbeddedModel(**self.config.model_copy(update={"python": python}).model_dump())

    def repair(self, context: RepairContext, tools: object = None) -> Repair | None:
        """One rule-based fix for a diagnosed failure, or None to give up: an install step that ran out of time
        while still working runs once more with more time (ecosystems/overrun.py, any language), else the
        ecosystem's rules (e.g. python/repairs.py); with a forced interpreter no repair switches to another."""
        if self.config.python:
            context = context.model_copy(update={"available_pythons": [self.config.python]})
        return more_time(context) or get_ecosystem(context.plan.ecosystem).repair(context)


__all__ = ["EmbeddedModel", "EmbeddedModelConfig"]
