"""A unified diff applied in memory (autoinstall/tasks/patchtext.py): the bug state of a file, from the solved
text and the candidate's bug patch, exactly as git would make it, or None when the patch does not fit."""
from __future__ import annotations

import subprocess
from pathlib import Path

from autoinstall.tasks.patchtext import applied, per_file

SOLVED = "".join(f"line {i}\n" for i in range(1, 30))


def git_diff(tmp_path: Path, before: str, after: str) -> str:
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    (tmp_path / "a/f.txt").write_text(before)
    (tmp_path / "b/f.txt").write_text(after)
    out = subprocess.run(["git", "diff", "--no-index", "a/f.txt", "b/f.txt"], cwd=tmp_path,
                         capture_output=True, text=True, check=False).stdout
    return out.replace("b/b/f.txt", "b/f.txt").replace("a/a/f.txt", "a/f.txt")


def test_a_patch_git_made_is_applied_as_git_would(tmp_path: Path) -> None:
    after = SOLVED.replace("line 3\n", "line three\n").replace("line 20\n", "").replace("line 28\n",
                                                                                      "line 28\n-- x\n")
    hunks = per_file(git_diff(tmp_path, SOLVED, after))["f.txt"]
    assert applied(SOLVED, hunks) == after


def test_a_patch_made_from_another_text_does_not_apply(tmp_path: Path) -> None:
    hunks = per_file(git_diff(tmp_path, SOLVED, SOLVED.replace("line 3\n", "line three\n")))["f.txt"]
    assert applied(SOLVED.replace("line 2\n", "line two\n"), hunks) is None
