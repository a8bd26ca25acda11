"""The plan a prior model proposes in phase 1: install steps and the checks that prove they worked."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_STEPS = 10

StepKind = Literal["system", "python", "project", "test-deps", "other"]
"""What a step installs: Debian packages, the interpreter/venv, the project itself, test-only deps."""

CheckKind = Literal["import", "collect", "tests", "entrypoint", "command"]


class Evidence(BaseModel):
    """Where in the repository a step or check comes from."""

    file: str
    line: int | None = None
    text: str = ""
    """The line (or a short excerpt) that says so."""


class Step(BaseModel):
    """One install command, run with bash in the workspace with the project's venv active."""

    model_config = ConfigDict(extra="forbid")
    command: str
    why: str
    kind: StepKind = "other"
    evidence: list[Evidence] = Field(default_factory=list)
    timeout_s: float = 900.0


class Check(BaseModel):
    """One verification test: a command whose exit status says whether the install worked."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: CheckKind
    command: str
    why: str = ""
    required: bool = True
    """A failing required check fails verification; optional ones are only reported."""


class Plan(BaseModel):
    """Phase 1's answer: what to run, and how to tell that it worked."""

    model_config = ConfigDict(extra="forbid")
    python: str = "3.11"
    """Interpreter version the base image should provide (X.Y)."""
    steps: list[Step] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    test_command: str | None = None
    """The project's own test command (pytest is given --junitxml by the verifier); None if no tests."""
    test_runner: Literal["pytest", "unittest", "custom", "none"] = "pytest"
    notes: list[str] = Field(default_factory=list)

    @field_validator("steps")
    @classmethod
    def _at_most_ten(cls, steps: list[Step]) -> list[Step]:
        if len(steps) > MAX_STEPS:
            msg = f"a plan has at most {MAX_STEPS} steps, got {len(steps)}"
            raise ValueError(msg)
        return steps
