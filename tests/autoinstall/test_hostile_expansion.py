"""Small files that grow on the host: what the host reads of a stranger's repository costs about its size.

Hostile fixtures, built in tmp_path (no Docker): a CI workflow, a compose file and a GitLab file whose YAML
aliases nest nine to a level (600 bytes that are millions of nodes to whoever walks or prints them; the
survey printed a service's `image:` and spent minutes and gigabytes on one); a folder with a sparse file (a
few KiB on its disk, written in full by the copy: 8 KiB became 1.1 GB here); a commit holding a blob of zeros
(a thousandfold smaller in history than in a checkout).
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from autoinstall.ecosystems.repofiles import YAML_ALIAS_NODES, RepoFiles, tree_size
from autoinstall.plan import propose_plan
from autoinstall.source import SourceError, check_out, prepare_source, tree
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


MiB = 1 << 20


def allocated(root: Path) -> int:
    """Bytes the files under `root` take on disk (a sparse file's holes take none)."""
    return sum(os.lstat(Path(folder, name)).st_blocks * 512
               for folder, _dirs, files in os.walk(root) for name in files)


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout's caps at 1 MiB a file and 8 MiB in all, so that a few sparse MiB show what terabytes would."""
    monkeypatch.setattr(tree, "MAX_FILE_BYTES", MiB, raising=False)
    monkeypatch.setattr(tree, "MAX_TREE_BYTES", 8 * MiB, raising=False)


def test_a_sparse_file_is_left_out_of_a_copied_folder_not_written_in_full(tmp_path: Path, small_caps: None) -> None:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "victim"\nversion = "0.1"\n')
    with (repo / "data" / "huge.bin").open("wb") as f:
        f.truncate(64 * MiB)  # a terabyte on a real disk: a few KiB of it
    (repo / "data" / "small.bin").write_bytes(b"\0" * 1000)
    record = check_out(str(repo), None, tmp_path / "out")
    assert not (tmp_path / "out" / "data" / "huge.bin").exists()
    assert (tmp_path / "out" / "data" / "small.bin").stat().st_size == 1000
    assert any(n.startswith("data/huge.bin: 67108864 bytes, over the 1 MiB") for n in record.notes), record.notes
    assert allocated(tmp_path / "out") < MiB
    for i in range(12):  # each under the file cap, all together over the total
        with (repo / "data" / f"part{i}.bin").open("wb") as f:
            f.truncate(MiB - 1)
    with pytest.raises(SourceError, match="holds more than 0 GiB of files"):
        prepare_source(str(repo), None, tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_a_commit_whose_checkout_would_write_more_is_refused(tmp_path: Path, small_caps: None) -> None:
    """A blob of zeros compresses a thousandfold: git's checkout would write it all, from a URL or a local
    `.git` alike (both are checked out by our own git)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True, env=env)
    (repo / "pyproject.toml").write_text('[project]\nname = "victim"\nversion = "0.1"\n')
    (repo / "zeros.bin").write_bytes(bytes(4 * MiB))
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "bomb"], check=True, env=env)
    (repo / "zeros.bin").unlink()  # the work tree no longer holds it: only the history does
    assert allocated(repo / ".git") < MiB
    for source, commit in ((repo, "main"), (repo / ".git", None), (repo / ".git", "main")):
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        with pytest.raises(SourceError, match=r"'zeros.bin' is 4194304 bytes, more than a checkout writes"):
            prepare_source(str(source), commit, out)
        assert not out.exists()
