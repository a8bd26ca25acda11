"""SWE-bench task rows that the `swebench` package (5.x) evaluates as they are: one row per stored task.

swebench's harness (`python -m swebench.harness.run_evaluation -d OUT/swebench.jsonl -p PREDICTIONS`) reads
`image` (a prebuilt image: never pulled when present), `eval_script` and `log_parser` from each row, starts the
image, applies the prediction's patch in /testbed, runs the eval script and grades FAIL_TO_PASS/PASS_TO_PASS
from its output. The export builds each row's image: the environment image with the task's bug applied and
/testbed naming the workdir (envs/export/bugstate.py), from OUT/swebench-images/<task>/.
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from envs.export import bugstate
from envs.export.common import ExportCounts, ExportError, ImageArtifact, format_version, verification_counts
from envs.export.tasks import TaskEntry
from envs.runtime import PLUGIN, PLUGIN_SOURCE
from envs.testrun.pytest_runner import selection_args

if TYPE_CHECKING:
    from envs.export.common import ExportOptions

FILE = "swebench.jsonl"
CONTEXTS = "swebench-images"
START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
SELECT_DIR = "/tmp/autoinstall-select"
LOG_PARSERS = {"pytest": "parse_log_pytest"}
"""Our test runner -> swebench's log parser (swebench.harness.log_parsers.PARSER_REGISTRY)."""


class SwebenchTaskRow(BaseModel):
    """One task as a SWE-bench instance (swebench.types.SWEbenchInstance plus the harness's keys)."""

    instance_id: str
    repo: str
    """owner/name (or the repository's URL or name when no owner is known); never a host path."""
    base_commit: str
    patch: str
    """The gold patch."""
    test_patch: str
    """The tests of the task's history commit, already in the image (informational: the eval script checks
    out the image's own tests before running them)."""
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
    verification: ExportCounts
    autoinstall_id: str
    autoinstall_format: str = format_version("swebench")


def _heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'AUTOINSTALL_EOF'\n{text.rstrip()}\nAUTOINSTALL_EOF"


def eval_script(te: TaskEntry) -> str:
    """Restore the tests named by the task, run FAIL_TO_PASS + PASS_TO_PASS between swebench's markers with
    pytest's -rA summary (what parse_log_pytest reads), and restore the tests again."""
    task = te.task
    files = bugstate.test_files(te)
    restore = f"git checkout HEAD -- {' '.join(shlex.quote(f) for f in files)}" if files else ":"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(task.env.items()))
    args = ["-p", PLUGIN, "-rA", "-p", "no:cacheprovider", "--color=no", *selection_args(te.entry.spec.deselected)]
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", f"cd {bugstate.TESTBED}", exports.rstrip(), restore,
        f"mkdir -p {SELECT_DIR}", _heredoc(f"{SELECT_DIR}/{PLUGIN}.py", PLUGIN_SOURCE),
        _heredoc(f"{SELECT_DIR}/selected.txt", "\n".join(te.tests)),
        f'export PYTHONPATH={SELECT_DIR}"${{PYTHONPATH:+:$PYTHONPATH}}" AUTOINSTALL_SELECT={SELECT_DIR}/selected.txt',
        f": '{START}'", f"{task.test_command} {' '.join(shlex.quote(a) for a in args)}", f": '{END}'", restore,
    ]) + "\n"


def check_runners(tasks: list[TaskEntry]) -> None:
    """Raises ExportError naming tasks whose test runner has no swebench log parser here."""
    bad = [te for te in tasks if te.task.test_runner not in LOG_PARSERS]
    if bad:
        names = ", ".join(f"{te.task.instance_id} ({te.task.test_runner})" for te in bad[:5])
        msg = (f"The SWE-bench export of tasks supports the {', '.join(LOG_PARSERS)} runner(s); these tasks use "
               f"another: {names}. Leave their environments out with --id, or export them as harbor or verl.")
        raise ExportError(msg)


def row(te: TaskEntry, image: str) -> SwebenchTaskRow:
    task, spec = te.task, te.entry.spec
    return SwebenchTaskRow(
        instance_id=task.instance_id, repo=task.repo, base_commit=task.base_commit, patch=task.gold_patch,
        test_patch=task.test_patch, problem_statement=task.problem_statement,
        created_at=task.created_at or spec.created_at, version=spec.source.revision,
        environment_setup_commit=task.base_commit, FAIL_TO_PASS=task.FAIL_TO_PASS,
        PASS_TO_PASS=task.PASS_TO_PASS, image=image, eval_script=eval_script(te),
        log_parser=LOG_PARSERS[task.test_runner], image_name=image, test_cmd=task.test_command,
        test_runner=task.test_runner, env=task.env, kind=task.kind, verification=verification_counts(spec),
        autoinstall_id=te.entry.record.id)


def build_images(tasks: list[TaskEntry], out: Path) -> list[ImageArtifact]:
    """Build each task's bug-state image from OUT/swebench-images/<task>/ (FROM the local environment image).

    Raises:
        EnvError: an environment image is missing or a build failed (its message says which).
    """
    from envs.docker import build_image  # the docker SDK loads only when task images are built

    artifacts = []
    for te in tasks:
        context = out / CONTEXTS / te.slug
        bugstate.write_context(context, te, te.task.image, "swebench", testbed=True)
        tag = bugstate.image_tag(te, te.task.image, "swebench")
        build_image(context, tag, labels={"autoinstall.task": te.task.instance_id}, buildargs={})
        artifacts.append(ImageArtifact(image=tag, reference=tag, context=f"{CONTEXTS}/{te.slug}"))
    return artifacts


def write(tasks: list[TaskEntry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/swebench.jsonl, one row per task; refs maps each task's bug-state tag to its exported reference."""
    lines = [row(te, refs[bugstate.image_tag(te, te.task.image, "swebench")]).model_dump_json() for te in tasks]
    (out / FILE).write_text("".join(line + "\n" for line in lines))
    return [FILE]
