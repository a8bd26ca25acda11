"""SWE-bench-style rows (JSON Lines), readable by envs.runtime.RuntimeSpec.from_export_row."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from envs.export.common import WORKDIR, Entry, ExportCounts, format_version, repo_name, verification_counts
from envs.spec import TestRunner

if TYPE_CHECKING:
    from envs.export.common import ExportOptions

FILE = "swebench.jsonl"


class SwebenchRow(BaseModel):
    """One environment as a SWE-bench instance; FAIL_TO_PASS is empty (no issue to fix, tests to keep)."""

    instance_id: str
    repo: str
    base_commit: str
    """The commit the environment was built at (or the content digest of an uncommitted checkout)."""
    version: str
    """What groups instances sharing one environment: here, the environment's revision."""
    environment_setup_commit: str
    created_at: str
    problem_statement: str = ""
    PASS_TO_PASS: list[str]
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    image_name: str
    test_cmd: str
    test_runner: TestRunner
    workdir: str = WORKDIR
    env: dict[str, str] = Field(default_factory=dict)
    deselected: list[str] = Field(default_factory=list)
    """Tests or files left out at verification (broken or flaky there)."""
    verification: ExportCounts = Field(default_factory=dict)
    """What verification counted (envs/export/common.py `verification_counts`)."""
    autoinstall_id: str
    autoinstall_format: str = format_version("swebench")


def row(entry: Entry, image: str) -> SwebenchRow:
    spec, record = entry.spec, entry.record
    revision = spec.source.commit or spec.source.revision
    return SwebenchRow(
        instance_id=entry.slug, repo=repo_name(spec.source), base_commit=revision, version=spec.source.revision,
        environment_setup_commit=revision, created_at=spec.source.commit_date or spec.created_at,
        PASS_TO_PASS=entry.pass_to_pass, image_name=image, test_cmd=entry.test_command,
        test_runner=spec.plan.test_runner, env=spec.env, deselected=[d.test for d in spec.deselected],
        verification=verification_counts(spec), autoinstall_id=record.id)


def write(entries: list[Entry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/swebench.jsonl, one row per environment."""
    lines = [row(e, refs[e.spec.image or ""]).model_dump_json() for e in entries]
    (out / FILE).write_text("".join(line + "\n" for line in lines))
    return [FILE]
