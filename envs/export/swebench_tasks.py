"""SWE-bench task rows that the `swebench` package (5.x) evaluates as they are: one row per stored task.

swebench's harness (`python -m swebench.harness.run_evaluation -d OUT/swebench.jsonl -p PREDICTIONS`) reads
`image` (a prebuilt image: never pulled when present), `eval_script` and `log_parser` from each row, starts the
image, applies the prediction's patch in /testbed, runs the eval script and grades FAIL_TO_PASS/PASS_TO_PASS
from its output. The export builds each row's image, the task's start image (envs/grading/image.py: /testbed
names its workdir), from OUT/swebench-images/<task>/. The eval script runs the grader (envs/grading/kit/) on
the patched workdir: only the patch's change to product code is kept, the tests run as the unprivileged test
user, and between swebench's markers the grader alone prints `PASSED id` / `FAILED id` for each test of the
task (what `parse_log_pytest_v2` reads, for every language): the tests' own output never reaches the log.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from envs.export import bugstate
from envs.export.common import ExportCounts, format_version, verification_counts
from envs.export.tasks import TaskEntry
from envs.grading.image import GRADE

if TYPE_CHECKING:
    from envs.export.common import ExportOptions

FILE = "swebench.jsonl"
CONTEXTS = "swebench-images"
START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
LOG_PARSER = "parse_log_pytest_v2"
"""swebench's parser of the grader's `PASSED id` / `FAILED id` lines (ids with spaces kept whole)."""


class SwebenchTaskRow(BaseModel):
    """One task as a SWE-bench instance (swebench.types.SWEbenchInstance plus the harness's keys)."""

    instance_id: str
    repo: str
    """owner/name (or the repository's URL or name when no owner is known); never a host path."""
    base_commit: str
    patch: str
    """The gold patch."""
    test_patch: str
    """The tests of the task's history commit, already in the image (informational: the grader puts the
    image's own tests back before running them)."""
    problem_statement: str
    hints_text: str = ""
    created_at: str
    version: str
    environment_setup_commit: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    image: str
    """The bug-state image swebench starts (built by the export; swebench pulls only a missing image)."""
    eval_script: str
    log_parser: str
    eval_type: Literal["pass_and_fail"] = "pass_and_fail"
    # read by envs.runtime.RuntimeSpec.from_export_row and trainers
    image_name: str
    test_cmd: str
    test_runner: str
    workdir: str = bugstate.TESTBED
    env: dict[str, str] = Field(default_factory=dict)
    kind: str
    difficulty: str = "unknown"
    """easy, medium or hard (autoinstall/tasks/difficulty.py); unknown for a task made before it was kept."""
    verification: ExportCounts
    autoinstall_id: str
    autoinstall_format: str = format_version("swebench")


def eval_script(te: TaskEntry) -> str:
    """Grade the patched /testbed between swebench's markers; the grader's exit status is 0 only when every
    FAIL_TO_PASS and PASS_TO_PASS test passed (swebench records it after the end marker)."""
    out = "/var/tmp/autoinstall-grade/out"
    return "\n".join([
        "#!/bin/bash", f"cd {bugstate.TESTBED}", f"echo '{START}'",
        f"{GRADE} --agent {bugstate.TESTBED} --in-place --source patch --out {out} --swebench 2>/dev/null",
        f"echo '{END}'",
    ]) + "\n"


def check_runners(tasks: list[TaskEntry]) -> None:
    """Raises ExportError naming a task without a grading record (every graded runner has swebench rows)."""
    bugstate.check(tasks)


def row(te: TaskEntry, image: str) -> SwebenchTaskRow:
    task, spec = te.task, te.entry.spec
    return SwebenchTaskRow(
        instance_id=task.instance_id, repo=task.repo, base_commit=task.base_commit, patch=task.gold_patch,
        test_patch=task.test_patch, problem_statement=task.problem_statement,
        created_at=task.created_at or spec.created_at, version=spec.source.revision,
        environment_setup_commit=task.base_commit, FAIL_TO_PASS=task.FAIL_TO_PASS,
        PASS_TO_PASS=task.PASS_TO_PASS, image=image, eval_script=eval_script(te),
        log_parser=LOG_PARSER, image_name=image, test_cmd=task.test_command,
        test_runner=task.test_runner, env=task.env, kind=task.kind, difficulty=task.difficulty or "unknown",
        verification=verification_counts(spec),
        autoinstall_id=te.entry.record.id)


def write(tasks: list[TaskEntry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/swebench.jsonl, one row per task; refs maps each task's bug-state tag to its exported reference."""
    lines = [row(te, refs[bugstate.image_tag(te, te.task.image)]).model_dump_json() for te in tasks]
    (out / FILE).write_text("".join(line + "\n" for line in lines))
    return [FILE]
