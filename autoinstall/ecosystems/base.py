"""The ecosystem protocol: what the generic stages ask of a language, and what a model is told about a
failure (RepairContext).

An ecosystem (`python/`, later node, go, rust, java) is the only place that knows one language: how to
recognise it, survey it, propose steps and checks, read its failures and repair them, run its tests, pin what
was installed and which base image it needs. The stages (survey, plan, install, verify, record) call these
methods and name no language tool themselves.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, computed_field

from envs.base import Sandbox, SandboxFactory
from envs.grading.policy import GradingRules
from envs.spec import Diagnosis, Evidence, Plan, Repair, Step

Log = Callable[[str], None]
STUB_DIR = "/opt/autoinstall/stubs"
"""Where stub packages live inside an environment (the ecosystem's `stub_env` points its installer here)."""


class FailedTest(BaseModel):
    """One failing test, as the verifier saw it."""

    test_id: str
    message: str = ""


PROGRESS_SHARE = 0.25
PROGRESS_FLOOR_S = 8.0
"""A command that timed out was still working when it printed something or grew its files in the last quarter
of its time; for a short timeout in its last 8 s (the disk watch measures every 3 s), at most its last half."""


class Overrun(BaseModel):
    """An install step stopped at its timeout: the time it had, how long it had been idle, what the build has left."""

    timeout_s: float
    """The seconds it ran with."""
    idle_s: float | None = None
    """How long before the stop it last printed something or grew its files (ExecResult.idle_s); None when the
    sandbox cannot tell."""
    remaining_s: float
    """What the build's time budget (Budgets.wall_s, --time-budget) has left."""
    retried: bool = False
    """The step already had its one more run with more time."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def progressing(self) -> bool:
        """Whether it was still working when it was stopped (see PROGRESS_SHARE)."""
        window = max(PROGRESS_SHARE * self.timeout_s, min(PROGRESS_FLOOR_S, self.timeout_s / 2))
        return self.idle_s is not None and self.idle_s <= window


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
    overrun: Overrun | None = None
    """When the failing install step ran out of time: whether it was still working, and what time is left."""
    repo: Path | None = Field(default=None, exclude=True)
    """The checkout on this machine (read through repofiles, never run), for rules that read its files; not
    shown to chat models."""

    def already_tried(self, repair: Repair) -> bool:
        key = repair.model_dump(exclude={"reason"})
        return any(t.model_dump(exclude={"reason"}) == key for t in self.tried)


class CompanionNeed(BaseModel):
    """A leading ecosystem's survey finding that its build needs another ecosystem's toolchain (a Python
    package whose build compiles a Rust crate)."""

    ecosystem: str
    """The companion's name, e.g. "rust"."""
    root: str = "."
    """The companion project's directory in the checkout (where its manifest is), relative to the root."""
    evidence: Evidence
    needed_by: Literal["build", "tests"] = "build"
    """What runs the companion's toolchain: the lead's build (which then installs what it needs itself) or its
    tests (the companion's own dependencies are installed for them)."""


class Companion(BaseModel):
    """What a companion ecosystem lends a leading one: Debian packages for the base image, environment
    variables for the lead's project step, install steps run (online) before and after it, and text for chat
    models. An ecosystem that can lend its toolchain defines `companion(need=None, repo=None) -> Companion` (an
    optional member of the protocol): the steps for `need` in checkout `repo`, or without them the toolchain."""

    ecosystem: str
    packages: tuple[str, ...] = ()
    toolchains: tuple[str, ...] = ()
    """The lead's toolchains (base images) to prefer for this companion: where Debian's version of it is
    recent enough (Rust: trixie's rustc); none when any will do."""
    env: dict[str, str] = Field(default_factory=dict)
    """Set for the lead's project step (prefixed to its command)."""
    steps: list[Step] = Field(default_factory=list)
    """Run before the lead's project step."""
    after: list[Step] = Field(default_factory=list)
    """Run right after it (what the build itself resolved is known then)."""
    chat_environment: str = ""
    notes: list[str] = Field(default_factory=list)


@runtime_checkable
class Facts(Protocol):
    """What an ecosystem's survey returns: a pydantic model with at least these fields."""

    root: str
    ecosystem: str
    notes: list[str]

    def model_dump_json(self, **kwargs: object) -> str: ...


@runtime_checkable
class Ecosystem(Protocol):
    """Everything that knows one language. Implementations hold no state; one instance serves all builds."""

    name: str
    """Short name recorded in plans and specs, e.g. "python"."""
    toolchains: tuple[str, ...]
    """Toolchain versions the base images can provide here, preferred first (Python: "3.11", "3.13")."""
    chat_environment: str
    """For chat models: where commands run, which tools and registries there are, how tests run offline."""

    def detect(self, repo: Path) -> bool:
        """True when the checkout at `repo` looks like a project of this language (nothing is run)."""
        ...

    def survey(self, repo: Path) -> Facts:
        """What the repository's files say about installing and testing it, each fact with file:line evidence."""
        ...

    def propose(self, facts: Facts, repo: Path, toolchains: tuple[str, ...]) -> Plan:
        """The embedded model's phase 1: at most 10 steps and the checks that prove they worked."""
        ...

    def diagnose(self, output: str, *, timed_out: bool = False) -> Diagnosis:
        """What a failed command's output means, in terms a repair rule can act on."""
        ...

    def repair(self, context: RepairContext) -> Repair | None:
        """The embedded model's phase 2: one fix for a diagnosed failure, or None to give up."""
        ...

    def justifies_deselection(self, message: str) -> bool:
        """True when a failing test's message shows why it cannot run here (a service not running, the
        internet, a stubbed dependency): the only evidence a deselection is accepted on, whoever proposes it."""
        ...

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        """The tag of a base image from `factory` that provides `toolchain` (built on first use)."""
        ...

    stub_env: dict[str, str]
    """Environment variables that make the installer find packages in STUB_DIR."""
    pin_env: tuple[str, ...]
    """Variables the replay Dockerfile points at the constraints file (empty: nothing is pinned)."""
    grading: GradingRules
    """What of an agent's change to a task belongs to the task, not to the fix: test files and data, test and
    runner configuration, manifests, build output, what shadows an import (envs/grading/policy.py)."""

    def stub(self, distribution: str, import_name: str, output: str) -> tuple[str, bytes]:
        """A stand-in package for a dependency no registry has: (file name, bytes), put in STUB_DIR."""
        ...

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        """Test files of the checkout that import `import_name` (deselected when it is a stub)."""
        ...

    def freeze(self, sandbox: Sandbox) -> str:
        """The installed versions, as constraints the replay Dockerfile pins every step to ("" if unknown)."""
        ...

    def as_of(self, date: str) -> dict[str, str]:
        """Environment variables that make the installers resolve dependencies as of `date` (ISO 8601)."""
        ...

    def warm(self, sandbox: Sandbox, constraints: str) -> None:
        """Fill the shared package cache with the pinned packages in a trusted sandbox: registry artifacts
        only, running nothing from the project or any source build. Failures are ignored."""
        ...

    def constraints(self, freeze: str, project: str | None) -> str:
        """`freeze` minus the project itself and what cannot be pinned by version."""
        ...
