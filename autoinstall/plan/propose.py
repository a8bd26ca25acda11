"""Phase 1: the prior model's plan for a checkout (chat models explore it with read/search)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from autoinstall.ecosystems.base import Facts
from autoinstall.options import BuildOptions
from autoinstall.plan.agent_tools import tools_over_checkout, wants_tools
from autoinstall.plan.models import PriorModel, get_model
from autoinstall.plan.models.embedded import EmbeddedModel
from autoinstall.source import prepare_source
from autoinstall.survey import survey
from envs.spec import Plan


def propose(src: Path, options: BuildOptions, facts: Facts | None = None) -> tuple[PriorModel, Plan]:
    """The model named in `options` and its plan for the checkout at `src` (surveyed unless `facts`)."""
    model = get_model(options.model, base_url=options.base_url)
    if options.python and isinstance(model, EmbeddedModel):
        model = model.forcing(options.python)  # the only candidate: requires-python cannot refuse it
    facts = facts if facts is not None else survey(src)
    if wants_tools(model):
        with tools_over_checkout(src) as tools:
            plan = model.propose(facts, src, tools=tools)
    else:
        plan = model.propose(facts, src)
    if options.python:
        plan.python = options.python  # chat models choose their own: the user's choice still wins
    return model, plan


def propose_plan(repo: str, *, commit: str | None = None, model: str = "embedded",
                 base_url: str | None = None, python: str | None = None) -> Plan:
    """Phase 1 on its own, without Docker: check out `repo` at `commit`, survey it and propose (with
    `python` forced, as `run --python` would)."""
    with tempfile.TemporaryDirectory(prefix="autoinstall-plan-") as scratch:
        src = Path(scratch) / "repo"
        source = prepare_source(repo, commit, src)
        plan = propose(src, BuildOptions(model=model, base_url=base_url, python=python))[1]
        plan.notes[:0] = source.notes  # what the checkout left out (links out of it, FIFOs, parts of .git)
        return plan
