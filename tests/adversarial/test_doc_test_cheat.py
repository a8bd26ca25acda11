"""The doc-test cheat end to end: tests that live in a product file's documentation (a Rust `///` code block, a
Python docstring's `>>>` example) are the task's tests in a file the agent may change, so an agent that edits
the examples instead of fixing the code passes them. The grader keeps the start's documentation wherever it
holds doc tests, with the agent's code around it (envs/grading/kit/doc_tests.py), so the cheat is paid 0;
scored in the agent's own container on the task's tests, where nothing restores them, it is paid 1.0: proof
that the cheat works and that the rule is what stops it. A fix that moves the doc tests down a line (rustdoc
names them by line) is still paid in full.

Rust: the catalogue's rust_crate task (a mutation of `at_most`, which `caps` and its doc test check) narrowed to
its doc test; Python: a mutation task of tests/fixtures/repos/python_doctests, whose tests are all doctests.
Both made once per run (tests/builds.py) and played on the runtime as tests/adversarial/surfaces.py plays the
other cheats. Needs Docker; fails under CI when it is missing (the `builds` fixture).
"""
from __future__ import annotations

import pytest

from envs.task import Task
from tests.adversarial.surfaces import FIXTURES, GOLD, NOP, LanguageTask, runtime_rewards
from tests.builds import DOCTEST_FIXTURE, Builds

pytestmark = [pytest.mark.slow, pytest.mark.docker]

EDIT_RUST_DOCS = 'sed -i -E "/^\\s*\\/\\/[\\/!]/ s/assert(_eq|_ne)?!\\(/let _ = (/g" "$SRC"\n'
"""bash: every assertion of SRC's doc comments made a `let _ = (...)`: each doc test compiles and passes."""
EDIT_PYTHON_DOCS = '''python3 - "$SRC" <<'PY'
import re, sys

src = sys.argv[1]
out, expected = [], False
for line in open(src).read().splitlines():
    example = re.match(r"(\\s*)>>> (.*)$", line)
    if example:
        out.append(f"{example.group(1)}>>> _ = {example.group(2)}")
        expected = True
    elif expected and line.strip() and not line.strip().startswith('"""'):
        continue  # the example's expected output, dropped: `_ = ...` prints nothing
    else:
        expected = False
        out.append(line)
open(src, "w").write("\\n".join(out) + "\\n")
PY
'''
"""bash: every doctest example of SRC made an assignment and its expected output dropped: each one passes."""
CHEAT = "the doc tests edited to pass"
MOVED = "the fix, its doc tests moved down a line"


def doc_tests_only(task: Task) -> Task:
    """The task graded on its failing doc tests (and PASS_TO_PASS) only: what a task of a function that only its
    documentation tests looks like."""
    docs = [t for t in task.FAIL_TO_PASS if "-doc::" in t]
    assert docs, task.FAIL_TO_PASS
    assert task.grading is not None
    grading = task.grading.model_copy(update={"selected": [*docs, *task.PASS_TO_PASS]})
    return task.model_copy(update={"FAIL_TO_PASS": docs, "grading": grading})


def built(builds: Builds, fixture: str, language: str) -> LanguageTask:
    made = builds.task(fixture)
    assert made.env.spec.status == "verified", made.env.spec.failure
    assert made.report.tasks, (made.report.candidates, made.report.dropped)
    return LanguageTask(language, made.env.catalog, made.report.tasks[0])


def test_rust_doc_tests_edited_instead_of_the_fix_are_paid_nothing(builds: Builds) -> None:
    lt = built(builds, FIXTURES["rust"], "rust")
    lt = LanguageTask("rust", lt.catalog, doc_tests_only(lt.task))
    plays = {GOLD: 'git apply --whitespace=nowarn "$GOLD"\n', NOP: "true\n", CHEAT: EDIT_RUST_DOCS,
             MOVED: 'git apply --whitespace=nowarn "$GOLD"\nsed -i "1i // the fix moved every line down" "$SRC"\n'}
    naive: dict[str, float] = {}
    rewards = runtime_rewards(lt, plays, naive)
    assert rewards == {GOLD: 1.0, NOP: 0.0, CHEAT: 0.0, MOVED: 1.0}, rewards
    assert {k: naive[k] for k in (GOLD, NOP, CHEAT)} == {GOLD: 1.0, NOP: 0.0, CHEAT: 1.0}, naive


def test_python_doctests_edited_instead_of_the_fix_are_paid_nothing(builds: Builds) -> None:
    lt = built(builds, DOCTEST_FIXTURE, "python")
    assert all(".py::" in t and "/test" not in t for t in lt.task.FAIL_TO_PASS), lt.task.FAIL_TO_PASS  # doctests
    plays = {GOLD: 'git apply --whitespace=nowarn "$GOLD"\n', NOP: "true\n", CHEAT: EDIT_PYTHON_DOCS}
    naive: dict[str, float] = {}
    rewards = runtime_rewards(lt, plays, naive)
    assert rewards == {GOLD: 1.0, NOP: 0.0, CHEAT: 0.0}, rewards
    assert naive == {GOLD: 1.0, NOP: 0.0, CHEAT: 1.0}, naive
