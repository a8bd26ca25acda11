"""What a model is told about a failure (RepairContext) and what it may answer (Repair)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from autoinstall.diagnose import Diagnosis
from autoinstall.plan import Plan, Step

RepairKind = Literal["insert_before", "replace", "set_env", "switch_python", "stub_distribution",
                     "deselect", "skip", "test_args", "give_up"]


class Repair(BaseModel):
    """One fix. `insert_before` runs `step` then retries the failing command; `replace` swaps it;
    `skip` drops an auxiliary step (never the project install) and goes on without it."""

    kind: RepairKind
    reason: str
    step: Step | None = None
    env: dict[str, str] = Field(default_factory=dict)
    python: str | None = None
    distribution: str | None = None
    """For stub_distribution: the distribution that cannot be installed."""
    import_name: str | None = None
    """For stub_distribution: the module the stub provides."""
    tests: list[str] = Field(default_factory=list)
    """For deselect: pytest node ids or file paths."""
    args: str | None = None
    """For test_args: options appended to the test command (e.g. warning filters)."""


class FailedTest(BaseModel):
    """One failing test, as the verifier saw it."""

    test_id: str
    message: str = ""


class RepairContext(BaseModel):
    """Everything a model needs to propose the next fix."""

    plan: Plan
    failing: Step
    """The step or check command that failed."""
    phase: Literal["install", "check", "tests"]
    output: str
    diagnosis: Diagnosis
    python: str
    """The interpreter version currently in use."""
    available_pythons: list[str]
    tried: list[Repair] = Field(default_factory=list)
    """Repairs already applied in this run, oldest first."""
    failed_tests: list[FailedTest] = Field(default_factory=list)
    test_ids: list[str] = Field(default_factory=list)
    """Every test id of the last test run (to tell whole files from single tests)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables already set for every step."""

    def already_tried(self, repair: Repair) -> bool:
        key = repair.model_dump(exclude={"reason"})
        return any(t.model_dump(exclude={"reason"}) == key for t in self.tried)
