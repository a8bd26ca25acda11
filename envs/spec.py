"""THE record: what the builder writes and what the catalog, exports, runtime and trainers read.

A plan (steps, checks, evidence), test results, the verification verdict, diagnoses and repairs as they
were logged, and the environment spec that holds them all. Pydantic models only: no behaviour that needs
anything but pydantic, so every layer can import this module.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.source_record import SourceRecord
from envs.toolchain_record import ToolchainRecord

# -- the plan ---------------------------------------------------------------------------------------------
MAX_STEPS = 10

TestRunner = Literal["pytest", "unittest", "custom", "go", "cargo", "node", "maven", "none"]
"""Who runs a plan's tests, and so how their results are read (envs/testrun/ has one module per runner)."""

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
    """Seconds it may run (within Budgets.step_timeout_s); in a spec's `steps`, the seconds it ran with (more
    when a `more_time` repair gave it more). The replay Dockerfile runs it without a timeout."""


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
    ecosystem: str = "python"
    """The ecosystem whose tools install and test this plan (autoinstall/ecosystems/)."""
    workdir: str = "."
    """The project's folder in the checkout, relative to it ("." the root): where its commands run (they
    say `cd FOLDER && ...`) and where the runner's default configuration is collected."""
    python: str = "3.11"
    """Interpreter version the base image should provide (X.Y)."""
    steps: list[Step] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    test_command: str | None = None
    """The project's own test command (pytest is given --junitxml by the verifier); None if no tests."""
    test_runner: TestRunner = "pytest"
    notes: list[str] = Field(default_factory=list)

    @field_validator("steps")
    @classmethod
    def _at_most_ten(cls, steps: list[Step]) -> list[Step]:
        if len(steps) > MAX_STEPS:
            msg = f"a plan has at most {MAX_STEPS} steps, got {len(steps)}"
            raise ValueError(msg)
        return steps


# -- test results -----------------------------------------------------------------------------------
Outcome = Literal["passed", "failed", "error", "skipped"]


class TestResult(BaseModel):
    __test__ = False
    test_id: str
    """A pytest node id (path::Class::name) where it can be rebuilt from the XML."""
    outcome: Outcome
    duration_s: float = 0.0
    message: str = ""


class TestRun(BaseModel):
    """One run of the test command."""

    __test__ = False
    exit_code: int
    duration_s: float = 0.0
    results: list[TestResult] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """passed/failed/error/skipped, from results or (custom runners) from the summary line."""
    collection_ok: bool = True
    timed_out: bool = False
    """The run hit its timeout and was killed."""
    forks_refused: int = 0
    """Processes the sandbox's pids limit refused to create during the run (0 where it cannot be read)."""
    sandbox: Literal["image", "install"] = "image"
    """Where it ran: in a fresh sandbox of the environment's image, or (`install`) in the install phase's sandbox,
    on the same tree with the network off, as its last run before the image was committed: verification counts
    such a run as its first only when the image's own run agreed with it test for test (autoinstall/verify)."""
    crashed_test: str = ""
    """The test that was running when the test process died before writing its report (pytest: the per-test
    plugin's record of the test it started last); "" when unknown or nothing crashed."""
    output_tail: str = ""
    output: str = Field(default="", exclude=True, repr=False)
    """The whole output the sandbox kept, for diagnosis (a missing module is named early in a long log); never
    recorded: the spec keeps `output_tail`."""

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def ran(self) -> int:
        return sum(self.counts.get(k, 0) for k in ("passed", "failed", "error"))

    @property
    def pass_rate(self) -> float:
        return self.passed / self.ran if self.ran else 0.0


# -- verification -----------------------------------------------------------------------------------
DEFAULT_THRESHOLD = 0.9


def pass_rate(counts: Mapping[str, int]) -> float:
    """Verification's rule over combined counts: passed over the tests that ran (skipped ones are not counted;
    flaky ones count as not passed)."""
    ran = sum(counts.get(k, 0) for k in ("passed", "failed", "error", "flaky"))
    return counts.get("passed", 0) / ran if ran else 0.0


class Deselection(BaseModel):
    """A test (pytest node id) or test file left out of verification, and why.

    Reasons the builder gives itself start with a word: `hangs: ...` (the per-test timeout stopped it),
    `collection_error: <first line>` (the file cannot be imported and no repair fixed it).
    """

    test: str
    reason: str
    uncollected: int | None = None
    """For a file the runner cannot collect: its tests by a static count, added to the suite's size so that
    they count against the deselection cap (the runner's own counts never see them)."""


class CheckResult(BaseModel):
    name: str
    kind: str
    command: str
    required: bool
    ok: bool
    exit_code: int
    duration_s: float
    output_tail: str = ""
    output: str = Field(default="", exclude=True, repr=False)
    """The whole output, for diagnosis; never recorded (see TestRun.output)."""


DEFAULT_MAX_DESELECTED = 0.05


class Collection(BaseModel):
    """How many tests the suite has, counted by the runner itself (tests, not files or entries)."""

    default: int | None = None
    """Collected by the runner's own default configuration (pytest: its ini/testpaths, run from the root)."""
    command: int | None = None
    """Collected by the plan's test command, nothing deselected."""
    selected: int | None = None
    """Collected by the plan's test command with the deselections: what verification runs."""
    notes: list[str] = Field(default_factory=list)
    """Why a count is missing or was taken another way."""

    @property
    def deselected(self) -> int | None:
        return None if self.command is None or self.selected is None else max(0, self.command - self.selected)

    @property
    def suite(self) -> int | None:
        """The size of the suite to compare with: the default collection, else the command's."""
        return self.default if self.default else self.command


