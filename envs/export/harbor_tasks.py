"""Harbor tasks with goals: one task directory per stored task (envs.task.Task).

    instruction.md           the problem statement (the repository named by owner/name, never a host path)
    task.toml                limits from the environment's record, agent as a non-root user, verifier offline
    environment/             the task's start image (envs/grading/image.py): Dockerfile, bug.patch, grader/
    tests/test.sh            runs the grader: reward 1 when every FAIL_TO_PASS and PASS_TO_PASS test passes
    solution/solve.sh        applies solution/gold.patch

Harbor builds the start image from environment/ for each environment of each trial, or, exported with
`start_image="prebuilt"`, starts the image the export built from a copy of it (OUT/harbor-images/<task>/),
which task.toml names as `docker_image`.

The verifier runs in a separate container built from the same environment/, with the agent's workdir restored
into it (Harbor's artifacts, dependencies and build output left out); the grader (as root) keeps only the
agent's change to product code and runs the tests as the unprivileged test user (envs/grading/kit/).
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

from envs.base import Limits
from envs.export import bugstate
from envs.export.common import ExportError, ExportOptions, format_version, verification_counts
from envs.export.harbor import _script, _template, to_toml
from envs.export.tasks import TaskEntry
from envs.grading.image import GRADE

CONTEXTS = "harbor-images"
"""Under OUT: the build contexts of the start images a prebuilt export built (copies of each environment/)."""


def _values(te: TaskEntry) -> dict[str, str]:
    task = te.task
    title = task.problem_statement.strip().splitlines()[0].lstrip("# ").strip() if task.problem_statement.strip() \
        else "fix the failing tests"
    return {"repo": task.repo, "workdir": task.workdir, "test_command": task.test_command,
            "problem_statement": task.problem_statement.strip(), "title": title[:120],
            "instance_id": task.instance_id, "format": format_version("harbor")}


def instruction(te: TaskEntry) -> str:
    return _template("instruction-task.md").substitute(_values(te))


def task_config(te: TaskEntry, options: ExportOptions, limits: Limits | None = None,
                start: str | None = None) -> dict[str, Any]:
    """task.toml (harbor.models.task.config.TaskConfig field names); `start`: the prebuilt start image."""
    task, spec, limits = te.task, te.entry.spec, limits or Limits()
    runs = spec.verification.runs if spec.verification else []
    test_s = max((r.duration_s for r in runs), default=0.0)
    agent: dict[str, Any] = {"timeout_sec": 1800.0}
    grading = bugstate.grading(te)
    if options.agent_user:
        if options.agent_user != grading.user:
            msg = (f"the agent of task {task.instance_id} can run as root or as its test user {grading.user!r} "
                   f"(who owns the workdir in the task image), not as {options.agent_user!r}; pass "
                   f"--agent-user {grading.user} or --agent-user root")
            raise ExportError(msg)
        agent["user"] = options.agent_user
    rules = grading.rules
    environment: dict[str, Any] = {"build_timeout_sec": 600.0, "cpus": limits.cpus, "memory_mb": limits.memory_mb,
                                   "storage_mb": limits.disk_mb, "network_mode": options.network,
                                   "workdir": task.workdir}
    if start:
        environment["docker_image"] = start  # started as it is: no build from environment/ unless --force-build
    return {
        "schema_version": "1.4",
        "artifacts": [{"source": task.workdir, "exclude": list(rules.untransferred)}],
        "task": {"name": f"autoinstall/{te.slug}", "description": f"{task.repo}: {task.kind} task",
                 "keywords": ["autoinstall", "task", task.kind]},
        "metadata": {
            "autoinstall_format": format_version("harbor"), "autoinstall_id": te.entry.record.id,
            "instance_id": task.instance_id, "task_kind": task.kind, "repo": task.repo,
            "base_commit": task.base_commit, "image": task.image, "test_command": task.test_command,
            "fail_to_pass": len(task.FAIL_TO_PASS), "pass_to_pass": len(task.PASS_TO_PASS),
            "fix_files": task.fix_files, "fix_lines": task.fix_lines, "created_at": task.created_at,
            "difficulty": task.difficulty or "unknown",
            "verification": verification_counts(spec)},
        "verifier": {"timeout_sec": float(max(600, math.ceil(test_s * 10) + 120)),
                     "environment_mode": "separate", "network_mode": options.verifier_network},
        "agent": agent,
        "environment": environment,
    }


def write_task(te: TaskEntry, image: str, dest: Path, options: ExportOptions, start: str | None = None) -> None:
    """Write one task directory at `dest` (built beside it, then moved into place); `image` is the environment's
    image, `start` the prebuilt start image."""
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for sub in ("tests", "solution"):
        (tmp / sub).mkdir(parents=True)
    task, grading = te.task, bugstate.grading(te)
    (tmp / "instruction.md").write_text(instruction(te))
    (tmp / "task.toml").write_text(to_toml(task_config(te, options, start=start)))
    bugstate.write_context(tmp / "environment", te, image)
    _script(tmp / "tests" / "test.sh", _template("test-task.sh").substitute(
        _values(te), grade=GRADE, user=grading.user))
    (tmp / "solution" / "gold.patch").write_text(task.gold_patch)
    _script(tmp / "solution" / "solve.sh", _template("solve-task.sh").substitute(_values(te)))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


def write(tasks: list[TaskEntry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """One task directory per task under OUT; returns their names. `refs` maps the environments' images and,
    for a prebuilt export, the start images (`bugstate.image_tag`) to their exported references.

    Raises:
        ExportError: a task has no grading record (made before tasks were graded; remake it).
    """
    bugstate.check(tasks)
    for te in tasks:
        start = refs[bugstate.image_tag(te, te.task.image)] if options.start_image == "prebuilt" else None
        write_task(te, refs[te.task.image], out / te.slug, options, start)
    return [te.slug for te in tasks]
