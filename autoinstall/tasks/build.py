"""The Task record of a validated candidate: its statements (every style, leak-checked), its difficulty
features and bucket, and what the environment says about running its tests."""
from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.difficulty import bucket, features
from autoinstall.tasks.statement_model import ChatStatements
from autoinstall.tasks.statements import StatementInput, write_statements
from autoinstall.tasks.validate import Verdict
from autoinstall.tasks.workspace import Suite
from envs.catalog import EnvRecord
from envs.export.common import repo_name
from envs.grading.policy import Grading
from envs.spec import EnvSpec
from envs.task import Task, TaskValidation


@dataclass
class TaskContext:
    """What every task of one environment is built with."""

    record: EnvRecord
    spec: EnvSpec
    suite: Suite
    writer: ChatStatements | None = None
    """The chat model writing issue and terse statements (None: the templates)."""
    load_index: Callable[[], CodeIndex | None] = lambda: None
    """Reads and parses the sources and tests, once, when the first task needs them."""
    _index: list[CodeIndex | None] = field(default_factory=list)

    @property
    def index(self) -> CodeIndex | None:
        if not self._index:
            self._index.append(self.load_index())
        return self._index[0]


def instance_id(context: TaskContext, candidate: Candidate) -> str:
    slug = repo_name(context.spec.source).replace("/", "__")
    digest = hashlib.sha256(f"{context.record.id}\0{candidate.bug_patch}".encode()).hexdigest()[:8]
    return f"{slug}-{candidate.kind}-{digest}"


def build_task(candidate: Candidate, verdict: Verdict, validation: TaskValidation, context: TaskContext,
               grading: Grading | None = None) -> Task:
    """The Task record of a validated candidate."""
    record, spec, suite = context.record, context.spec, context.suite
    task_id = instance_id(context, candidate)
    index = context.index
    statements, checks = write_statements(StatementInput(
        candidate=candidate, fail_to_pass=verdict.fail_to_pass, pass_to_pass=verdict.pass_to_pass,
        messages=verdict.messages, seed=task_id), index, context.writer)
    found = features(candidate, verdict.fail_to_pass, index)
    return Task(
        instance_id=task_id, env_id=record.id, repo=repo_name(spec.source),
        base_commit=spec.source.commit or spec.source.revision, image=spec.image or record.image or "",
        kind=candidate.kind, bug_patch=candidate.bug_patch, gold_patch=candidate.gold_patch,
        problem_statement=statements.tests, problem_statements=statements, statement_checks=checks,
        FAIL_TO_PASS=verdict.fail_to_pass, PASS_TO_PASS=verdict.pass_to_pass, test_command=suite.command,
        test_runner=suite.runner, env=dict(suite.env), fix_files=len(candidate.files),
        fix_lines=candidate.fix_lines, mutation=candidate.mutation, history=candidate.history,
        parts=candidate.parts, features=found, difficulty=bucket(found), validation=validation, grading=grading,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
