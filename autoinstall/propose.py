"""Phase 1 on its own: check out, survey and propose, without Docker."""
from __future__ import annotations

import tempfile
from pathlib import Path

from autoinstall.plan import Plan


def propose_plan(repo: str, *, commit: str | None = None, model: str = "embedded",
                 base_url: str | None = None) -> Plan:
    """The plan `model` proposes for `repo` at `commit`."""
    from autoinstall.models import get_model
    from autoinstall.source import prepare_source
    from autoinstall.survey import survey

    with tempfile.TemporaryDirectory(prefix="autoinstall-plan-") as scratch:
        src = Path(scratch) / "repo"
        prepare_source(repo, commit, src)
        return get_model(model, base_url=base_url).propose(survey(src), src)
