"""What the grader's guard costs a graded Python run (envs/testrun/guard_plugin.py: the sitecustomize, the
`-p` plug-in, the audit hook on every event): the same pytest run of a small project (FILES test modules, one
product module listed as the agent's), with and without the guard, in alternating rounds, so that the machine's
load hits both alike. Runs on the host: the project is this bench's own, written to a scratch folder.

    uv run python bench/guard_overhead.py [--rounds 15] [--files 20]

Prints one JSON line: plain_s_median, guarded_s_median, ratio (target <= 1.10), and the same for a product
that starts a process at each call (spawn_*: each process the agent's code starts is confined).
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

from envs.testrun.grading import guard_files  # noqa: E402
from envs.testrun.pytest_runner import GUARD_PLUGIN  # noqa: E402


PRODUCTS = {
    "": "import logging\n\n\ndef value():\n    logging.getLogger(__name__)\n    return 1\n",
    "spawn_": "import subprocess\n\n\ndef value():\n    return 1 + subprocess.run(['true']).returncode\n",
}
"""The product by figure prefix: one that logs, and one that starts a process at each call (the guard confines
every process the agent's code starts: envs/testrun/guard_handoffs.py)."""


def project(root: Path, files: int, product: str = PRODUCTS[""]) -> tuple[Path, Path]:
    """(workdir, run folder): a package, `files` test modules importing it, the guard with taken.txt."""
    work, run = root / "work", root / "run"
    (work / "calc").mkdir(parents=True)
    (work / "tests").mkdir()
    run.mkdir()
    (work / "calc" / "__init__.py").write_text("")
    (work / "calc" / "core.py").write_text(product)
    for i in range(files):
        (work / "tests" / f"test_{i}.py").write_text(
            "import json\n\nfrom calc import core\n\n\ndef test_value():\n    assert json.loads(json.dumps(core.value())) == 1\n")
    for name, text in guard_files().items():
        (run / Path(name).name).write_text(text)
    (run / "taken.txt").write_text(f"{work / 'calc' / 'core.py'}\n")
    return work, run


def one_run(work: Path, run: Path, guarded: bool) -> float:
    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": f"{run}:{work}" if guarded else str(work)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               *(["-p", GUARD_PLUGIN] if guarded else []), "tests"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"the {'guarded' if guarded else 'plain'} run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    figures: dict[str, float] = {"rounds": args.rounds, "files": args.files}
    with tempfile.TemporaryDirectory() as scratch:
        projects = {prefix: project(Path(scratch) / (prefix or "plain"), args.files, text)
                    for prefix, text in PRODUCTS.items()}
        times: dict[tuple[str, bool], list[float]] = {}
        for _ in range(args.rounds):
            for prefix, (work, run) in projects.items():
                for guarded in (False, True):
                    times.setdefault((prefix, guarded), []).append(one_run(work, run, guarded=guarded))
    for prefix in PRODUCTS:
        p, g = statistics.median(times[prefix, False]), statistics.median(times[prefix, True])
        figures.update({f"{prefix}plain_s_median": round(p, 3), f"{prefix}guarded_s_median": round(g, 3),
                        f"{prefix}ratio": round(g / p, 3)})
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
