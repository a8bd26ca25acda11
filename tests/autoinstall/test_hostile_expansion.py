"""Small files that grow on the host: what the host reads of a stranger's repository costs about its size.

Hostile fixtures, built in tmp_path (no Docker): a CI workflow, a compose file and a GitLab file whose YAML
aliases nest nine to a level (600 bytes that are millions of nodes to whoever walks or prints them; the
survey printed a service's `image:` and spent minutes and gigabytes on one).
"""
from __future__ import annotations

import time
from pathlib import Path

import yaml

from autoinstall.ecosystems.repofiles import YAML_ALIAS_NODES, RepoFiles, tree_size
from autoinstall.plan import propose_plan
from autoinstall.survey import survey


def alias_bomb(levels: int, key: str) -> str:
    """YAML whose `key` is `levels` nested lists of nine aliases of the level below: 9**levels leaves."""
    lines = ["x0: &x0 [x, y]"] + [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\n{key}: *x{levels}\n"


def repo_with_bombs(root: Path, levels: int) -> Path:
    files = {
        "pyproject.toml": '[project]\nname = "victim"\nversion = "0.1"\n',
        "tests/test_a.py": "def test_a():\n    assert True\n",
        ".github/workflows/ci.yml": alias_bomb(levels, "bomb").replace(
            "bomb: ", "jobs:\n  t:\n    services:\n      db:\n        image: ") + "    steps:\n      - run: pytest\n",
        "docker-compose.yml": alias_bomb(levels, "services"),
        ".gitlab-ci.yml": alias_bomb(levels, "test"),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_yaml_alias_bomb_is_a_note_not_the_hosts_memory(tmp_path: Path) -> None:
    """Seven levels keep this test quick where the bomb is not caught (4.8 million leaves, one str() of tens of
    MB); nine took minutes and gigabytes before the loader refused it."""
    repo = repo_with_bombs(tmp_path / "repo", levels=7)
    started = time.monotonic()
    facts = survey(repo)
    plan = propose_plan(str(repo))
    assert time.monotonic() - started < 30
    for rel in (".github/workflows/ci.yml", "docker-compose.yml", ".gitlab-ci.yml"):
        assert any(n.startswith(f"{rel}: its aliases expand it") for n in facts.notes), (rel, facts.notes)
    assert facts.services == []
    assert len(plan.model_dump_json()) < 1_000_000


def test_aliases_that_real_configs_use_are_read_and_a_file_that_contains_itself_is_not(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        ".defaults: &defaults\n  image: python:3.12\n  services: [postgres:16]\n"
        "test:\n  <<: *defaults\n  script: [pytest]\nlint:\n  <<: *defaults\n  script: [ruff check]\n")
    (tmp_path / "loop.yml").write_text("a: &a [1, *a]\n")
    files = RepoFiles(tmp_path)
    assert files.yaml(".gitlab-ci.yml")["lint"]["image"] == "python:3.12"
    assert files.yaml("loop.yml") is None
    assert any(n.startswith("loop.yml: its aliases expand it") for n in files.notes)
    bomb = yaml.safe_load(alias_bomb(9, "k"))
    assert tree_size(bomb, YAML_ALIAS_NODES) is None  # sized once per shared node: at once
    assert tree_size(yaml.safe_load("a: &a [1, 2]\nb: [*a, *a]\n"), 13) == 13
    assert tree_size(yaml.safe_load("o: !!omap [{k: [1, 2]}]"), 100) == 8  # pairs are walked too
