"""An ecosystem's project in a folder of the checkout (subprojects.py chose it): recorded as "python@packages/core".

The inner ecosystem sees its own project as if it were the checkout: its survey and proposal read the folder,
and its repair rules get commands without the folder. Everything it returns that runs is prefixed with
`cd FOLDER && ` (steps, checks, the test command), so the install loop, verification, the replay Dockerfile,
the runtime's reward and the exports all run the project where it is, while the agent's workspace stays the
whole checkout. Evidence names files from the checkout's root.
"""
from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from autoinstall.ecosystems.base import Ecosystem, Facts, Log, RepairContext
from envs.base import Sandbox, SandboxFactory
from envs.folder import InFolder
from envs.grading.policy import GradingRules
from envs.spec import Evidence, Plan, Repair, Step

SEPARATOR = "@"
"""Between the ecosystem and the folder in a recorded name."""


def split_name(name: str) -> tuple[str, str | None]:
    """("python+rust", "packages/core") for "python+rust@packages/core"; the folder is None without one."""
    lead, _, root = name.partition(SEPARATOR)
    return lead, (root or None)


def _with_files(value: Any, rename: Callable[[str], str]) -> Any:
    """`value` (facts: models, lists, dicts) with the file of every Evidence in it renamed."""
    if isinstance(value, Evidence):
        return value.model_copy(update={"file": rename(value.file)})
    if isinstance(value, BaseModel):
        return value.model_copy(update={k: _with_files(getattr(value, k), rename) for k in type(value).model_fields})
    if isinstance(value, list | tuple):
        return type(value)(_with_files(v, rename) for v in value)
    if isinstance(value, dict):
        return {k: _with_files(v, rename) for k, v in value.items()}
    return value


class Nested:
    """`inner`'s project in the folder `root` of the checkout; see the module docstring."""

    def __init__(self, inner: Ecosystem, root: str, notes: list[str] | None = None) -> None:
        self.inner, self.root = inner, root.strip("/")
        self.name = f"{inner.name}{SEPARATOR}{self.root}"
        self.prefix = f"cd {shlex.quote(self.root)} && "
        self.notes = list(notes or [])
        """Why this folder (subprojects.choice_notes): put before the survey's own notes."""
        self.chat_environment = (f"{inner.chat_environment} The project is the folder {self.root}/ of the "
                                 f"checkout: run its commands there (`cd {self.root} && ...`).")

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    @property
    def toolchains(self) -> tuple[str, ...]:
        return tuple(self.inner.toolchains)

    @property
    def grading(self) -> GradingRules:
        """The inner rules, its root-anchored patterns also in the folder."""
        return self.inner.grading.in_folder(self.root)

    def detect(self, repo: Path) -> bool:
        return self.inner.detect(Path(repo) / self.root)

    # -- facts and the plan: the inner ecosystem reads its folder ------------------------------------------
    def survey(self, repo: Path) -> Facts:
        """The inner survey of the folder, its evidence named from the checkout's root."""
        facts = _with_files(self.inner.survey(Path(repo) / self.root), self._file_out)
        facts.ecosystem = f"{facts.ecosystem}{SEPARATOR}{self.root}"
        facts.notes = [*self.notes, *facts.notes]
        return facts

    def propose(self, facts: Facts, repo: Path, toolchains: tuple[str, ...]) -> Plan:
        inner_facts = _with_files(facts, self._file_in)
        inner_facts.ecosystem = split_name(facts.ecosystem)[0]
        plan = self.inner.propose(inner_facts, Path(repo) / self.root, toolchains)
        plan = self.outward(plan)
        plan.ecosystem, plan.workdir = self.name, self.root
        return plan  # the survey's notes (why this folder) are in it: every proposal keeps the facts' notes

    def _file_out(self, file: str) -> str:
        return file if file.startswith("<") else posixpath.join(self.root, file)  # "<output>": no file

    def _file_in(self, file: str) -> str:
        return file.removeprefix(self.root + "/")

    def _evidence(self, evidence: list[Evidence]) -> list[Evidence]:
        return [e.model_copy(update={"file": self._file_out(e.file)}) for e in evidence]

    def _out(self, command: str | None) -> str | None:
        """A command of the inner project, run in its folder."""
        if not command or command.startswith(self.prefix):
            return command
        return self.prefix + command

    def _in(self, command: str | None) -> str | None:
        return command.removeprefix(self.prefix) if command else command

    def _step_out(self, step: Step) -> Step:
        return step.model_copy(update={"command": self._out(step.command), "evidence": self._evidence(step.evidence)})

    def _step_in(self, step: Step) -> Step:
        return step.model_copy(update={"command": self._in(step.command)})

    def outward(self, plan: Plan) -> Plan:
        """The inner plan with every command run in the folder and evidence named from the checkout's root."""
        return plan.model_copy(update={
            "steps": [self._step_out(s) for s in plan.steps],
            "checks": [c.model_copy(update={"command": self._out(c.command)}) for c in plan.checks],
            "test_command": self._out(plan.test_command)})

    def inward(self, plan: Plan) -> Plan:
        """The recorded plan as the inner ecosystem made it (commands without the folder)."""
        return plan.model_copy(update={
            "steps": [self._step_in(s) for s in plan.steps],
            "checks": [c.model_copy(update={"command": self._in(c.command)}) for c in plan.checks],
            "test_command": self._in(plan.test_command), "ecosystem": self.inner.name, "workdir": "."})

    # -- phase 2: repairs see the inner project, and what they run goes back into the folder -----------------
    def repair(self, context: RepairContext) -> Repair | None:
        inner = context.model_copy(update={"plan": self.inward(context.plan),
                                           "failing": context.failing.model_copy(
                                               update={"command": self._in(context.failing.command)}),
                                           "tried": [self._repair_in(r) for r in context.tried],
                                           "repo": context.repo / self.root if context.repo else None})
        repair = self.inner.repair(inner)
        if repair is None:
            return None
        return repair.model_copy(update={"step": self._step_out(repair.step) if repair.step else None,
                                         "test_command": self._out(repair.test_command)})

    def _repair_in(self, repair: Repair) -> Repair:
        return repair.model_copy(update={"step": self._step_in(repair.step) if repair.step else None,
                                         "test_command": self._in(repair.test_command)})

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        """The test files to deselect, relative to the folder the tests run in."""
        return self.inner.stub_users(Path(repo) / self.root, import_name)

    def freeze(self, sandbox: Sandbox) -> str:
        return self.inner.freeze(InFolder(sandbox, self.root))  # type: ignore[arg-type]

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        return self.inner.base_image(factory, toolchain, log)


__all__ = ["SEPARATOR", "InFolder", "Nested", "split_name"]
