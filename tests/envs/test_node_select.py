"""Node.js deselection made real (the runner's name filter, files moved aside) and the Node collector
(mocha's dry run; jest, vitest and node:test with every test skipped by a name no test has)."""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess

import pytest

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.spec import Deselection
from envs.testrun import PIDS_EVENTS, collect_count, collects, run_tests
from envs.testrun.node_select import HIDDEN_SUFFIX, find_runner, full_name, name_flags


def _box(scripts: dict[str, str], *rules: tuple[str, ExecResult | str], files: str = "") -> FakeSandbox:
    return FakeSandbox(rules=[("^cat package.json", json.dumps({"scripts": scripts})),
                              ("^for f in", files), *rules]).start()


def _ran(box: FakeSandbox) -> list[str]:
    """The commands the runner gave the sandbox (not the probe of its process limit around the run)."""
    return [c for c in box.commands() if c != PIDS_EVENTS]


def _deselect(*ids: str) -> list[Deselection]:
    return [Deselection(test=i, reason="needs the internet") for i in ids]


def test_the_runner_and_where_its_flags_go_are_found_in_the_script() -> None:
    script = "mocha test/ --timeout 5000 && eslint ."
    runner, at = find_runner(script)
    assert (runner, script[:at]) == ("mocha", "mocha test/ --timeout 5000")
    script = "c8 --reporter=lcov node --test test/"
    runner, at = find_runner(script)
    assert (runner, script[:at]) == ("node:test", "c8 --reporter=lcov node --test")
    assert find_runner("tsc -p . && ./node_modules/.bin/vitest run")[0] == "vitest"
    assert find_runner("nyc _mocha 'test/**/*.js' | tee out.txt") == ("mocha", len("nyc _mocha 'test/**/*.js'"))
    assert find_runner("eslint . && prettier --check .") == (None, -1)


def test_full_names_and_each_runners_name_filter() -> None:
    assert full_name("src/a.test.ts > parse > keeps (a|b) [2]") == "parse keeps (a|b)"
    assert full_name("outer > inner > one") == "outer inner one"
    assert name_flags("jest", ["parse keeps (a|b)"]) == shlex.quote(r"-t") + " " + shlex.quote(
        r"^(?!(?:parse keeps \(a\|b\))$)")
    assert name_flags("mocha", ["b", "a.b"]) == "--grep " + shlex.quote(r"^(?:a\.b|b)$") + " --invert"
    assert name_flags("node:test", ["a"]) == "" and name_flags("ava", ["a", "a"]) == "--match '!a'"
    assert name_flags("tap", ["a"]) == "--grep '^(?:a)$' --invert"


TAP_FILTERED = """TAP version 13
# Subtest: test/cmp.js
    ok 1 - invalid cmp usage # SKIP filter out: /^(?:invalid cmp usage)$/
    # Subtest: comparison tests
        ok 1 - 1.0.0 0.9.0
        1..1
    ok 2 - comparison tests
    1..2
ok 1 - test/cmp.js
1..1
"""


def test_node_tap_leaves_out_a_files_top_level_subtest_and_runs_a_nested_one_saying_so() -> None:
    box = _box({"test": "tap"}, ("sh -c", TAP_FILTERED))
    deselected = _deselect("test/cmp.js > invalid cmp usage", "test/cmp.js > comparison tests > 1.0.0 0.9.0")
    run = run_tests(box, "npm test --ignore-scripts -- --reporter=tap", "node", deselected, 60)
    assert shlex.split(box.commands()[-1].split("sh -c ", 1)[1])[0] == \
        "tap --grep '^(?:invalid cmp usage)$' --invert --reporter=tap"
    messages = {r.test_id: r.message for r in run.results}
    assert messages["test/cmp.js > invalid cmp usage"] == "deselected: needs the internet"
    assert messages["test/cmp.js > comparison tests > 1.0.0 0.9.0"].startswith("deselected, ran anyway (tap")


