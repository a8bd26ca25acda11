"""Stage 3, plan: a prior model turns the survey's facts into at most 10 steps and their checks.

Files: `propose.py` (the entry points), `models/` (the PriorModel protocol, the embedded and chat models),
`agent_tools.py` (read/search/terminal for models that explore).
"""
from __future__ import annotations

from autoinstall.plan.propose import propose, propose_plan

__all__ = ["propose", "propose_plan"]
