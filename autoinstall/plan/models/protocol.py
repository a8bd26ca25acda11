"""The prior-model protocol: what the pipeline asks of any model, embedded or chat."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from autoinstall.ecosystems.base import Facts, RepairContext
from envs.spec import Plan, Repair

ToolRunner = Callable[[str, str], str]
"""Runs one agent tool for a model: (tool name, JSON arguments) -> observation text."""


@runtime_checkable
class PriorModel(Protocol):
    """A model that proposes an install plan (phase 1) and repairs failures (phase 2)."""

    name: str
    """Short name shown in reports, e.g. `embedded` or `openai:NAME`."""

    def propose(self, facts: Facts, repo: Path, tools: ToolRunner | None = None) -> Plan:
        """Propose install steps and verification checks for a repository.

        Args:
            facts: what the survey found in the repository.
            repo: the checkout the facts describe (read only; the model may look at files).
            tools: read_file/search over the checkout, for models that explore.

        Returns:
            A plan of at most 10 steps, each with why and evidence, and the checks that prove it worked.
        """
        ...

    def repair(self, context: RepairContext, tools: ToolRunner | None = None) -> Repair | None:
        """Propose one fix for a failed step, check or test run.

        Args:
            context: the plan, the failing command, its output and diagnosis, what was tried already.
            tools: read_file/search/terminal inside the failing sandbox, for models that investigate.

        Returns:
            A Repair, or None to give up (the failure is then recorded with its evidence); a Repair of kind
            give_up gives up saying why, and the failure's message ends with its reason.
        """
        ...