JEST_OUT = """PASS src/a.test.js
  math
    ✓ adds (3 ms)
    ○ skipped adds (x)
Tests:       1 skipped, 1 passed, 2 total
"""


def test_jest_leaves_a_test_out_by_name_and_a_file_is_moved_aside_for_the_run() -> None:
    box = _box({"test": "jest --coverage"}, ("sh -c", JEST_OUT), files="test/slow.test.js\n")
    run = run_tests(box, "npm test --ignore-scripts -- --verbose", "node",
                    _deselect("src/a.test.js > math > adds (x)", "test/slow.test.js"), 60)
    command = next(c for c in box.commands() if "sh -c" in c)
    assert command.startswith(f"mv -f -- test/slow.test.js test/slow.test.js{HIDDEN_SUFFIX} && ")
    assert 'PATH="$PWD/node_modules/.bin:$PATH" sh -c ' in command
    inner = shlex.split(command.split("sh -c ", 1)[1].rstrip("; }"))[0]
    assert inner == r"jest --coverage -t '^(?!(?:math adds \(x\))$)' --verbose"
    assert box.commands()[-1] == f"mv -f -- test/slow.test.js{HIDDEN_SUFFIX} test/slow.test.js"
    skipped = next(r for r in run.results if r.outcome == "skipped")
    assert (skipped.test_id, skipped.message) == ("src/a.test.js > math > adds (x)", "deselected: needs the internet")
    assert run.counts == {"passed": 1, "failed": 0, "error": 0, "skipped": 1}


def test_a_file_the_command_names_is_not_moved_aside_the_runner_would_fail_on_it() -> None:
    box = _box({"test": "mocha test/a.test.js test/b.test.js"}, ("sh -c", "  1 passing\n"),
               files="test/a.test.js\n")
    run_tests(box, "npm test --ignore-scripts", "node", _deselect("test/a.test.js"), 60)
    assert not any("mv " in c for c in box.commands())


def test_a_runner_that_cannot_leave_one_test_out_runs_it_and_says_so() -> None:
    tap = "TAP version 13\nok 1 - fetches\nok 2 - parses\n1..2\n"
    box = _box({"test": "node --test"}, ("npm test", tap))
    run = run_tests(box, "npm test --ignore-scripts", "node", _deselect("fetches"), 60)
    assert _ran(box)[-1] == "npm test --ignore-scripts"  # nothing to give the runner: run as it is
    fetched = next(r for r in run.results if r.test_id == "fetches")
    assert fetched.outcome == "skipped" and fetched.message.startswith("deselected, ran anyway (node:test")
    nothing = _box({"test": "jest"}, ("npm test", JEST_OUT))
    run_tests(nothing, "npm test --ignore-scripts", "node", [], 60)
    assert _ran(nothing) == ["npm test --ignore-scripts"]  # nothing deselected: not even package.json read
    nested = _box({"test": "npm run test:unit", "test:unit": "mocha test/unit"}, ("sh -c", "  1 passing\n"))
    run_tests(nested, "npm test --ignore-scripts", "node", _deselect("fetches"), 60)
    assert shlex.split(_ran(nested)[-1].split("sh -c ", 1)[1])[0] == \
        "mocha test/unit --grep '^(?:fetches)$' --invert"


def test_node_collects_mocha_by_its_dry_run_and_jest_by_skipping_every_test() -> None:
    assert collects("node")
    mocha = _box({"test": "mocha test/"}, ("--dry-run", "  parse\n    ✔ a\n    ✔ b\n\n  2 passing (1ms)\n"))
    assert collect_count(mocha, "npm test --ignore-scripts", _deselect("parse > c"), 60, None, "node") == (2, "")
    inner = shlex.split(mocha.commands()[-1].split("sh -c ", 1)[1])[0]
    assert inner == "mocha test/ --grep '^(?:parse c)$' --invert --dry-run"
    jest = _box({"test": "jest"}, ("sh -c", "Tests:       8 skipped, 8 total\n"))
    assert collect_count(jest, "npm test", [], 60, None, "node") == (8, "")
    assert collect_count(jest, "npm test", _deselect("a.test.js > x > y"), 60, None, "node") == (7, "")
    assert shlex.split(jest.commands()[-1].split("sh -c ", 1)[1])[0] == r"jest -t '^\b\B$'"