class Verification(BaseModel):
    """The verdict on one environment."""

    verified: bool
    reason: str = ""
    checks: list[CheckResult] = Field(default_factory=list)
    runs: list[TestRun] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    """Tests whose outcome differed between runs."""
    threshold: float = DEFAULT_THRESHOLD
    max_deselected: float = DEFAULT_MAX_DESELECTED
    """Largest share of the suite that may be left out for the environment to count as verified."""
    collection: Collection | None = None
    """The suite's size, by the runner (None for runners that cannot collect)."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Over all runs, per test: passed (in every run), failed, error, skipped, flaky."""
    crashed_runs: list[TestRun] = Field(default_factory=list)
    """Runs whose process died on a crash signal (SIGSEGV, SIGBUS, SIGABRT, ...) before reporting any test; each
    was run again once (at most one retry per verification), so `runs` holds the retries."""
    crashed_tests: list[Deselection] = Field(default_factory=list)
    """Tests a run named as the one its process crashed in (SIGSEGV...), left out of the runs after it: the
    build records them with its deselections (reason `crashes: ...`), and the cap counts them."""

    @property
    def last_run(self) -> TestRun | None:
        return self.runs[-1] if self.runs else None

    def passed_every_run(self) -> list[str]:
        """The tests that passed in every run, minus flaky ones, in the last run's order: what a fresh episode
        scores 1.0 on (a test missing from one run did not pass there)."""
        if not self.runs:
            return []
        passed_in = [{r.test_id for r in run.results if r.outcome == "passed"} for run in self.runs]
        every = set.intersection(*passed_in) - set(self.flaky)
        return [r.test_id for r in self.runs[-1].results if r.test_id in every]


# -- diagnoses and repairs, as logged -------------------------------------------------------------------
DiagnosisKind = Literal[
    "missing_module",
    "missing_header",
    "missing_library",
    "missing_cmake",
    "missing_tool",
    "python_version",
    "vcs_version",
    "unknown_pytest_option",
    "unknown_pytest_config",
    "unknown_pytest_marker",
    "deprecation_as_error",
    "dependency_drift",
    "async_tests_without_plugin",
    "no_distribution",
    "installer_parse_error",
    "service_unavailable",
    "network_required",
    "stub_used",
    "timeout",
    "unknown",
]


class Diagnosis(BaseModel):
    """What a failure means: a kind, the name it is about, and the output line that shows it."""

    kind: DiagnosisKind
    subject: str = ""
    """The module, header, library, tool, option, distribution or version the failure is about."""
    evidence: str = ""

    def describe(self) -> str:
        return f"{self.kind.replace('_', ' ')}: {self.subject}" if self.subject else self.kind


RepairKind = Literal["insert_before", "replace", "set_env", "switch_python", "stub_distribution",
                     "deselect", "skip", "test_args", "test_command", "more_time", "give_up"]


class Repair(BaseModel):
    """One fix. `insert_before` runs `step` then retries the failing command; `replace` swaps it; `skip` drops
    an auxiliary step (never the project install); `more_time` runs a timed-out step again with `timeout_s`."""

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
    test_command: str | None = None
    """For test_command: the whole new test command (e.g. the old one behind the services' start script)."""
    timeout_s: float | None = None
    """For more_time: the seconds asked for the step's one more run (the install loop grants at most what the
    build's time budget has left; the step is recorded with what it got)."""
    left_out: list[Deselection] = Field(default_factory=list)
    """Left out of the suite with this repair, whatever its kind, each counted against the cap (a reactor
    module whose build cannot complete here, with the tests it holds). Only the embedded rules set it."""


# -- the environment ---------------------------------------------------------------------------------
SPEC_FORMAT = "autoinstall-env/1"

FailureClass = Literal["source_error", "no_build_files", "no_tests", "install_failed", "collection_failed",
                       "tests_failing", "tests_crashed", "narrow_suite", "deselection_cap", "tests_timeout", "verify_timeout", "memory_limit", "pids_limit", "disk_limit", "budget_exhausted", "infrastructure",
                       "rebuild_mismatch", "model_error"]


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
    idle_s: float | None = None
    """For a command that timed out: how long before its timeout it last printed something or grew its files
    (ExecResult.idle_s); None when not known."""
    log_file: str = ""
    """Path of the full output, relative to the environment's directory."""
    network: bool | None = None
    """Whether the command ran with the network on: install steps do, the project's checks and tests do
    not (None in records written before this was kept)."""
    diagnosis: Diagnosis | None = None
    repair: Repair | None = None


class Timings(BaseModel):
    source_s: float = 0.0
    propose_s: float = 0.0
    install_s: float = 0.0
    verify_s: float = 0.0
    total_s: float = 0.0


class EnvSpec(BaseModel):
    """One environment: verified or failed, and exactly how it was made."""

    format: str = SPEC_FORMAT
    status: Literal["verified", "partial", "failed"]
    """verified: the suite runs and passes as the record says; partial: it runs and passes, but too much of
    the suite is left out (see failure); failed: see failure."""
    source: SourceRecord
    model: str
    base_image: str | None = None
    python: str | None = None
    toolchains: list[ToolchainRecord] = Field(default_factory=list)
    """Compilers used instead of the base suite's, with their origin (envs/toolchain_record.py); none: the suite's."""
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
