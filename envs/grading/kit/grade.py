"""Grade one task attempt, as root, in a container the agent never touched:

    python3 -I -S /opt/autoinstall/grader/grade.py --agent DIR [--in-place] [--source tree|patch] --out DIR

1. the agent's change: the agent's tree (DIR) against the start state (policy `start`), sorted by changes.py;
2. the grading tree at the workdir: the start plus the accepted part (mend.py), owned by the test user, the
   task's own files root's and read-only to it;
3. the task's tests run as the test user (run.py), everything it started killed afterwards;
4. the verdict (verdict.py): every selected test by its exact id, passed, and nothing the run did (exit status,
   the runner's summary, a changed task file) contradicting that.
Writes OUT/reward.txt (1 or 0), OUT/results.json, OUT/test-output.txt and OUT/grader.log; with --swebench also
prints `PASSED id` / `FAILED id` for each selected test (what swebench's parse_log_pytest_v2 reads).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

from . import changes as changes_
from . import mend, run, trees, verdict
from .run import REPORT_DIR, RUN_DIR

FORMAT = "autoinstall-grading/1"
SCRATCH = "/var/tmp/autoinstall-grade"
TAKEN_FILE = "taken.txt"
"""In the run's folder: the agent's files the grader took, one a line: its absolute path, a tab, the start's copy
(the Python guard reads it: envs/testrun/guard_plugin.py)."""
WORKDIR_FILE = "workdir.txt"
"""In the run's folder: the workdir's real path, so the guards of processes the tests start in other folders
guard the same test files (the agent cannot write the run's folder, as it can the environment)."""
GUARD_PTH = "autoinstall-guard.pth"
SITE_FOLDERS = ("/opt/venv/lib/python3*/site-packages", "/opt/python/*/lib/python3*/site-packages",
                "/usr/local/lib/python3*/site-packages", "/usr/lib/python3/dist-packages")
"""Where the image's Pythons read .pth files: the environment's venv, the host builds it carries, Debian's."""
OUTPUTS = ("reward.txt", "reward.json", "results.json", "test-output.txt", "grader.log")
"""What the grader writes to OUT (reward.json too: Harbor reads it before reward.txt, so none may be left)."""


def _private_dir(path: str, uid: int, gid: int, mode: int) -> str:
    trees.remove(path)
    os.makedirs(path, mode)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    return path


def _write(path: str, text: str, mode: int = 0o644) -> None:
    trees.remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), mode)  # past the umask
        f.write(text)


def guard_site_packages(run_dir: str, folders: tuple = SITE_FOLDERS) -> list:
    """A .pth in each site-packages folder that loads the run's Python guard (when the run has one) in every Python
    process that reads it: a process the tests start with a scrubbed environment (no PYTHONPATH, or `-E`, `-I`)
    would otherwise run the agent's code unguarded. The folders written, as root's."""
    guard = os.path.join(run_dir, "autoinstall_guard.py")
    if not os.path.isfile(guard):
        return []
    line = (f"import os, sys; 'autoinstall_guard' in sys.modules or not os.path.isfile({guard!r}) or "
            f"(sys.path.append({run_dir!r}), __import__('autoinstall_guard'))\n")
    written = []
    for folder in sorted({f for pattern in folders for f in glob.glob(pattern) if os.path.isdir(f)}):
        _write(os.path.join(folder, GUARD_PTH), line)
        written.append(folder)
    return written


def _results_dir(out: str) -> None:
    """OUT as root's, not writable by anyone else (Harbor makes /logs/verifier world-writable)."""
    e = trees.lstat_entry(out)
    if e is not None and e.kind != "dir":
        trees.remove(out)
    os.makedirs(out, exist_ok=True)
    os.chown(out, 0, 0, follow_symlinks=False)
    os.chmod(out, 0o755)
    for name in OUTPUTS:  # nothing an earlier step left under these names counts
        trees.remove(os.path.join(out, name))


