"""What the grader's guard costs a graded Node run (envs/testrun/node_guard.cjs, loaded into every node process
of the run by NODE_OPTIONS: the frozen assert, the test child's exit, the answer-key check with its async hook on
every async resource the run creates): the same `node --test` run of a small promise-heavy project (FILES test
files, one product module listed as the agent's), with and without the guard, in alternating rounds, so that the
machine's load hits both alike. Runs the host's node; the project is this bench's own, written to a scratch folder.

    uv run python bench/node_guard_overhead.py [--rounds 15] [--files 12] [--promises 2000]

Prints one JSON line last: plain_s_median, guarded_s_median, ratio (target <= 1.15).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs.grading.kit.run import RUN_DIR  # noqa: E402
from envs.testrun.grading import NODE_GUARD, NODE_GUARD_OPTIONS, NODE_GUARD_SOURCE  # noqa: E402

PRODUCT = """'use strict'
const { EventEmitter } = require('events')
async function square (x) { await null; return x * x }
async function sumOfSquares (n) {  // async calls, awaits, Promise.all, .then chains
  let total = 0
  for (let i = 0; i < n; i++) total += await square(i)
  const all = await Promise.all(Array.from({ length: n }, (_, i) => square(i).then((v) => v + 0)))
  return all.reduce((a, b) => a + b, 0) === total ? total : -1
}
function later (value) {  // timers, immediates, ticks, microtasks, an emitter
  return new Promise((resolve) => {
    const e = new EventEmitter()
    e.once('v', (v) => setImmediate(() => process.nextTick(() => queueMicrotask(() => resolve(v)))))
    setTimeout(() => e.emit('v', value), 0)
  })
}
module.exports = { square, sumOfSquares, later }
"""
TEST = """'use strict'
const test = require('node:test')
const assert = require('node:assert')
const { sumOfSquares, later } = require('../lib/calc.js')
for (let t = 0; t < 5; t++) {
  test('sum ' + t, async () => {
    assert.strictEqual(await sumOfSquares(PROMISES), (PROMISES - 1) * PROMISES * (2 * PROMISES - 1) / 6)
    for (let i = 0; i < 20; i++) assert.strictEqual(await later(i), i)
  })
}
"""


def project(root: Path, files: int, promises: int) -> tuple[Path, Path]:
    """(workdir, run folder): a product module, `files` test files using it, the guard with taken.txt."""
    work, run = root / "work", root / "run"
    (work / "lib").mkdir(parents=True)
    (work / "test").mkdir()
    run.mkdir()
    (work / "lib" / "calc.js").write_text(PRODUCT)
    for i in range(files):
        (work / "test" / f"calc_{i}.test.js").write_text(TEST.replace("PROMISES", str(promises // 5)))
    (run / NODE_GUARD).write_text(NODE_GUARD_SOURCE)
    (run / "taken.txt").write_text(f"{work / 'lib' / 'calc.js'}\tlib/calc.js\n")
    return work, run


def one_run(work: Path, run: Path, guarded: bool) -> float:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    command = (NODE_GUARD_OPTIONS.replace(RUN_DIR, str(run)) if guarded else "") + "node --test"
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if done.returncode != 0 or "# fail 0" not in done.stdout:
        sys.exit(f"the {'guarded' if guarded else 'plain'} run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--promises", type=int, default=2000, help="about how many a test awaits, per test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work, run = project(Path(scratch), args.files, args.promises)
        plain, guarded = [], []
        for _ in range(args.rounds):
            plain.append(one_run(work, run, guarded=False))
            guarded.append(one_run(work, run, guarded=True))
    p, g = statistics.median(plain), statistics.median(guarded)
    print(json.dumps({"rounds": args.rounds, "files": args.files, "promises": args.promises,
                      "plain_s_median": round(p, 3), "guarded_s_median": round(g, 3), "ratio": round(g / p, 3)}))


if __name__ == "__main__":
    main()
