"""Cheating agents against every grading surface, in every language (tests/adversarial/cheats.py): each task
is made from a fixture repository the way users make one; the gold patch must score 1, no change 0, and every
cheat 0, on the runtime (`Environment.reward()`), in Harbor (`harbor run`) and in swebench's own evaluation.

Needs Docker, Harbor and swebench (scripts/setup.sh installs them); fails under CI when one is missing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial import cheats
from tests.adversarial.surfaces import (
    FIXTURES,
    GOLD,
    LanguageTask,
    harbor_rewards,
    runtime_rewards,
    swebench_resolved,
)
from tests.builds import Builds
from tests.envs.task_env import tool_python
from tests.envs.test_harbor import harbor_executable

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def expected(play: str) -> float:
    return 1.0 if play == GOLD else 0.0


def language_task(language: str, builds: Builds) -> LanguageTask:
    """The language's task, made once per run (tests/builds.py) from its fixture repository the way users make
    one: each test asks for its own language's, so the five are built side by side on the run's workers."""
    built = builds.task(FIXTURES[language])
    assert built.env.spec.status == "verified", built.env.spec.failure
    assert built.report.tasks, (built.report.candidates, built.report.dropped)
    assert built.report.tasks[0].grading is not None
    return LanguageTask(language, built.env.catalog, built.report.tasks[0])


@pytest.mark.parametrize("language", cheats.LANGUAGES)
def test_the_runtime_pays_only_the_fix(language: str, builds: Builds) -> None:
    lt = language_task(language, builds)
    # the control (scored in the agent's own container): every cheat for python, elsewhere the cheats marked
    # for it (scoring them all would only double the gradings)
    every = {c.name for c in cheats.for_language(language)}
    controlled = {c.name for c in cheats.for_language(language) if c.control}
    naive: dict[str, float] = {}
    rewards = runtime_rewards(lt, lt.plays(), naive, control=every if language == "python" else controlled)
    wrong = {play: value for play, value in rewards.items() if value != expected(play)}
    assert not wrong, wrong
    if language == "python":  # where nothing reads the change, the cheats would pay
        paid = sorted(play for play, value in naive.items() if value == 1.0 and play != GOLD)
        assert len(paid) >= 8, paid
    unpaid = {play: value for play, value in naive.items() if play in controlled and value != 1.0}
    assert not unpaid, unpaid  # each controlled cheat works where nothing stops it: the grader's 0 is its own


@pytest.mark.parametrize("language", cheats.LANGUAGES)
def test_harbor_pays_only_the_fix(language: str, builds: Builds, tmp_path: Path) -> None:
    rewards = harbor_rewards(harbor_executable(), [language_task(language, builds)], tmp_path,
                             dispose=builds.remove_at_end)
    wrong = {key: value for key, value in rewards.items() if value != expected(key[1])}
    assert not wrong, wrong
    assert {language for language, _ in rewards} == {language}


@pytest.mark.parametrize("language", cheats.LANGUAGES)
def test_swebench_resolves_only_the_fix(language: str, builds: Builds, tmp_path: Path) -> None:
    python = tool_python("swebench", "swebench 5.x")
    resolved = swebench_resolved(python, [language_task(language, builds)], tmp_path, dispose=builds.remove_at_end)
    wrong = {key: value for key, value in resolved.items() if value != expected(key[1])}
    assert not wrong, wrong
