"""What phase 2 produced (the Installer's record, autoinstall/install/loop.py)."""
from __future__ import annotations

from pydantic import BaseModel, Field

from envs.spec import Deselection, Failure, Plan, Repair, Step, StepLog, StubRecord, TestRun


class InstallResult(BaseModel):
    """What phase 2 produced: the steps that worked, the last good snapshot, and what was changed."""

    ok: bool
    python: str
    snapshot: str | None = None
    """The last good snapshot (the environment after the last successful step)."""
    snapshots: list[str] = Field(default_factory=list)
    """Every snapshot made, for clean-up once the environment image is tagged."""
    steps: list[Step] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    stubs: list[StubRecord] = Field(default_factory=list)
    deselected: list[Deselection] = Field(default_factory=list)
    skipped: list[Repair] = Field(default_factory=list)
    """Auxiliary steps dropped because they failed and nothing fixed them."""
    stub_wheels: dict[str, bytes] = Field(default_factory=dict, exclude=True)
    log: list[StepLog] = Field(default_factory=list)
    repairs: list[Repair] = Field(default_factory=list)
    failure: Failure | None = None
    plan: Plan | None = None
    """The plan as it ended: test_args repairs change its test command."""
    last_run: TestRun | None = Field(default=None, exclude=True)
    """The passing run of the final test command that ended the install loop, on the tree the final snapshot
    holds, the network off and `deselected` left out (None when anything changed after it): verification may
    count it as its first run (autoinstall/verify)."""
