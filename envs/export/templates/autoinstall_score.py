"""Score one verification run (stdlib only, any Python 3): write reward.txt and results.json.

The reward is passed / max(selected, ran) over the tests in the JUnit report (the selection plugin keeps only
the selected tests), so a selected test that is gone counts as failed; without a selection, 1 when the test
command exited 0. A failed required check gives 0. With --require-all (tasks), the reward is 1 when every
selected test passed and 0 otherwise.
"""
import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path


def outcomes(junit: Path) -> dict:
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return counts
    for case in root.iter("testcase"):
        tags = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        key = {"failure": "failed", "error": "error", "skipped": "skipped"}[tags[0]] if tags else "passed"
        counts[key] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("--junit", "--selected", "--exit-code", "--checks-ok", "--out"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--require-all", action="store_true")
    args = parser.parse_args()
    selected = [s for s in Path(args.selected).read_text().splitlines() if s.strip()]
    counts = outcomes(Path(args.junit))
    if args.checks_ok != "1":
        reward = 0.0
    elif selected:
        reward = counts["passed"] / max(len(selected), sum(counts.values()))
    else:
        reward = 1.0 if args.exit_code == "0" else 0.0
    if args.require_all:
        reward = 1.0 if reward == 1.0 else 0.0
    out = Path(args.out)
    details = {"reward": reward, "selected": len(selected), "counts": counts,
               "exit_code": int(args.exit_code), "checks_ok": args.checks_ok == "1",
               "require_all": args.require_all}
    (out / "results.json").write_text(json.dumps(details, indent=2) + "\n")
    (out / "reward.txt").write_text(f"{reward}\n")


if __name__ == "__main__":
    main()
