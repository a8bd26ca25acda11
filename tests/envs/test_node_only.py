"""Node.js runners running only given test ids (envs/testrun/node_only.py through the Node record's `select`):
jest and vitest by full name and the ids' files, mocha by full title, node:test by the top-level tests that
hold the ids (a real Node run on the host), the others whole; and the grader's command the same way."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess

import pytest

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.grading.kit.verdict import judge
from envs.spec import Deselection
from envs.testrun import PIDS_EVENTS, abilities, run_tests
from envs.testrun.grading import grading_run
from envs.testrun.node_only import MAX_PATTERN, SELECT_ENV, only, select_command, top_level
from envs.testrun.node_select import select
from tests.envs.test_node_select import HostSandbox

PLUGIN_DIR = "/var/tmp/autoinstall-plugins"


def _box(scripts: dict[str, str], *rules: tuple[str, ExecResult | str], files: str = "") -> FakeSandbox:
    return FakeSandbox(rules=[("^cat package.json", json.dumps({"scripts": scripts})),
                              ("^for f in", files), *rules]).start()


def _selected_run(box: FakeSandbox, command: str, ids: list[str], deselected: list[Deselection] | None = None):
    """run_tests of `command` selecting `ids` as the tasks and the runtime do (IdSelection.selecting)."""
    select = abilities("node").select
    assert select is not None
    wrapped = select.selecting(box, command, ids, PLUGIN_DIR)
    return run_tests(box, wrapped, "node", deselected or [], 60)


def _script(box: FakeSandbox) -> str:
    """The script the runner was given (what `sh -c` runs)."""
    command = next(c for c in box.commands() if "sh -c" in c and c != PIDS_EVENTS)
    return shlex.split(command.split("sh -c ", 1)[1].rstrip("; }"))[0]


JEST_ONE_FILE = """PASS lib/numbers.test.js
  ○ skipped stats of a list
  clamp
    ✓ keeps a value inside the bounds (86 ms)
    ○ skipped raises a value below the low bound
