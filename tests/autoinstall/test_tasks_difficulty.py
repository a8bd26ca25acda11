"""Difficulty and combination without Docker: the call graph over the fixture's sources and tests, the
features and bucket of a task, how validated bugs are grouped into combined tasks, and the task filter."""
from __future__ import annotations

import os
from pathlib import Path

from autoinstall.tasks.candidate import Candidate, history_candidate, mutation_candidate, unified_diff
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.combine import Kept, Pool, combined_candidate
from autoinstall.tasks.difficulty import bucket, features
from autoinstall.tasks.searching import validation_workers
from autoinstall.tasks.staticreach import StaticReach
from autoinstall.tasks.validate import Verdict, _disagreement
from envs.base import Limits
from envs.task import HistoryInfo, MutationInfo, StatementCheck, Statements, Task, TaskFeatures, TaskFilter

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "tasks_mutable"
SOURCE = "ranges/__init__.py"
TESTS = "tests/test_ranges.py"
TEXT = (FIXTURE / SOURCE).read_text()
INDEX = CodeIndex.build({SOURCE: TEXT}, {TESTS: (FIXTURE / TESTS).read_text()})


def mutant(function: str, old: str, new: str, path: str = SOURCE, text: str = TEXT) -> Candidate:
    return mutation_candidate(MutationInfo(operator="op", file=path, function=function, line=1), text,
                              text.replace(old, new))


LENGTH = mutant("length", "return max(0, r[1] - r[0])", "return max(0, r[0] - r[1])")


def test_the_call_graph_finds_tests_changes_and_distances() -> None:
    total = INDEX.test_function(f"{TESTS}::test_total")
    assert total is not None and total.name == "test_total" and total.test
    assert [f.key for f in INDEX.changed(LENGTH.bug_patch)] == [f"{SOURCE}::length"]
    assert INDEX.distance(total, {f"{SOURCE}::length"}) == 2  # test_total -> total -> length
    assert INDEX.distance(total, {f"{SOURCE}::clamp"}) is None


def test_features_and_bucket() -> None:
    direct = features(LENGTH, [f"{TESTS}::test_length"], INDEX)
    assert direct == TaskFeatures(fix_files=1, fix_lines=2, failing_tests=1, changed_functions=[f"{SOURCE}::length"],
                                  tests_name_function=True, call_distance=1)
    assert bucket(direct) == "easy"
    through = features(LENGTH, [f"{TESTS}::test_total"], INDEX)
    assert (through.tests_name_function, through.call_distance, bucket(through)) == (False, 2, "medium")
    wide = TaskFeatures(fix_files=3, fix_lines=45, failing_tests=2, parts=2, call_distance=4)
    assert bucket(wide) == "hard"


def kept(candidate: Candidate, failing: list[str]) -> Kept:
    assert candidate.mutation is not None
    return Kept(candidate=candidate, verdict=Verdict(kept=True, fail_to_pass=failing),
                sites=frozenset({f"{candidate.files[0]}::{candidate.mutation.function}"}), reaching=failing)


def test_groups_take_other_functions_other_files_first_and_no_shared_failing_test() -> None:
    other = "pkg/other.py"
    bugs = [kept(LENGTH, [f"{TESTS}::test_length"]),
            kept(mutant("length", "r[1] - r[0]", "r[1] + r[0]"), [f"{TESTS}::test_total"]),  # same function
            kept(mutant("clamp", "value < low", "value <= low"), [f"{TESTS}::test_length"]),  # same test
            kept(mutant("parse", "int(start) + 1", "int(start) + 2"), [f"{TESTS}::test_parse_single"]),
            kept(mutation_candidate(MutationInfo(operator="op", file=other, function="f", line=1),
                                    "def f():\n    return 1\n", "def f():\n    return 2\n"), ["t::test_f"])]
    pool = Pool()
    for k in bugs:
        pool.add(k)
    groups = []
    while (group := pool.next_group()) is not None:
        groups.append(group)
    assert [len(g) for g in groups][:2] == [2, 3] and groups[0][0] is bugs[-1]  # the newest bug leads
    assert [{k.candidate.files[0] for k in g} for g in groups[:2]] == [{SOURCE, other}] * 2  # another file
    assert bugs[-1].uses == 2 and all(bugs[-1] not in g for g in groups[2:])  # ... while it may join one
    for group in groups:
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                assert not a.sites & b.sites and not a.failing & b.failing
    assert len({frozenset(map(id, g)) for g in groups}) == len(groups)
    assert all(k.uses <= 2 for k in bugs)
    combined = combined_candidate(groups[1])
    assert combined.kind == "combined" and combined.files == sorted({SOURCE, other})
    assert [p.FAIL_TO_PASS for p in combined.parts] == [k.verdict.fail_to_pass for k in groups[1]]
    assert combined.bug_patch == "".join(k.candidate.bug_patch for k in groups[1])


def task(kind: str, difficulty: str | None, statements: Statements | None = None, passed: bool = True) -> Task:
    checks = [StatementCheck(style=s, passed=passed) for s in ("tests", "issue", "terse")] if statements else []
    return Task(instance_id=f"{kind}-{difficulty}", env_id="e", repo="o/n", base_commit="c", image="i",
                kind=kind, bug_patch="-", gold_patch="+", problem_statement="legacy", test_command="pytest",  # type: ignore[arg-type]
                difficulty=difficulty, problem_statements=statements or Statements(), statement_checks=checks)  # type: ignore[arg-type]


