"""RuntimeSpec: what an Environment starts from, built from a catalog record, a spec.json or an export row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.base import Limits
from envs.spec import Deselection, EnvSpec
from envs.task import Task
from envs.testrun import DEFAULT_RUNNER, FALLBACK_RUNNER, is_registered, registered


class RuntimeSpec(BaseModel):
    """What an Environment starts from: the verified image and how to judge it."""

    model_config = ConfigDict(extra="forbid")
    image: str
    """Image (tag or id) each episode's container starts from."""
    workdir: str = "/workspace"
    """The repository's directory inside the image; tools are confined to it."""
    test_command: str | None = None
    """The verification test command; reward() needs one."""
    test_runner: str = DEFAULT_RUNNER
    """Any runner envs/testrun registers: how the tests are run and read, and what a selection can do (its
    record, `envs.testrun.abilities`); a runner that names no test gives a pass rate only."""
    deselected: list[Deselection] = Field(default_factory=list)
    """Tests or files always left out (broken or flaky at verification)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for every command in the container (tools and tests)."""
    tests: list[str] = Field(default_factory=list)
    """The default reward selection (pytest node ids, files or classes, e.g. PASS_TO_PASS); empty = all."""
    limits: Limits = Field(default_factory=Limits)
    """cpus, memory, pids and disk of each container."""
    network: bool = False
    """Network access inside the container (off by default, as at verification)."""
    profile: str = "default"
    """Tool profile used when Environment is not given one (see tools/profiles/)."""
    test_timeout_s: float = 1800.0
    """Seconds a reward run may take before it is killed (its tests then count as failed)."""
    task: Task | None = None
    """A task (envs/task.py): each episode starts from its bug state and reward() is 1 when every FAIL_TO_PASS
    and PASS_TO_PASS test passes, else 0 (envs/runtime/taskstate.py)."""

    @field_validator("test_runner")
    @classmethod
    def _registered(cls, runner: str) -> str:
        if not is_registered(runner):
            msg = f"unknown test runner {runner!r}; envs/testrun knows: {', '.join(registered())}"
            raise ValueError(msg)
        return runner

    @classmethod
    def from_task(cls, task: Task, *, deselected: list[Deselection] | None = None, **overrides: Any) -> Self:
        """From a task: its image (the solved state; reset() applies the bug), workdir, test command and env;
        `tests` = FAIL_TO_PASS + PASS_TO_PASS. `deselected`: the environment's (its spec's) deselections."""
        fields: dict[str, Any] = {
            "image": task.image,
            "workdir": task.workdir,
            "test_command": task.test_command,
            "test_runner": task.test_runner if is_registered(task.test_runner) else FALLBACK_RUNNER,
            "deselected": deselected or [],
            "env": task.env,
            "tests": [*task.FAIL_TO_PASS, *task.PASS_TO_PASS],
            "task": task,
        }
        return cls.model_validate(fields | overrides)

    @classmethod
    def from_env_spec(cls, spec: EnvSpec, *, allow_failed: bool = False, **overrides: Any) -> Self:
        """From a catalog record. `tests` defaults to the tests that passed in every verification run,
        minus flaky ones (so a fresh episode scores 1.0). Raises ValueError for a failed or image-less spec."""
        if spec.status != "verified" and not allow_failed:
            raise ValueError(
                f"environment {spec.source.name!r} is {spec.status}, not verified; pass "
                "allow_failed=True to use it anyway"
            )
        if not spec.image:
            raise ValueError(f"environment {spec.source.name!r} has no image (its install did not finish)")
        tests = spec.verification.passed_every_run() if spec.verification else []
        fields: dict[str, Any] = {
            "image": spec.image,
            "test_command": spec.test_command or spec.plan.test_command,
            "test_runner": spec.plan.test_runner,
            "deselected": spec.deselected,
            "env": spec.env,
            "tests": tests,
        }
        return cls.model_validate(fields | overrides)

    @classmethod
    def from_spec_file(cls, path: str | Path, **overrides: Any) -> Self:
        """From a spec.json written by the pipeline (see from_env_spec)."""
        return cls.from_env_spec(EnvSpec.model_validate_json(Path(path).read_text()), **overrides)

    @classmethod
    def from_export_row(
        cls,
        row: dict[str, Any],
        *,
        tests: Literal["pass_to_pass", "all_listed", "all"] = "all_listed",
        **overrides: Any,
    ) -> Self:
        """From a swebench-style row. Keys read: `image_name` (required); `test_cmd` or `test_command`
        (a string; the first of a list); `test_runner` (default pytest); `PASS_TO_PASS` and
        `FAIL_TO_PASS` (lists or JSON-encoded lists of node ids); `workdir`; `env` (dict). Other keys
        (instance_id, repo, base_commit, ...) are ignored. `tests` picks the default selection:
        PASS_TO_PASS + FAIL_TO_PASS ("all_listed"), PASS_TO_PASS only, or every test ("all")."""
        if not row.get("image_name"):
            raise ValueError("an export row needs image_name")

        def ids(key: str) -> list[str]:
            value = row.get(key) or []
            value = json.loads(value) if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{key} must be a list of test ids (or its JSON text)")
            return value

        command = row.get("test_cmd") or row.get("test_command")
        command = command[0] if isinstance(command, list) and command else command
        chosen = {
            "pass_to_pass": ids("PASS_TO_PASS"),
            "all_listed": ids("PASS_TO_PASS") + ids("FAIL_TO_PASS"),
            "all": [],
        }[tests]
        fields: dict[str, Any] = {
            "image": row["image_name"],
            "test_command": command or None,
            "test_runner": row.get("test_runner") or DEFAULT_RUNNER,
            "tests": chosen,
        }
        fields |= {k: row[k] for k in ("workdir", "env") if row.get(k)}
        return cls.model_validate(fields | overrides)
