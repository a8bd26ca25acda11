"""History candidates from a real git history (LocalSandbox: git on this host, no Docker): which commits are
read, which reverse whole or in part, in which order they come, and that every patch round-trips."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from autoinstall.tasks.history import HistoryFunnel, history_candidates
from autoinstall.tasks.history_log import MAX_FILES, is_cosmetic, parse_log, removes_definition, touches_test
from autoinstall.tasks.workspace import apply_patch
from envs.local import LocalSandbox

CALC = '''def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b
'''


@pytest.fixture
def sandbox() -> Iterator[LocalSandbox]:
    box = LocalSandbox()
    box.start()
    try:
        yield box
    finally:
        box.stop()


def commit(box: LocalSandbox, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        box.write_file(path, text.encode())
    result = box.exec(f"git add -A && git -c user.name=t -c user.email=t@t commit -q -m '{message}' && "
                      "git rev-parse HEAD", timeout=60)
    assert result.ok, result.stderr
    return result.stdout.strip()


def history(box: LocalSandbox) -> dict[str, str]:
    """A history with each kind of commit; returns message -> sha."""
    assert box.exec("git init -q -b main", timeout=60).ok
    shas = {}
    calc = CALC.replace("return a - b", "return b - a").replace("return a * b", "return a * b * 1")
    shas["first"] = commit(box, "first", {"calc/ops.py": calc, "tests/test_ops.py": "def test_add(): pass\n"})
    calc = calc.replace("return b - a", "return a - b")
    shas["fix sub"] = commit(box, "fix sub", {"calc/ops.py": calc, "tests/test_ops.py": "def test_sub(): pass\n"})
    calc = calc.replace("return a * b * 1", "return a * b")
    shas["tidy mul"] = commit(box, "tidy mul", {"calc/ops.py": calc})
    calc = "# operations\n" + calc
    shas["comment"] = commit(box, "comment", {"calc/ops.py": calc})
    both = calc.replace("return a + b", "return a + b + 0").replace("return a / b", "return a / b / 1")
    shas["two hunks"] = commit(box, "two hunks", {"calc/ops.py": both, "tests/test_ops.py": "def test_x(): 1\n"})
    later = both.replace("return a + b + 0", "return sum((a, b))")
    shas["later edit"] = commit(box, "later edit", {"calc/ops.py": later, "calc/new.py": "X = 1\n"})
    return shas


def test_candidates_put_tested_whole_reverses_first_and_skip_comments(sandbox: LocalSandbox) -> None:
    shas = history(sandbox)
    funnel = HistoryFunnel()
    found = history_candidates(sandbox, funnel=funnel)
    order = [c.history.message for c in found if c.history]
    # tested whole ("fix sub"), tested partial ("two hunks": its first hunk was edited later), untested
    # ("later edit" adds a file, which is not reversed, "tidy mul"); "comment" changes no code; "first"
    # has no parent.
    assert order == ["fix sub", "two hunks", "later edit", "tidy mul"]
    assert funnel.model_dump() == {"looked_at": 6, "code": 5, "with_tests": 2, "reversed": 5, "whole": 4,
                                   "candidates": 4, "searched": 0, "failing": 0, "validated": 0, "tried": 5}
    partial = next(c for c in found if c.history and c.history.commit == shas["two hunks"])
    assert "-    return a / b / 1" in partial.bug_patch and "sum((a, b))" not in partial.bug_patch
    later = next(c for c in found if c.history and c.history.commit == shas["later edit"])
    assert later.files == ["calc/ops.py"] and later.test_files == []
    assert found[0].test_files == ["tests/test_ops.py"]


def test_every_candidate_applies_and_its_gold_restores_the_tree(sandbox: LocalSandbox) -> None:
    history(sandbox)
    found = history_candidates(sandbox)
    assert found
    for candidate in found:
        assert apply_patch(sandbox, candidate.bug_patch), candidate.bug_patch
        assert not sandbox.exec("git diff --quiet", timeout=60).ok
        assert apply_patch(sandbox, candidate.gold_patch), candidate.gold_patch
        assert sandbox.exec("git diff --quiet", timeout=60).ok


def test_a_tree_without_history_gives_no_candidates(sandbox: LocalSandbox) -> None:
    assert sandbox.exec("git init -q -b main", timeout=60).ok
    commit(sandbox, "only", {"calc/ops.py": CALC})
    funnel = HistoryFunnel()
    assert history_candidates(sandbox, funnel=funnel) == [] and funnel.looked_at == 0


def test_parse_log_counts_modified_sources_and_touched_tests() -> None:
    """A commit over several files is kept (history.MAX_LINES caps a reverse's size); past MAX_FILES it is not."""
    wide = "".join(f"M\tpkg/m{i}.py\n" for i in range(MAX_FILES + 1))
    log = ("\x1ea1\x1ffix parser\n\nbody\x1f\nM\tpkg/parse.py\nA\tpkg/new.py\nM\ttests/test_parse.py\n"
           "\x1ea2\x1fdocs\x1f\nM\tREADME.md\n"
           "\x1ea3\x1fbig\x1f\nM\tpkg/a.py\nM\tpkg/b.py\nM\tpkg/c.py\nM\tpkg/d.py\n"
           f"\x1ea4\x1fhuge\x1f\n{wide}")
    read, found = parse_log(log)
    assert read == 4
    assert [(c.sha, c.modified, c.tests) for c in found] == [
        ("a1", ["pkg/parse.py"], ["tests/test_parse.py"]), ("a3", [f"pkg/{x}.py" for x in "abcd"], [])]
    assert found[0].message == "fix parser\n\nbody"


@pytest.mark.parametrize(("path", "expected"), [
    ("tests/test_ops.py", True), ("pkg/foo_test.go", True), ("src/conftest.py", True),
    ("docs/conf.py", False), ("pkg/ops.py", False), ("tests/data.json", False)])
def test_touches_test(path: str, expected: bool) -> None:
    assert touches_test(path) is expected


def test_is_cosmetic() -> None:
    assert is_cosmetic("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-# old\n+# new\n \n+\n")
    assert not is_cosmetic("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-    return a\n+    return b\n")


def test_removes_definition_only_for_compiled_languages() -> None:
    go = "--- a/uuid.go\n+++ b/uuid.go\n@@ -1,3 +1,1 @@\n-func (u UUID) Compare(o UUID) int {\n-}\n x\n"
    assert removes_definition(go)
    assert not removes_definition(go + "@@ -9 +9 @@\n+func (u UUID) Compare(o UUID) int { return 0 }\n")
    assert removes_definition("--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-pub(crate) fn parse() {}\n")
    assert not removes_definition("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-def parse():\n")
