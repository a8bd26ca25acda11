"""Node.js test scripts (npm test and the like): per-test results read from the runner's own output (TAP
from node:test, node-tap and tape; the marked lines of mocha, jest, vitest, ava and node:test's spec
reporter: see node_output.py), else counts from its summary line (uvu, dots reporters) and its exit status.
Ids are `file > suite > test` as far as the output names them. Deselected tests are left out by the runner where
it can (node_select.py); `collect` counts a suite without running it (node_collect.py)."""
from __future__ import annotations

import posixpath

from envs.base import Sandbox
from envs.folder import InFolder, split_folder
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.junit import count
from envs.testrun.node_collect import collect
from envs.testrun.node_only import selected_ids
from envs.testrun.node_output import SEP, clean, looks_like_tap, parse_node_output, parse_node_summary
from envs.testrun.node_select import ENV, Selection, select


def _deselect(results: list[TestResult], deselected: list[Deselection], selection: Selection) -> list[TestResult]:
    """Results of deselected tests (by id, or a file/suite id and everything under it) recorded as skipped,
    with the reason: those the runner reports as skipped by its name filter, and those it cannot leave out
    (node:test, tap...: they ran, and the message says so)."""
    reasons = {d.test: d.reason for d in deselected}
    out = []
    for result in results:
        key = next((t for t in reasons if result.test_id == t or result.test_id.startswith(t + SEP)), None)
        if key is None:
            out.append(result)
            continue
        how = "deselected" if key in selection.left_out else \
            f"deselected, ran anyway ({selection.runner or 'this runner'} cannot leave it out here)"
        out.append(result.model_copy(update={"outcome": "skipped", "message": f"{how}: {reasons[key]}"}))
    return out


def _ran(counts: dict[str, int]) -> int:
    return sum(counts.get(k, 0) for k in ("passed", "failed", "error"))


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run a Node.js test command with the deselected tests left out (node_select.py) and read its results;
    a non-zero exit that no failing test explains (a crash, a lint or size check after the tests) is one
    error named after the command. `cd FOLDER && ...` (a monorepo's package) runs all of it in that folder.
    A command node_only.select_command wrapped runs only the ids it lists, where the runner can."""
    only, command = selected_ids(sandbox, command)
    folder, inner = split_folder(command)
    if folder:
        sandbox = InFolder(sandbox, folder)  # type: ignore[assignment]
    selection = select(sandbox, inner, deselected, only=only)
    try:
        result = sandbox.exec(selection.command, timeout=timeout_s, env=ENV | (env or {}))
    finally:
        if selection.hidden:
            sandbox.exec(selection.restore, timeout=60)
    results = _deselect(parse_node_output(result.output), deselected, selection)
    counts = count(results)
    summary = parse_node_summary(result.output)
    anyway = sum(r.outcome == "skipped" and r.message.startswith("deselected, ran anyway") for r in results)
    if _ran(summary) > _ran(counts) + anyway and not looks_like_tap(result.output):  # TAP counts suites
        # The runner names only some tests (vitest's default reporter: those of failing files): per-test
        # results would judge the suite on those alone, so it is judged on the runner's own counts. (Tests
        # only skipped go unnamed too: vitest's verbose reporter leaves out those its -t filter skipped. A
        # deselected test that ran anyway is in the runner's count, not in ours.)
        results, counts = [], summary
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=clean(result.output)[-4000:], results=results, counts=counts)
    ran_anyway = any(d.test not in selection.left_out for d in deselected)  # and may have failed the exit
    explained = counts.get("failed", 0) or counts.get("error", 0) or ran_anyway
    if result.exit_code != 0 and not explained and not result.timed_out:
        tail = clean(result.output).strip().splitlines()[-3:]
        error = TestResult(test_id=f"<{command}>", outcome="error",
                           message=f"exit {result.exit_code} with no failing test: " + " | ".join(tail)[-500:])
        run.results = [*results, error] if results else []
        run.counts = count(run.results) if results else counts | {"error": counts.get("error", 0) + 1}
    run.collection_ok = run.ran > 0 or result.exit_code == 0
    return run


NPM_CACHES = ('c=$(npm config get cache) && l=$(npm config get logs-dir) && [ -n "$c" ] && '
              '{ { [ "$l" != null ] && [ -n "$l" ]; } || l="$c/_logs"; } && '
              'echo "$l" && echo "$c/_update-notifier-last-checked"')
VITEST_CACHES = ("node_modules/.vite/vitest", "node_modules/.vitest")
"""vitest's results cache (vitest 1 and later, under vite's cacheDir; vitest 0.x), in the folder it runs in."""


def neutral_caches(command: str) -> str:
    """npm's debug logs and its update notifier's mark, where `npm config` says they are: npm writes a log on every
    command (and removes the oldest past logs-max), and the mark's time only decides whether npm looks for a newer
    npm (never here: the runs set npm_config_update_notifier=false, with the network off). No run reads either to
    compute anything it reports."""
    return NPM_CACHES


def content_keyed(path: str) -> bool:
    """True: npm's logs and mark are never read by a run, so no file of the checkout can make them stale."""
    return True


def reset_caches(command: str) -> str:
    """vitest's results cache: each test file's last duration and whether it failed, by which the next run orders
    its files (failed ones first, then the slowest), so a run after another validation's could order, and report,
    differently. Put back as the image had it before a container is reused, every validation sees what a fresh
    container, and the grader, see. (jest's cache is under TMPDIR, which each validation starts empty.)"""
    folder, _ = split_folder(command)
    root = posixpath.join("$PWD", folder) if folder else "$PWD"
    return " && ".join(f'echo "{root}/{path}"' for path in VITEST_CACHES)


__all__ = ["collect", "parse_node_output", "parse_node_summary", "run"]
