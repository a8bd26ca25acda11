"""Counting a Node.js suite without running its tests: every test reported and none run, by the runner's
own means, through the test script (node_select.py gives the runner the flags).

- mocha (9+): `--dry-run`, the deselected tests left out by `--grep --invert`: the count is exact;
- jest, vitest, node:test: a name pattern no test matches (`-t`, `--test-name-pattern`): each reports every
  test as skipped, runs no test body and no hook; deselected files are hidden as in a run, deselected tests
  subtracted (by id where the runner names the skipped tests, else one per id: jest and vitest do not name
  them, and they leave a name out in every file, so a name repeated across files is counted once);
- a script that runs its runner through a wrapper (`ts-scripts test`, a shell script): the one countable runner
  the package depends on, with its bin installed, is counted directly (`vitest run`, `jest`, `mocha`), noted;
- tap, ava, uvu, tape, jasmine, or a script no runner can be found for: no count, saying why.
"""
from __future__ import annotations

import json
import shlex

from envs.base import Sandbox
from envs.folder import InFolder, split_folder
from envs.spec import Deselection
from envs.testrun.node_output import SEP, clean, parse_node_output, parse_node_summary
from envs.testrun.node_select import ENV, NEVER, select, test_script

COUNT_FLAGS = {"mocha": "--dry-run", "jest": f"-t {shlex.quote(NEVER)}", "vitest": f"-t {shlex.quote(NEVER)}",
               "node:test": f"--test-name-pattern={shlex.quote(NEVER)}"}
"""What makes each runner report its tests without running them."""
DIRECT = {"vitest": "vitest run", "jest": "jest", "mocha": "mocha"}
"""How a countable runner is started when the test script wraps it (run mode, its own configuration)."""


def _under(test_id: str, ids: set[str]) -> bool:
    return test_id in ids or any(test_id.startswith(t + SEP) for t in ids)


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """How many tests the test script's runner reports with `deselected` left out, none of them run (in the
    folder of a `cd FOLDER && ...` command)."""
    folder, command = split_folder(command)
    if folder:
        sandbox = InFolder(sandbox, folder)  # type: ignore[assignment]
    script = test_script(sandbox, command)
    runner, via = script.runner, ""
    if runner is None and (wrapped := _wrapped_runner(sandbox)):
        runner, via, command = wrapped, script.text, DIRECT[wrapped]
    if runner not in COUNT_FLAGS:
        return None, f"the test script's runner ({runner or 'none known'}) cannot list its tests without running them"
    count, note = _count(sandbox, command, runner, deselected, timeout_s, env)
    if via and count is not None:
        note = f"counted by running {DIRECT[runner]} directly (the test script `{via[:80]}` starts it)"
    return count, note


def _wrapped_runner(sandbox: Sandbox) -> str | None:
    """The one countable runner the package depends on, its bin installed: what a wrapper script starts."""
    result = sandbox.exec("cat package.json", timeout=60)
    try:
        manifest = json.loads(result.stdout) if result.ok else {}
    except ValueError:
        return None
    deps: set[str] = set()
    for key in ("devDependencies", "dependencies"):
        if isinstance(section := manifest.get(key) if isinstance(manifest, dict) else None, dict):
            deps |= set(section)
    found = [r for r in DIRECT if r in deps]
    if len(found) != 1 or not sandbox.exec(f"test -x node_modules/.bin/{found[0]}", timeout=30).ok:
        return None
    return found[0]


def _count(sandbox: Sandbox, command: str, runner: str, deselected: list[Deselection], timeout_s: float,
           env: dict[str, str] | None) -> tuple[int | None, str]:
    mocha = runner == "mocha"
    selection = select(sandbox, command, deselected, COUNT_FLAGS[runner], by_name=mocha)
    if not selection.flagged:
        return None, f"the test script cannot be given {runner}'s flags (yarn's Plug'n'Play: no node_modules/.bin)"
    try:
        result = sandbox.exec(selection.command, timeout=timeout_s, env=ENV | (env or {}))
    finally:
        if selection.hidden:
            sandbox.exec(selection.restore, timeout=60)
    results = parse_node_output(result.output)
    total = sum(parse_node_summary(result.output).values())
    if not results and not total and result.ok:
        return 0, ""  # mocha's `0 passing`, node:test's `# tests 0` (jest and vitest exit 1 on no test)
    if not results and not total:
        tail = clean(result.output).strip().splitlines()[-1:] or ["(no output)"]
        return None, f"{runner} reported no test when counting (exit {result.exit_code}): {tail[0][:200]}"
    if mocha:
        return max(total, len(results)), ""
    tests = {d.test for d in deselected} - set(selection.hidden)
    if results:
        return sum(1 for r in results if not _under(r.test_id, tests)), ""
    return max(0, total - len(tests)), ""