def test_node_collector_says_why_it_has_no_count() -> None:
    tap = _box({"test": "tap test/*.js"})
    count, note = collect_count(tap, "npm test", [], 60, None, "node")
    assert count is None and "tap" in note and "without running" in note
    pnp = _box({"test": "jest"}, ("test -e .pnp.cjs", ExecResult(exit_code=0)))
    count, note = collect_count(pnp, "yarn run test", [], 60, None, "node")
    assert count is None and "Plug'n'Play" in note
    empty = _box({"test": "mocha"}, ("--dry-run", "\n  0 passing (0ms)\n"))
    assert collect_count(empty, "npm test", [], 60, None, "node") == (0, "")  # it ran, and has no test
    broken = _box({"test": "mocha"}, ("--dry-run", ExecResult(exit_code=1, stderr="error: unknown option")))
    count, note = collect_count(broken, "npm test", [], 60, None, "node")
    assert count is None and "unknown option" in note



def test_a_wrapped_runner_is_counted_directly_with_a_note() -> None:
    manifest = {"scripts": {"test": "ts-scripts test && npm run size"}, "devDependencies": {"vitest": "^3"}}
    box = FakeSandbox(rules=[("^cat package.json", json.dumps(manifest)), ("^test -x node_modules/.bin/vitest", ""),
                             ("sh -c", " Test Files  2 skipped (2)\n      Tests  477 skipped (477)\n")]).start()
    count, note = collect_count(box, "npm test", [], 60, None, "node")
    assert count == 477 and "vitest run directly" in note and "ts-scripts test" in note
    assert shlex.split(box.commands()[-1].split("sh -c ", 1)[1])[0] == r"vitest run -t '^\b\B$'"
    two = {"scripts": {"test": "./run-tests.sh"}, "devDependencies": {"vitest": "^3", "jest": "^29"}}
    ambiguous = FakeSandbox(rules=[("^cat package.json", json.dumps(two))]).start()
    count, note = collect_count(ambiguous, "npm test", [], 60, None, "node")
    assert count is None and "none known" in note  # two runners: which one the wrapper starts is unknown
    absent = FakeSandbox(rules=[("^cat package.json", json.dumps(manifest)),
                                ("^test -x", ExecResult(exit_code=1))]).start()
    assert collect_count(absent, "npm test", [], 60, None, "node")[0] is None  # its bin is not installed


