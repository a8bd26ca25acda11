"""The environment record: everything needed to trust, rebuild and reuse one environment."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from autoinstall.diagnose import Diagnosis
from autoinstall.plan import Plan, Step
from autoinstall.repair import Repair
from autoinstall.verify import Deselection, Verification

SPEC_FORMAT = "autoinstall-env/1"

FailureClass = Literal["source_error", "no_build_files", "no_tests", "install_failed", "collection_failed",
                       "tests_failing", "budget_exhausted", "infrastructure", "rebuild_mismatch",
                       "model_error"]


class Failure(BaseModel):
    """Why an environment is not verified, with the evidence."""

    failure_class: FailureClass
    message: str
    step_index: int | None = None
    """1-based index of the failing install step, when one failed."""
    evidence: str = ""


class StubRecord(BaseModel):
    """A distribution that could not be installed and was replaced by a stub module."""

    distribution: str
    import_name: str
    reason: str


class StepLog(BaseModel):
    """One command run during install, successful or not."""

    index: int
    phase: Literal["install", "check", "tests"]
    command: str
    exit_code: int
    duration_s: float
    timed_out: bool = False
    log_file: str = ""
    """Path of the full output, relative to the environment's directory."""
    diagnosis: Diagnosis | None = None
    repair: Repair | None = None


class Timings(BaseModel):
    source_s: float = 0.0
    propose_s: float = 0.0
    install_s: float = 0.0
    verify_s: float = 0.0
    total_s: float = 0.0


class SourceRecord(BaseModel):
    """Where the code came from."""

    repo: str
    name: str
    commit: str | None = None
    commit_date: str | None = None
    is_dirty: bool = False
    """A local work tree with uncommitted changes: the checkout is not exactly `commit`."""
    content_digest: str | None = None
    """sha256 of the checkout's files (set when there is no clean commit to name it by)."""

    @property
    def revision(self) -> str:
        """What names this version of the code: the commit, or a content digest for plain/dirty dirs."""
        if self.commit and not self.is_dirty:
            return self.commit[:12]
        digest = (self.content_digest or "unknown")[:12]
        return f"{self.commit[:7]}-dirty-{digest[:8]}" if self.commit else f"dir-{digest}"


class EnvSpec(BaseModel):
    """One environment: verified or failed, and exactly how it was made."""

    format: str = SPEC_FORMAT
    status: Literal["verified", "failed"]
    source: SourceRecord
    model: str
    base_image: str | None = None
    python: str | None = None
    image: str | None = None
    """The environment image (tag). For a failed build: its last good state, where `debug` starts."""
    env_dir: str | None = None
    """Host directory with spec.json, Dockerfile, context/ and logs/."""
    plan: Plan
    steps: list[Step] = Field(default_factory=list)
    """The steps that succeeded, in the order they ran: what the Dockerfile replays."""
    env: dict[str, str] = Field(default_factory=dict)
    stubs: list[StubRecord] = Field(default_factory=list)
    deselected: list[Deselection] = Field(default_factory=list)
    skipped: list[Repair] = Field(default_factory=list)
    """Planned steps that failed, could not be fixed, and were left out (never the project install)."""
    test_command: str | None = None
    verification: Verification | None = None
    failure: Failure | None = None
    log: list[StepLog] = Field(default_factory=list)
    timings: Timings = Field(default_factory=Timings)
    dockerfile: str | None = None
    created_at: str = ""