def grade(policy: dict, agent: str, in_place: bool, trust_times: bool, out: str, log: list) -> dict:
    """The whole grading; returns what results.json holds."""
    started = time.monotonic()
    rules = changes_.Policy.from_json(policy)
    work, start = policy["workdir"], policy["start"]
    user = run.lookup_user(policy.get("user", "agent"))
    if in_place and os.path.realpath(agent) != os.path.realpath(work):
        msg = f"--in-place needs --agent to be the workdir {work}, not {agent}"
        raise ValueError(msg)
    ours = changes_.walk(start, rules)
    replaced = mend.reset_bulky(start, work, rules, ours, trust_times, user.uid, user.gid) if in_place else []
    found = changes_.find(start, agent, rules, ours)
    mend.apply(found, start, work, in_place, ours, user.uid, user.gid)
    for rel in replaced:
        log.append(f"not carried over: {rel}/ (the task's, as built)")
    for c in found:
        log.append(f"{'took' if c.accepted else 'dropped'} {c.kind} {c.path}" + (f": {c.reason}" if c.reason else ""))
    if set(policy.get("fail_at_start", [])) & set(policy["selected"]) and not any(c.accepted for c in found):
        return _start_state(policy, found, replaced, out, started, log)
    mend.own(work, user.uid, user.gid)
    locked = mend.lock(work, rules)
    run_dir = _private_dir(os.path.join(SCRATCH, "run"), 0, 0, 0o755)
    real_work = os.path.realpath(work)
    report_dir = _private_dir(os.path.join(SCRATCH, "report"), user.uid, user.gid, 0o700)
    for path, text in policy.get("files", {}).items():
        target = path.replace(RUN_DIR, run_dir)
        mend.ensure_dir("/", os.path.dirname(target), 0, 0)
        _write(target, text, 0o755 if text.startswith("#!") else 0o644)  # a script: the launcher's wrapper
    guard_site_packages(run_dir)
    taken = {(os.path.normpath(os.path.join(p, c.path)), os.path.join(start, c.path))
             for c in found if c.accepted for p in (work, real_work)}
    _write(os.path.join(run_dir, TAKEN_FILE), "".join(f"{path}\t{was}\n" for path, was in sorted(taken)))
    _write(os.path.join(run_dir, WORKDIR_FILE), real_work + "\n")
    command = policy["command"].replace(REPORT_DIR, report_dir).replace(RUN_DIR, run_dir)
    env = {**os.environ, **policy.get("env", {}), "PYTHONDONTWRITEBYTECODE": "1"}
    for key in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "LD_PRELOAD", "BASH_ENV", "ENV"):
        if key not in policy.get("env", {}):
            env.pop(key, None)
    ran = run.run_as(user, command, work, env, float(policy.get("timeout_s", 1800)))
    reports, notes = run.read_reports(work, list(policy.get("reports", [])), report_dir)
    log.extend(notes)
    if ran.cut:
        log.append(f"the test output passed {run.OUTPUT_CAP // (1024 * 1024)} MiB: the rest was not kept")
    seen = verdict.judge(policy["parser"], ran.output, reports, ran.exit_code, ran.timed_out,
                         list(policy.get("selected", [])), bool(policy.get("exit_consistent", True)),
                         changes_.moved_doc_tests(found, start))
    tampered = mend.changed_since(work, locked)
    if tampered:
        seen.problems.append(f"the test run changed the task's own files: {', '.join(tampered[:5])}")
        seen.reward = 0.0
    _write(os.path.join(out, "test-output.txt"), ran.output[-4 * 1024 * 1024:])
    return {"format": FORMAT, "reward": seen.reward, "tests": seen.tests, "problems": seen.problems,
            "counts": seen.counts, "exit_code": ran.exit_code, "timed_out": ran.timed_out,
            "test_seconds": round(ran.duration_s, 3), "seconds": round(time.monotonic() - started, 3),
            "taken": [c.path for c in found if c.accepted], "dropped": _dropped(found, replaced),
            "output_tail": ran.output[-4000:]}


def _dropped(found: list, replaced: list) -> list:
    return ([{"path": c.path, "reason": c.reason} for c in found if not c.accepted] +
            [{"path": rel + "/", "reason": "the task's, as built"} for rel in replaced])


def _start_state(policy: dict, found: list, replaced: list, out: str, started: float, log: list) -> dict:
    """The grade of a tree that holds nothing of the agent's: the task's start state, whose outcomes its
    validation recorded (`fail_at_start` failed, every other selected test passed). Nothing runs: whatever else
    the agent changed in its container cannot make a test of that tree pass."""
    failing = set(policy["fail_at_start"])
    why = "nothing of the agent's was taken: the tree is the task's start state, graded as its validation ran it"
    log.append(why)
    _write(os.path.join(out, "test-output.txt"), f"(no run) {why}\n")
    return {"format": FORMAT, "reward": 0.0, "tests": {t: "failed" if t in failing else "passed"
                                                      for t in policy.get("selected", [])},
            "problems": [], "start_state": why, "counts": {}, "timed_out": False,
            "test_seconds": 0.0, "seconds": round(time.monotonic() - started, 3), "taken": [],
            "dropped": _dropped(found, replaced), "output_tail": f"(no run) {why}"}


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grade.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=os.path.join(os.path.dirname(os.path.dirname(__file__)), "policy.json"))
    parser.add_argument("--agent", required=True, help="the agent's tree")
    parser.add_argument("--in-place", action="store_true", help="the agent's tree is the workdir itself")
    parser.add_argument("--source", choices=("tree", "patch"), default="tree",
                        help="patch: the change arrived as a patch (file times are the start's where untouched)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--swebench", action="store_true")
    args = parser.parse_args(argv)
    _results_dir(args.out)
    _write(os.path.join(args.out, "reward.txt"), "0\n")
    log: list = []
    with open(args.policy, "rb") as f:
        policy = json.load(f)
    try:
        result = grade(policy, args.agent, args.in_place, args.source == "patch", args.out, log)
    except Exception as e:  # noqa: BLE001 - any failure of the grader grades 0, with why
        result = {"format": FORMAT, "reward": 0.0, "tests": {t: "missing" for t in policy.get("selected", [])},
                  "problems": [f"the grader failed: {type(e).__name__}: {e}"], "taken": [], "dropped": []}
    _write(os.path.join(args.out, "results.json"), json.dumps(result, indent=2) + "\n")
    _write(os.path.join(args.out, "grader.log"), "\n".join(log + result.get("problems", [])) + "\n")
    _write(os.path.join(args.out, "reward.txt"), f"{result['reward']:g}\n")
    if args.swebench:
        for test_id, outcome in result["tests"].items():
            credited = outcome == "passed" and not result.get("problems")
            print(f"{'PASSED' if credited else 'FAILED'} {test_id}")
    else:
        print(f"reward {result['reward']:g}; " + "; ".join(result.get("problems", []) or
                                                        [result.get("start_state") or f"{len(result['tests'])} tests graded"]))
    return 0 if result["reward"] == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