class HostSandbox:
    """The few Sandbox calls the Node runner makes, on the host, in one folder."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    def exec(self, cmd: str, timeout: float | None = None, env: dict[str, str] | None = None,
             cwd: str | None = None, **_: object) -> ExecResult:
        import os  # only this test double needs the host's environment
        where = os.path.join(self.cwd, cwd or ".")
        done = subprocess.run(cmd, shell=True, cwd=where, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})
        return ExecResult(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr)


NODE_SUITE = """const {describe, it, test} = require('node:test');
describe('outer', () => { it('one', () => {}); it('two', () => {}); });
test('top', () => {});
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (the host's) for a real node:test run")
@pytest.mark.slow
def test_real_node_test_hides_a_deselected_file_and_counts_without_running(tmp_path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    (tmp_path / "test").mkdir()
    for name in ("a.test.js", "b.test.js"):
        (tmp_path / "test" / name).write_text(NODE_SUITE)
    (tmp_path / "test" / "b.test.js").write_text(NODE_SUITE + "test('boom', () => { throw new Error('x') });\n")
    box = HostSandbox(str(tmp_path))
    deselected = _deselect("test/b.test.js", "outer > one")
    run = run_tests(box, "npm test --ignore-scripts", "node", deselected, 120)  # type: ignore[arg-type]
    assert run.counts["failed"] == 0 and run.counts["passed"] == 2 and run.counts["skipped"] == 1
    assert (tmp_path / "test" / "b.test.js").is_file() and not list(tmp_path.rglob(f"*{HIDDEN_SUFFIX}"))
    assert collect_count(box, "npm test --ignore-scripts", [], 120, None, "node") == (7, "")  # type: ignore[arg-type]
    assert collect_count(box, "npm test --ignore-scripts", deselected, 120, None, "node") == (2, "")  # type: ignore[arg-type]


VITEST_FILTERED = """ ✓ src/a.spec.ts > parse > one 1ms
 ✓ src/a.spec.ts > parse > two 0ms

 Test Files  1 passed (1)
      Tests  2 passed | 1 skipped (3)
"""


def test_vitest_results_stay_per_test_when_its_filter_skips_the_deselected_unnamed() -> None:
    box = _box({"test": "vitest run"}, ("sh -c", VITEST_FILTERED))
    run = run_tests(box, "npm test --ignore-scripts -- --reporter=verbose", "node",
                    _deselect("src/a.spec.ts > parse > three"), 60)
    assert [r.test_id for r in run.results] == ["src/a.spec.ts > parse > one", "src/a.spec.ts > parse > two"]
    assert run.counts["passed"] == 2 and run.exit_code == 0
    inner = shlex.split(box.commands()[-1].split("sh -c ", 1)[1])[0]
    assert inner == "vitest run -t '^(?!(?:parse three)$)' --reporter=verbose"



@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (the host's) for a real node:test run")
def test_a_package_in_a_folder_is_run_and_counted_there(tmp_path) -> None:
    app = tmp_path / "packages" / "app"  # a monorepo's package: nested plans run `cd FOLDER && ...`
    (app / "test").mkdir(parents=True)
    (app / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    (app / "test" / "a.test.js").write_text(NODE_SUITE)
    (app / "test" / "b.test.js").write_text("require('node:test')('boom', () => { throw new Error('x') });\n")
    box = HostSandbox(str(tmp_path))
    command = "cd packages/app && npm test --ignore-scripts"
    run = run_tests(box, command, "node", _deselect("test/b.test.js"), 120)  # type: ignore[arg-type]
    assert run.counts["failed"] == 0 and run.counts["passed"] == 3  # the file was hidden in the folder
    assert (app / "test" / "b.test.js").is_file() and not list(tmp_path.rglob(f"*{HIDDEN_SUFFIX}"))
    assert collect_count(box, command, [], 120, None, "node") == (4, "")  # type: ignore[arg-type]


AVA_OUT = ("\n  ✔ main › a plain request\n  ✔ browser › chromium - baseUrl option\n  ✔ main › a * b\n  ─\n\n"
           "  3 tests passed\n")


def test_ava_leaves_a_test_out_by_its_title_and_runs_a_wildcard_title_saying_so() -> None:
    # ava's --match '!title' leaves a test out (checked with ava 6: `--match '!reaches the internet'` runs the
    # others; the match ignores case); `*` is its wildcard, so such a title is not given to it
    box = _box({"test": "xo && npm run build && ava"}, ("sh -c", AVA_OUT))
    run = run_tests(box, "npm test --ignore-scripts", "node",
                    _deselect("browser > firefox - baseUrl option", "browser > webkit - it's done", "main > a * b"), 60)
    inner = shlex.split(_ran(box)[-1].split("sh -c ", 1)[1])[0]
    assert inner == "xo && npm run build && ava --match '!firefox - baseUrl option' --match '!webkit - it'\"'\"'s done'"
    outcomes = {r.test_id: (r.outcome, r.message) for r in run.results}
    assert "browser > firefox - baseUrl option" not in outcomes  # not run, so not reported
    assert outcomes["main > a * b"][0] == "skipped" and outcomes["main > a * b"][1].startswith(
        "deselected, ran anyway (ava"), outcomes
    assert run.counts["passed"] == 2
