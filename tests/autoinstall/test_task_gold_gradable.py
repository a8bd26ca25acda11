"""A task is made only when the grader would pay its own fix: its gold patch changes no file that belongs to the
task and adds no text the grader refuses in an agent's product code (tasks/grading.py `gold_problem`)."""
from __future__ import annotations

from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.tasks.grading import gold_problem

RULES = get_ecosystem("python").grading


def patch(path: str, removed: list[str], added: list[str]) -> str:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,{len(removed)} +1,{len(added)} @@\n{body}"


def test_a_fix_of_product_code_is_gradable() -> None:
    gold = patch("src/pkg/mod.py", ["    return a - b"], ["    return a + b"])
    assert gold_problem(RULES, ["src/pkg/mod.py"], gold, {"src/pkg/mod.py": "def f(a, b):\n    return a + b\n"}) is None


def test_a_fix_that_changes_a_file_of_the_task_is_not() -> None:
    for path in ("tests/conftest.py", "pyproject.toml", "pkg/sitecustomize.py", "tests/test_mod.py"):
        gold = patch(path, ["x = 1"], ["x = 2"])
        why = gold_problem(RULES, [path], gold, {path: "x = 2\n"})
        assert why and path in why and "belongs to the task" in why


def test_a_fix_under_a_folder_never_transferred_is_not() -> None:
    path = "pkg/__pycache__/mod.py"
    assert "never takes" in (gold_problem(RULES, [path], patch(path, ["a"], ["b"]), {}) or "")


def test_a_fix_that_adds_a_refused_token_is_not_unless_the_file_already_holds_it() -> None:
    path = "pkg/cli.py"
    gold = patch(path, ["    return 1"], ["    sys.exit(1)"])
    alone = "import sys\n\ndef main():\n    sys.exit(1)\n"
    why = gold_problem(RULES, [path], gold, {path: alone})
    assert why and "'sys.exit'" in why
    elsewhere = alone + "\ndef other():\n    sys.exit(2)\n"  # the start holds the token too: the grader keeps it
    assert gold_problem(RULES, [path], gold, {path: elsewhere}) is None
    restored = patch(path, ["    sys.exit(0)"], ["    sys.exit(1)"])  # the bug state's line holds it already
    assert gold_problem(RULES, [path], restored, {path: alone}) is None


def test_a_fix_to_a_file_that_is_not_source_is_not_made_into_a_task() -> None:
    path = "pkg/data/table.json"
    why = gold_problem(RULES, [path], patch(path, ['{"a": 1}'], ['{"a": 2}']), {path: '{"a": 1}'})
    assert why and "not a source file" in why


def test_a_fix_whose_added_code_the_grader_refuses_is_judged_from_the_bug_state() -> None:
    path = "pkg/mod.py"

    def second_line(old: str, new: str) -> str:
        return f"--- a/{path}\n+++ b/{path}\n@@ -2,1 +2,1 @@ def get(o, n):\n-{old}\n+{new}\n"
    solved = "def get(o, n):\n    return getattr(o, n)\n"
    bug = second_line("    return getattr(o, n)", "    return None")
    gold = second_line("    return None", "    return getattr(o, n)")
    why = gold_problem(RULES, [path], gold, {path: solved}, bug)
    assert why and "computed attribute name" in why
    kept = "def get(o, n):\n    return getattr(o, n) + 1\n"
    bug_kept = second_line("    return getattr(o, n) + 1", "    return getattr(o, n) - 1")
    gold_kept = second_line("    return getattr(o, n) - 1", "    return getattr(o, n) + 1")
    assert gold_problem(RULES, [path], gold_kept, {path: kept}, bug_kept) is None
