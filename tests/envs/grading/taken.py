"""What the grader makes of an agent's version of one product file (envs/grading/kit/changes.py), for the
tests that read product code past its spelling."""
from __future__ import annotations

from pathlib import Path

from envs.grading.kit import changes
from envs.grading.policy import GradingRules


def why_refused(tmp_path: Path, rules: GradingRules, name: str, start: str, after: str) -> str | None:
    """Why the grader drops `after` as the agent's version of `name` (start text `start`), or None: taken."""
    for side, text in (("start", start), ("agent", after)):
        (tmp_path / side / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / side / name).write_text(text)
    policy = changes.Policy.from_json(rules.model_dump(mode="json"))
    found = {c.path: c for c in changes.find(str(tmp_path / "start"), str(tmp_path / "agent"), policy)}
    return None if found[name].accepted else found[name].reason
