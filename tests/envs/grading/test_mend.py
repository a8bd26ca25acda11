"""Making the grading tree (envs/grading/kit/mend.py) as root, on real folders: dropped changes are undone in the
agent's tree without ever writing through a link it left, accepted ones are made in a start-state tree, and the
task's own files end up root's, read-only to the test user, with any change the run makes to them noticed."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autoinstall.ecosystems.python.grading import RULES as PYTHON
from envs.grading.kit import changes, mend
from tests.envs.grading.test_changes import START, tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="making the grading tree changes owners: needs root")
UID = GID = 4321
RULES = changes.Policy.from_json(PYTHON.model_dump(mode="json"))


def grade_tree(tmp_path: Path, edit, in_place: bool) -> tuple[Path, Path, list[changes.Change]]:
    start = tree(tmp_path / "start", START)
    agent = tree(tmp_path / "agent", START)
    edit(agent)
    work = agent if in_place else Path(shutil.copytree(start, tmp_path / "work", symlinks=True))
    ours = changes.walk(str(start), RULES)
    if in_place:
        mend.reset_bulky(str(start), str(work), RULES, ours, False, UID, GID)
    found = changes.find(str(start), str(agent), RULES, ours)
    mend.apply(found, str(start), str(work), in_place, ours, UID, GID)
    mend.own(str(work), UID, GID)
    return start, work, found


@pytest.mark.parametrize("in_place", [True, False])
def test_the_grading_tree_is_the_start_plus_the_fix(tmp_path: Path, in_place: bool) -> None:
    def edit(agent: Path) -> None:
        (agent / "calc/core.py").write_text("def sub(a, b):\n    return a - b\n")
        (agent / "tests/test_calc.py").write_text("def test_sub():\n    pass\n")
        (agent / "conftest.py").write_text("import cheat\n")
        shutil.rmtree(agent / "calc/__pycache__", ignore_errors=True)

    start, work, _ = grade_tree(tmp_path, edit, in_place)
    assert (work / "calc/core.py").read_text().endswith("a - b\n")
    assert (work / "tests/test_calc.py").read_text() == START["tests/test_calc.py"]
    assert not (work / "conftest.py").exists()
    st = (work / "calc/core.py").stat()
    assert (st.st_uid, st.st_gid) == (UID, GID)


def test_a_link_the_agent_left_is_replaced_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def edit(agent: Path) -> None:
        shutil.rmtree(agent / "tests")
        (agent / "tests").symlink_to(outside)  # restoring tests/ must not write into `outside`

    _, work, found = grade_tree(tmp_path, edit, in_place=True)
    assert not (work / "tests").is_symlink() and (work / "tests/test_calc.py").read_text() == START["tests/test_calc.py"]
    assert list(outside.iterdir()) == []
    assert any(c.path == "tests" and not c.accepted for c in found)


def test_the_tasks_files_are_locked_and_a_change_to_them_is_seen(tmp_path: Path) -> None:
    _, work, _ = grade_tree(tmp_path, lambda agent: None, in_place=False)
    seen = mend.lock(str(work), RULES)
    test_file = work / "tests/test_calc.py"
    assert "tests/test_calc.py" in seen and test_file.stat().st_uid == 0 and not test_file.stat().st_mode & 0o022
    assert mend.changed_since(str(work), seen) == []
    replaced = work / "tests/tmp.py"  # what a build script running as the test user could do: replace by rename
    replaced.write_text("def test_sub():\n    pass\n")
    os.replace(replaced, test_file)
    assert mend.changed_since(str(work), seen) == ["tests/test_calc.py"]
