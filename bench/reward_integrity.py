"""Reward integrity: does any grading surface pay an agent that did not fix the bug?

    uv run python bench/reward_integrity.py [--languages python,go,rust,java,node]
                                            [--surfaces runtime,harbor,swebench] [--subset]

Builds the fixture environments (tests/fixtures/repos: tasks_mutable, go_module, rust_crate, java_maven,
node_package), makes one mutation task of each with `tasks make`, then plays the gold patch, no change and
every cheat of tests/adversarial/cheats.py on each surface, as that surface's own client does
(tests/adversarial/surfaces.py): the runtime's `Environment.reward()`, `harbor run` and swebench's
`run_evaluation` (every cheat a diff can hold; with --subset, only those the test suite plays there). Prints the matrix
(one row per case), then one JSON line: cases, cheats_rewarded, gold_failed, nop_rewarded, by_surface and
by_language ({cases, wrong}), naive_cheats_rewarded (the control: the Python cheats, and the other languages'
cheats marked `control`, that scoring in the agent's own container would pay), runtime_grade_s_median (one
`reward()` of a task: a fresh grading container, the agent's change carried over and sorted, the tests run as
the test user) and runtime_run_s_median (one plain run of the task's test command in the agent's container),
and their ratio. Targets: 0 / 0 / 0, ratio <= 1.5.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adversarial import cheats  # noqa: E402
from tests.adversarial.surfaces import GOLD, NOP, LanguageTask, harbor_rewards, make_language_task  # noqa: E402
from tests.adversarial.surfaces import runtime_rewards, swebench_resolved  # noqa: E402

HARBOR = Path.home() / ".local" / "bin" / "harbor"
SWEBENCH = Path.home() / ".cache" / "autoinstall" / "tools" / "swebench" / "bin" / "python"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default=",".join(cheats.LANGUAGES))
    parser.add_argument("--surfaces", default="runtime,harbor,swebench")
    parser.add_argument("--subset", action="store_true",
                        help="on Harbor and SWE-bench, only the cheats the test suite plays there")
    args = parser.parse_args()
    languages = [x for x in args.languages.split(",") if x]
    surfaces = [x for x in args.surfaces.split(",") if x]
    work = Path(tempfile.mkdtemp(prefix="bench-reward-"))
    tasks: list[LanguageTask] = []
    for language in languages:
        print(f"making the {language} task ...", file=sys.stderr, flush=True)
        tasks.append(make_language_task(language, work / language))
    rows: list[tuple[str, str, str, float]] = []  # surface, language, play, reward
    naive: dict[str, float] = {}  # "language: play" -> what scoring in the agent's own container pays
    timings: dict[str, list[float]] = {}
    if "runtime" in surfaces:
        for lt in tasks:
            controlled = {c.name for c in cheats.for_language(lt.language) if c.control}
            mine: dict[str, float] = {}
            got = runtime_rewards(lt, lt.plays(), mine, timings,
                                  control=None if lt.language == "python" else controlled)
            naive.update({f"{lt.language}: {play}": v for play, v in mine.items() if play not in (GOLD, NOP)})
            rows += [("runtime", lt.language, play, value) for play, value in got.items()]
    if "harbor" in surfaces:
        got2 = harbor_rewards(str(HARBOR), tasks, work / "harbor", every_cheat=not args.subset)
        rows += [("harbor", language, play, value) for (language, play), value in got2.items()]
    if "swebench" in surfaces:
        got3 = swebench_resolved(str(SWEBENCH), tasks, work / "swebench", every_cheat=not args.subset)
        rows += [("swebench", language, play, value) for (language, play), value in got3.items()]
    print(f"{'surface':9} {'language':8} {'reward':6} {'expected':8} play")
    for surface, language, play, value in rows:
        want = 1.0 if play == GOLD else 0.0
        print(f"{surface:9} {language:8} {value:<6} {want:<8} {play}{'   <-- WRONG' if value != want else ''}")
    by_surface: dict[str, dict[str, int]] = defaultdict(lambda: {"cases": 0, "wrong": 0})
    by_language: dict[str, dict[str, int]] = defaultdict(lambda: {"cases": 0, "wrong": 0})
    for surface, language, play, value in rows:
        wrong = int(value != (1.0 if play == GOLD else 0.0))
        for table, key in ((by_surface, surface), (by_language, language)):
            table[key]["cases"] += 1
            table[key]["wrong"] += wrong
    grade = statistics.median(timings["grade_s"]) if timings.get("grade_s") else None
    plain = statistics.median(timings["run_s"]) if timings.get("run_s") else None
    print(json.dumps({
        "cases": len(rows),
        "cheats_rewarded": sum(1 for _, _, play, v in rows if play not in (GOLD, NOP) and v > 0),
        "gold_failed": sum(1 for _, _, play, v in rows if play == GOLD and v < 1),
        "nop_rewarded": sum(1 for _, _, play, v in rows if play == NOP and v > 0),
        "by_surface": dict(by_surface), "by_language": dict(by_language),
        "naive_cheats_rewarded": sum(1 for v in naive.values() if v > 0),
        "naive_cheats": len(naive),
        "runtime_grade_s_median": round(grade, 2) if grade is not None else None,
        "runtime_run_s_median": round(plain, 2) if plain is not None else None,
        "grade_to_run_ratio": round(grade / plain, 2) if grade and plain else None,
    }), flush=True)


if __name__ == "__main__":
    main()