def test_the_filter_selects_by_kind_difficulty_and_statement_style() -> None:
    styled = Statements(tests="failing tests...", issue="clamp is wrong", terse="clamp broke")
    tasks = [task("mutation", "easy", styled), task("combined", "hard", styled), task("history", None),
             task("combined", "medium", styled, passed=False)]
    assert [t.kind for t in TaskFilter(kinds=["combined"]).apply(tasks)] == ["combined", "combined"]
    assert [t.instance_id for t in TaskFilter(difficulties=["hard", "easy"]).apply(tasks)] == \
        ["mutation-easy", "combined-hard"]
    issue = TaskFilter(statement="issue").apply(tasks)
    assert [(t.instance_id, t.problem_statement) for t in issue] == [("mutation-easy", "clamp is wrong"),
                                                                    ("combined-hard", "clamp is wrong")]
    legacy = TaskFilter(statement="tests").apply(tasks)  # a task made before styles keeps its one statement
    assert [t.problem_statement for t in legacy] == ["failing tests...", "failing tests...", "legacy"]


def test_a_failed_validation_says_which_run_disagreed_and_how() -> None:
    seen = {"t::a": "passed", "t::b": "failed"}
    assert str(_disagreement("bug run 1", 0, True, seen, ["t::a"], False)) == "bug run 1: timeout: t::a"
    assert _disagreement("bug run 2", 1, False, seen, ["t::a"], True).how.startswith("flaky")
    assert _disagreement("bug run 1", 0, False, seen, ["t::a"], True).how.startswith("order-dependent")
    assert _disagreement("bug run 1", 0, False, seen, ["t::a"], False).how.startswith("fresh container")
    missing = _disagreement("bug run 1", 0, False, seen, ["t::a[x-y]"], True)
    assert missing.how.startswith("not reported") and missing.tests == ["t::a[x-y]"]
    assert _disagreement("gold run 1", 0, False, seen, ["t::b"], True, gold=True).how == "fails with the fix applied"


def test_validations_beside_the_search_fit_the_cores() -> None:
    class Factory:
        limits = Limits(cpus=2.0)

    cores = os.cpu_count() or 1
    assert validation_workers(Factory(), None) == max(1, cores // 2 - 1)  # type: ignore[arg-type]
    assert validation_workers(Factory(), 3) == 3 and validation_workers(Factory(), 0) == 1  # type: ignore[arg-type]


def test_the_call_graph_selects_the_tests_that_reach_a_change_in_any_runner() -> None:
    passing = [f"{TESTS}::{name}" for name in ("test_length", "test_total", "test_total_empty", "test_clamp_low",
                                               "test_parse_range")] + ["pkg::TestUnplaced"]
    reach = StaticReach(INDEX, passing)
    assert reach.reaching(LENGTH) == sorted([f"{TESTS}::test_length", f"{TESTS}::test_total",
                                             f"{TESTS}::test_total_empty", "pkg::TestUnplaced"])
    source = "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n\n" \
             "    def __eq__(self, other):\n        return self.cents == other.cents\n"
    tests = {"tests/test_money.py": "from money import Money\n\ndef test_equal():\n"
                                    "    assert Money(1) == Money(1)\n\ndef test_other():\n    assert 1\n"}
    eq = mutant("Money.__eq__", "self.cents == other.cents", "self.cents != other.cents", "money.py", source)
    money = StaticReach(CodeIndex.build({"money.py": source}, tests),
                        ["tests/test_money.py::test_equal", "tests/test_money.py::test_other"])
    assert money.reaching(eq) == ["tests/test_money.py::test_equal"]  # `==` calls __eq__ through the class
    table = "LIMIT = 'x'\n" + source
    module_level = history_candidate(HistoryInfo(commit="c"), unified_diff("money.py", table, table.replace("x", "y")),
                                     unified_diff("money.py", table.replace("x", "y"), table), ["money.py"])
    assert money.reaching(module_level) == money.passing  # outside any function: every test may see it


def test_the_distance_counts_calls_through_an_operator_and_a_class() -> None:
    rust = ("pub struct V(u64);\nimpl PartialEq for V {\n    fn eq(&self, o: &V) -> bool { self.0 == o.0 }\n}\n"
            "pub fn same(a: V, b: V) -> bool { a == b }\n")
    rust_tests = "use demo::*;\n#[test]\nfn compares() {\n    assert!(same(V(1), V(1)));\n}\n"
    python = "class Box:\n    def __init__(self, n):\n        self.n = n\n\n\ndef boxed(n):\n    return Box(n)\n"
    python_tests = "from box import boxed\n\n\ndef test_boxed():\n    assert boxed(2).n == 2\n"
    index = CodeIndex.build({"src/lib.rs": rust, "box.py": python},
                            {"tests/it.rs": rust_tests, "tests/test_box.py": python_tests})
    compares, boxed = (index.test_function(t) for t in ("it-test::compares", "tests/test_box.py::test_boxed"))
    assert compares is not None and boxed is not None
    eq = {f.key for f in index.functions if f.short == "eq" and not f.test}
    assert eq and index.distance(compares, eq) == 2  # compares -> same -> `==` -> eq
    assert index.distance(boxed, {"box.py::Box.__init__"}) == 2  # test_boxed -> boxed -> Box(...) -> __init__
