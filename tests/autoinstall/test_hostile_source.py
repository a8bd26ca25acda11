"""Hostile repositories on the host side: git config that runs commands, symlinks out of the checkout,
concurrent builds of one environment.

Each fixture is built in tmp_path (a repository cannot be committed with its own .git) and first shown to
be really hostile: plain git run on it executes the planted command. Then autoinstall must not.
"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from autoinstall.plan import propose_plan
from autoinstall.record.lock import BuildLockedError, build_lock
from autoinstall.source import prepare_source, tree_digest
from autoinstall.survey import survey
from tests.clirun import autoinstall

EVIL = """#!/bin/sh
echo "$0 $*" >> "{marker}"
exit 0
"""


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def plant(git_dir: Path, script: Path) -> None:
    """Config and hooks that make git run `script`: fsmonitor, filter and diff drivers, hooks."""
    for key, value in (("core.fsmonitor", str(script)), ("filter.evil.clean", f"{script} clean"),
                       ("filter.evil.smudge", f"{script} smudge"), ("diff.evil.textconv", str(script)),
                       ("core.pager", f"{script} pager")):
        subprocess.run(["git", "config", "--file", str(git_dir / "config"), key, value], check=True)
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-checkout", "post-merge", "pre-commit", "reference-transaction", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\n{script} hook-{hook}\n")
        (hooks / hook).chmod(0o755)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A work tree with a modified tracked file, whose .git runs a script that appends to `marker`."""
    marker = tmp_path / "marker"
    script = tmp_path / "evil.sh"
    script.write_text(EVIL.format(marker=marker))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    repo = tmp_path / "evil"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "evil"\nversion = "0.1"\n')
    (repo / "mod.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    plant(repo / ".git", script)
    (repo / "mod.py").write_text("X = 2\n")
    # The fixture is really hostile: plain git on it runs the script.
    git(repo, "status", "--porcelain")
    assert marker.is_file(), "the fixture should make plain `git status` run its script"
    marker.unlink()
    return repo, marker


def test_a_copied_work_tree_runs_nothing_from_its_git_config(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    repo, marker = hostile
    info = prepare_source(str(repo), None, tmp_path / "out")
    assert not marker.exists(), marker.read_text()
    assert info.is_dirty and info.commit
    assert (tmp_path / "out" / "mod.py").read_text() == "X = 2\n"
    config = (tmp_path / "out" / ".git" / "config").read_text()
    assert "fsmonitor" not in config and "evil" not in config
    assert not (tmp_path / "out" / ".git" / "hooks").exists()


def test_a_clone_at_a_commit_runs_nothing(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    repo, marker = hostile
    info = prepare_source(str(repo), "main", tmp_path / "out")
    assert not marker.exists(), marker.read_text()
    assert (tmp_path / "out" / "mod.py").read_text() == "X = 1\n"
    assert info.kind == "git"


def test_a_bare_repository_with_hooks_runs_nothing(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    repo, marker = hostile
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    plant(bare, tmp_path / "evil.sh")
    marker.unlink(missing_ok=True)
    prepare_source(str(bare), None, tmp_path / "out")
    assert not marker.exists(), marker.read_text()
    assert (tmp_path / "out" / "mod.py").read_text() == "X = 1\n"


def test_the_survey_reads_nothing_outside_the_checkout(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("hunter2-host-secret==1.0\n")
    outside = tmp_path / "host-dir"
    outside.mkdir()
    (outside / "requirements.txt").write_text("hunter2-dir-secret==1.0\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='leaky')\n")
    (repo / "requirements.txt").symlink_to(secret)
    (repo / "requirements-dev.txt").symlink_to(outside / "requirements.txt")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    facts = survey(repo)
    dumped = facts.model_dump_json()
    assert "hunter2" not in dumped
    assert any("requirements.txt: points outside the checkout" in n for n in facts.notes)
    plan = propose_plan(str(repo))
    assert "hunter2" not in plan.model_dump_json()


def test_one_build_of_an_environment_at_a_time_whatever_its_output_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    fixture = Path(__file__).parents[1] / "fixtures" / "repos" / "pep621_extras"
    other = prepare_source(str(fixture), None, tmp_path / "copy")  # what the first build checked out
    revision = "dir-" + tree_digest(tmp_path / "copy")[:12]
    assert other.commit is None
    with build_lock(str(fixture), revision, "embedded", "pep621_extras"):
        with pytest.raises(BuildLockedError, match=rf"pep621_extras.*process {os.getpid()}.*catalog list"):
            build_environment(str(fixture), BuildOptions(out_dir=tmp_path / "elsewhere"))
    assert not (tmp_path / "elsewhere" / "spec.json").exists()
    with build_lock(str(fixture), revision, "embedded", "pep621_extras"):  # released, and free again
        pass


@pytest.mark.parametrize(("command", "option"), [
    ("run", ["--threshold", "5"]), ("run", ["--max-deselected", "-1"]), ("run", ["--step-timeout", "-5"]),
    ("run", ["--max-repairs", "-1"]), ("run", ["--time-budget", "0"]), ("run", ["--disk-mb", "10"]),
    ("run", ["--memory-mb", "1"]), ("run", ["--pids", "1"]), ("run", ["--model", "nonsense"]),
    ("run", ["--model", "openai:m"]), ("run", ["--python", "abc"]),
    ("batch", ["--model", "nonsense"]), ("batch", ["--threshold", "5"]), ("batch", ["--jobs", "0"]),
])
def test_bad_option_values_are_refused_before_any_work(tmp_path: Path, command: str, option: list[str]) -> None:
    """A bad value exits 2 naming the option, before the source is copied or cloned, a sandbox starts or a
    record is written (once, `--threshold 5` ran a whole build before it was refused)."""
    home = tmp_path / "home"
    repo = str(Path(__file__).parents[1] / "fixtures" / "repos" / "pep621_extras")
    target = [repo, "--out", str(tmp_path / "out")] if command == "run" else [str(tmp_path / "batch.txt")]
    (tmp_path / "batch.txt").write_text(repo + "\n")
    done = autoinstall(command, *target, *option, "--catalog", str(tmp_path / "catalog"), home=home)
    assert done.returncode == 2, (done.stdout, done.stderr)
    named = option[0] if option[0] != "--model" else ("--base-url" if ":" in option[1] else "model")
    assert named in done.stderr, done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "catalog").exists()
    assert not home.exists() or not any(home.rglob("*")), sorted(home.rglob("*"))
