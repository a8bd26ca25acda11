"""Cheating agents against every grading surface, in every language (tests/adversarial/cheats.py): each task
is made from a fixture repository the way users make one; the gold patch must score 1, no change 0, and every
cheat 0, on the runtime (`Environment.reward()`), in Harbor (`harbor run`) and in swebench's own evaluation.

Needs Docker, Harbor and swebench (scripts/setup.sh installs them); fails under CI when one is missing.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial import cheats
from tests.adversarial.surfaces import GOLD, LanguageTask, make_language_task, runtime_rewards
from tests.adversarial.surfaces import harbor_rewards, swebench_resolved
from tests.envs.task_env import tool_python
from tests.envs.test_harbor import harbor_executable

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def expected(play: str) -> float:
    return 1.0 if play == GOLD else 0.0


@pytest.fixture(scope="session")
def language_tasks(docker_engine: None, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[dict[str, LanguageTask]]:
    """One task per language, made once for the session (the builds use the machine's caches)."""
    from envs.docker import remove_image

    made: dict[str, LanguageTask] = {}
    try:
        for language in cheats.LANGUAGES:
            made[language] = make_language_task(language, tmp_path_factory.mktemp(f"cheat-{language}"))
        yield made
    finally:
        for lt in made.values():
            remove_image(lt.task.image)


@pytest.mark.parametrize("language", cheats.LANGUAGES)
def test_the_runtime_pays_only_the_fix(language: str, language_tasks: dict[str, LanguageTask]) -> None:
    lt = language_tasks[language]
    naive: dict[str, float] = {}
    rewards = runtime_rewards(lt, lt.plays(), naive)
    wrong = {play: value for play, value in rewards.items() if value != expected(play)}
    assert not wrong, wrong
    if language == "python":  # the control: scored in the agent's own container, the cheats would pay
        paid = sorted(play for play, value in naive.items() if value == 1.0 and play != GOLD)
        assert len(paid) >= 8, paid


def test_harbor_pays_only_the_fix(language_tasks: dict[str, LanguageTask], tmp_path: Path) -> None:
    rewards = harbor_rewards(harbor_executable(), list(language_tasks.values()), tmp_path)
    wrong = {key: value for key, value in rewards.items() if value != expected(key[1])}
    assert not wrong, wrong
    assert {language for language, _ in rewards} == set(cheats.LANGUAGES)


def test_swebench_resolves_only_the_fix(language_tasks: dict[str, LanguageTask], tmp_path: Path) -> None:
    python = tool_python("swebench", "swebench 5.x")
    resolved = swebench_resolved(python, list(language_tasks.values()), tmp_path)
    wrong = {key: value for key, value in resolved.items() if value != expected(key[1])}
    assert not wrong, wrong
