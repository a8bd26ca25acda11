"""The cheat catalogue itself (fast, no Docker): every language is attacked where its grading could give,
every script is valid bash, and what a diff cannot hold is kept off SWE-bench."""
from __future__ import annotations

import subprocess

import pytest

from tests.adversarial import cheats

IDS = {"python": "tests/test_m.py::test_x", "go": "example.com/m/p::TestX/sub", "rust": "m-lib::tests::x",
       "java": "com.example.FooTest#x", "node": "suite > case"}


@pytest.mark.parametrize("language", cheats.LANGUAGES)
def test_every_language_is_attacked_on_every_surface(language: str) -> None:
    mine = cheats.for_language(language)
    assert len(mine) >= 8
    assert len(cheats.for_language(language, harbor=True)) >= 1
    assert all(c.reach != cheats.ROOT for c in cheats.for_language(language, diff=True))
    assert len({c.name for c in mine}) == len(mine)
    if language != "python":  # scored in the agent's own container too by the runtime's test: they must pay there
        assert any(c.control for c in mine)


@pytest.mark.parametrize("cheat", cheats.CHEATS, ids=lambda c: f"{c.language}: {c.name}")
def test_each_script_is_valid_bash(cheat: cheats.Cheat) -> None:
    language = cheat.language if cheat.language != "any" else "python"
    script = cheats.prelude(language, IDS[language], "pkg/mod.py", "/tmp/gold.patch") + cheat.script
    checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_the_prelude_names_the_test_by_its_runner_id() -> None:
    assert "NAME=TestX " in cheats.prelude("go", IDS["go"], "p/a.go", "g")
    assert "NAME=case " in cheats.prelude("node", IDS["node"], "lib/a.js", "g")
    assert "NAME=x " in cheats.prelude("java", IDS["java"], "src/main/java/A.java", "g")
