"""Difficulty and combination without Docker: the call graph over the fixture's sources and tests, the
features and bucket of a task, how validated bugs are grouped into combined tasks, and the task filter."""
from __future__ import annotations

from pathlib import Path

from autoinstall.tasks.candidate import Candidate, mutation_candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.combine import Kept, Pool, combined_candidate
from autoinstall.tasks.difficulty import bucket, features
from autoinstall.tasks.validate import Verdict
from envs.task import MutationInfo, StatementCheck, Statements, Task, TaskFeatures, TaskFilter

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