Tests:       2 skipped, 1 passed, 3 total
"""


def test_jest_runs_only_the_selected_names_in_the_files_that_hold_them() -> None:
    box = _box({"test": "jest --selectProjects unit"}, ("sh -c", JEST_ONE_FILE))
    run = _selected_run(box, "npm test --ignore-scripts -- --verbose",
                        ["lib/numbers.test.js > clamp > keeps a value inside the bounds"])
    # the file goes right after jest's word: `--selectProjects` takes every value after it
    assert _script(box) == (r"jest '(?:^|/)lib/numbers\.test\.js$' --selectProjects unit "
                            r"-t '^(?:clamp keeps a value inside the bounds)$' --verbose")
    assert {r.test_id: r.outcome for r in run.results}["lib/numbers.test.js > clamp > keeps a value inside the bounds"] \
        == "passed"
    assert run.counts == {"passed": 1, "failed": 0, "error": 0, "skipped": 2}


def test_vitest_files_go_after_its_subcommand_and_a_deselected_name_stays_out() -> None:
    box = _box({"test": "vitest run --coverage"}, ("sh -c", " ✓ src/a.spec.ts > parse > one 1ms\n Tests  1 passed (1)\n"))
    _selected_run(box, "npm test --ignore-scripts -- --reporter=verbose",
                  ["src/a.spec.ts > parse > one", "test/b.spec.ts > Parse > One"],
                  [Deselection(test="src/a.spec.ts > parse > two", reason="network")])
    assert _script(box) == ("vitest run src/a.spec.ts test/b.spec.ts --coverage "
                            "-t '^(?!(?:parse two)$)(?:Parse One|parse one)$' --reporter=verbose")


def test_mocha_selects_by_full_title_and_loads_every_file() -> None:
    box = _box({"test": "mocha test/ --timeout 5000 && eslint ."}, ("sh -c", "  ✓ adds\n\n  1 passing (3ms)\n"))
    _selected_run(box, "npm test", ["math > adds", "math > adds (a|b) [2]"])
    assert _script(box) == r"mocha test/ --timeout 5000 --grep '^(?:math adds|math adds \(a\|b\))$' && eslint ."


def test_ava_runs_only_the_selected_titles_and_keeps_a_deselected_one_out() -> None:
    # checked with ava 6: repeated --match patterns are OR'ed, a `!` one leaves a title out
    box = _box({"test": "xo && ava"}, ("sh -c", "  ✔ browser › chromium - baseUrl option\n  ─\n\n  1 test passed\n"))
    run = _selected_run(box, "npm test --ignore-scripts", ["browser > chromium - baseUrl option", "main > it's 1"],
                        [Deselection(test="browser > firefox - baseUrl option", reason="no firefox build")])
    assert _script(box) == ("xo && ava --match 'chromium - baseUrl option' --match 'it'\"'\"'s 1' "
                            "--match '!firefox - baseUrl option'")
    assert {r.test_id: r.outcome for r in run.results} == {"browser > chromium - baseUrl option": "passed"}


@pytest.mark.parametrize(("script", "why"), [
    ("jest -t fast", "filters by name itself"),
    ("mocha --grep @unit", "filters by name itself"),
    ("ava --match '*fast*'", "filters by name itself"),
    ("tap", "its --grep reaches one level per pattern"),
])
def test_a_runner_that_cannot_select_exactly_runs_the_whole_suite(script: str, why: str) -> None:
    box = _box({"test": script}, ("", "ok 1 - adds\n1..1\n"))
    _selected_run(box, "npm test --ignore-scripts", ["test/a.js > adds"])
    assert not any("sh -c" in c for c in box.commands()), why


def test_a_pattern_too_long_for_one_argument_is_not_given_the_files_alone_narrow_the_run() -> None:
    ids = [f"test/t{i % 3}.test.js > suite > a long test name number {i} " + "x" * 80 for i in range(800)]
    chosen = only("jest", "jest", ids, [])
    assert chosen is not None and chosen.flags == "" and chosen.how == "files"
    assert chosen.files == ["test/t0.test.js", "test/t1.test.js", "test/t2.test.js"]
    assert only("mocha", "mocha", ids, []) is None  # mocha: no file in its ids, so every test runs
    assert len(only("jest", "jest", ids[:100], []).flags) < MAX_PATTERN  # type: ignore[union-attr]


def test_what_narrowed_a_run_is_said() -> None:
    box = _box({"test": "jest"})
    assert select(box, "npm test", [], only=["a.test.js > adds"]).only == "names and files"
    assert select(box, "npm test", [], only=["math > adds"]).only == "names"
    assert select(_box({"test": "node --test"}), "npm test", [], only=["add > one"]).only == "top-level tests"
    assert select(_box({"test": "ava"}), "npm test", [], only=["add"]).only == "names"
    assert select(_box({"test": "tape test/*.js"}), "npm test", [], only=["add"]).only == ""


def test_an_ava_title_that_starts_with_a_bang_is_not_selected_by_a_negation() -> None:
    assert only("ava", "ava", ["!important flag"], []) is None  # `--match '!important flag'` runs all but it
    chosen = only("ava", "ava", ["adds"], ["!important flag"])
    assert chosen is not None and chosen.flags == "--match adds --match '!!important flag'"  # its own negation


def test_ids_without_a_file_select_by_name_alone() -> None:
    chosen = only("jest", "jest", ["math > adds", "src/a.test.js > math > subtracts"], [])
    assert chosen is not None and chosen.files == [] and chosen.how == "names"


def test_the_graders_command_selects_the_same_way() -> None:
    box = _box({"test": "jest"})
    run = grading_run("node", box, "npm test --ignore-scripts -- --verbose", [],
                      ["lib/a.test.js > adds", "lib/a.test.js > subtracts"])
    inner = shlex.split(run.command.split("sh -c ", 1)[1])[0]
    assert inner == r"jest '(?:^|/)lib/a\.test\.js$' -t '^(?:adds|subtracts)$' --verbose"
    whole = grading_run("node", box, "npm test --ignore-scripts -- --verbose", [], [])
    assert "-t " not in whole.command  # no selection: every test


def test_a_command_run_as_it_is_runs_the_whole_suite() -> None:
    wrapped = select_command("cd packages/app && npm test", "/var/tmp/x/select-1.txt", "/var/tmp/x")
    assert wrapped == f"export {SELECT_ENV}=/var/tmp/x/select-1.txt; cd packages/app && npm test"
    done = subprocess.run(["bash", "-c", wrapped.replace("cd packages/app && npm test", "echo ran")],
                          capture_output=True, text=True, check=False)
    assert done.stdout == "ran\n"


def test_node_test_ids_select_their_top_level_tests() -> None:
    assert top_level("add > small numbers") == "add"
    assert top_level("test/a.test.js > add > small numbers [2]") == "add"
    chosen = only("node:test", "node --test", ["add > small numbers", "S > inner > leaf"], ["top > x"])
    assert chosen is not None and chosen.flags == "--test-name-pattern='^(?:S|add)$'"
    assert chosen.left_out == {"top > x"}


NODE_TESTS = """const test = require('node:test'); const {describe, it} = test;
test('add', async (t) => {
  await t.test('small numbers', () => {});
  await t.test('negative numbers', () => {});
});
test('top', () => { throw new Error('not selected, never runs') });
describe('S', () => {
  it('leaf one', () => {});
  describe('inner', () => { it('leaf two', () => {}); it('small numbers', () => {}); });
});
"""


class HostBox(HostSandbox):
    """HostSandbox with the files a selection writes and the runner reads back."""

    def write_file(self, path: str, data: bytes) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def read_file(self, path: str, **_: object) -> bytes:
        with open(path, "rb") as f:
            return f.read()


@pytest.mark.skipif(shutil.which("node") is None and not os.environ.get("CI"),
                    reason="needs node (the host's) for a real node:test run; under CI it fails instead")
def test_real_node_test_runs_the_top_level_tests_that_hold_the_ids_and_no_other(tmp_path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text(NODE_TESTS)
    box = HostBox(str(tmp_path))
    select = abilities("node").select
    assert select is not None
    wrapped = select.selecting(box, "npm test --ignore-scripts", ["add > small numbers", "S > inner > leaf two"],  # type: ignore[arg-type]
                               str(tmp_path / "plugins"))
    run = run_tests(box, wrapped, "node", [], 120)  # type: ignore[arg-type]
    outcomes = {r.test_id: r.outcome for r in run.results}
    # a subtest runs only under its top-level test (Node 20 matches each test's own name): all of it runs
    assert {t for t, o in outcomes.items() if o == "passed"} == {
        "add > small numbers", "add > negative numbers", "S > leaf one", "S > inner > leaf two",
        "S > inner > small numbers"}, outcomes
    assert outcomes["top"] == "skipped" and run.counts["failed"] == 0 and run.exit_code == 0


JEST_NOTHING_MATCHED = """Test Suites: 2 skipped, 0 of 2 total
Tests:       12 skipped, 12 total
Snapshots:   0 total
Ran all test suites matching /(?:^|\\/)lib\\/numbers\\.test\\.js$/i with tests matching "^(?:clamp keeps a value)$".
"""
JEST_RENAMED = """PASS lib/numbers.test.js
  clamp
    ○ skipped keeps a value (renamed)
    ✓ lowers a value (3 ms)
Tests:       1 skipped, 1 passed, 2 total
"""


@pytest.mark.parametrize("output", [JEST_NOTHING_MATCHED, JEST_RENAMED], ids=["nothing matched", "renamed"])
def test_a_selection_that_matches_nothing_of_a_selected_test_pays_nothing(output: str) -> None:
    """The grader's kit: a selected id the run does not report (its pattern matched nothing, or the test was
    renamed out of its reach), or reports skipped, is not a pass, though the runner exited 0 with no failure."""
    selected = ["lib/numbers.test.js > clamp > keeps a value", "lib/numbers.test.js > clamp > lowers a value"]
    verdict = judge("node", output, "", 0, False, selected)
    assert verdict.reward == 0.0 and not verdict.problems
    assert verdict.tests["lib/numbers.test.js > clamp > keeps a value"] == "missing"
