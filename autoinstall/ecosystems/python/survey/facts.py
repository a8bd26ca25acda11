"""RepoFacts: what a repository's files say about how to install and test it, each fact with its evidence."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from autoinstall.ecosystems.base import CompanionNeed
from envs.spec import Evidence

BuildBackend = Literal[
    "setuptools",
    "setup.py",
    "poetry",
    "hatchling",
    "flit",
    "pdm",
    "maturin",
    "scikit-build",
    "meson",
    "other",
]
"""`setup.py`: a setup.py and no `[build-system]`; `other`: see `BuildInfo.backend_path`."""

CommandSource = Literal["ci", "tox", "nox", "hatch", "make", "just", "poe", "docs"]
CommandPurpose = Literal["install", "test", "system", "other"]
TEST_WORDS = ("test", "tests", "testing", "dev", "develop", "ci", "check")
"""Extra, group and env names that usually carry test dependencies."""


def is_test_name(name: str) -> bool:
    """True for names such as `test`, `tests`, `testing`, `dev`, `test-cov`, `py311-test`."""
    parts = name.lower().replace("_", "-").split("-")
    return any(p in TEST_WORDS or p.startswith("test") for p in parts)


class Requirement(BaseModel):
    """One requirement string (PEP 508, or a pip option line such as `-r x.txt`) and where it is."""

    spec: str
    evidence: Evidence


class DepSet(BaseModel):
    """A named list of requirements: an extra, a PEP 735 group, a poetry or pdm group."""

    name: str
    requirements: list[Requirement] = Field(default_factory=list)
    includes: list[str] = Field(default_factory=list)
    """PEP 735 `include-group` names."""
    test_like: bool = False
    """The name says it holds test or dev dependencies."""
    evidence: Evidence | None = None


class RequirementsFile(BaseModel):
    """A pip requirements file."""

    path: str
    """Relative to the repository root."""
    requirements: list[Requirement] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    """Other files named with `-r`/`-c`, as written."""
    test_like: bool = False
    """Its name or folder says it holds test or dev dependencies."""
    docs_like: bool = False


class TaskEnv(BaseModel):
    """A tox env, nox session or hatch environment: what it installs and runs."""

    tool: Literal["tox", "nox", "hatch"]
    name: str
    deps: list[Requirement] = Field(default_factory=list)
    extras: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    """Dependency groups the env installs (tox `dependency_groups`)."""
    commands: list[str] = Field(default_factory=list)
    test_like: bool = False
    evidence: Evidence | None = None
    default: bool = False
    """Run by the tool's default invocation (tox's envlist, nox's default sessions), not a side env."""


class Command(BaseModel):
    """A shell command found in CI, a task runner or the docs."""

    text: str
    source: CommandSource
    purpose: CommandPurpose
    context: str = ""
    """The CI job, make target, tox env or doc file it belongs to."""
    evidence: Evidence


class Named(BaseModel):
    """A name with its evidence: an apt package, a pytest plugin, a lock file, a C source."""

    name: str
    evidence: Evidence


ServiceSource = Literal["ci", "compose", "tox", "nox"]


class Service(BaseModel):
    """A service the tests talk to (postgres, redis, ...): a container CI or a compose file starts, or one a
    tox/nox env points the tests at with a loopback URL."""

    name: str
    image: str
    """The container image, or for tox/nox the URL's scheme (`postgresql`, `redis`)."""
    evidence: Evidence
    source: ServiceSource = "ci"
    env: dict[str, str] = Field(default_factory=dict)
    """The variables CI gives the service container (POSTGRES_DB, MYSQL_USER, ...)."""
    client_env: dict[str, str] = Field(default_factory=dict)
    """The literal variables of the job (and workflow) that runs the tests against it."""


class EntryPoint(BaseModel):
    """A console script the project declares."""

    name: str
    target: str
    evidence: Evidence


class BuildInfo(BaseModel):
    """How the project is built."""

    backend: BuildBackend | None = None
    """None when there is nothing to build (no pyproject build system, setup.py or setup.cfg)."""
    backend_path: str = ""
    """The raw `build-backend` string."""
    requires: list[str] = Field(default_factory=list)
    """`[build-system] requires`."""
    installable: bool = False
    """`pip install .` can work: a build system, a `[project]` table, setup.py or setup.cfg."""
    evidence: Evidence | None = None


class Versioning(BaseModel):
    """Where the version comes from; `needs_vcs` when building needs git metadata."""

    scheme: Literal[
        "static",
        "dynamic",
        "setuptools-scm",
        "hatch-vcs",
        "versioneer",
        "pdm-scm",
        "poetry-dynamic-versioning",
    ]
    needs_vcs: bool = False
    evidence: Evidence | None = None


class PytestConfig(BaseModel):
    """The pytest configuration that applies (pytest reads the first file that has it)."""

    file: str
    testpaths: list[str] = Field(default_factory=list)
    addopts: str = ""
    plugins: list[Named] = Field(default_factory=list)
    """PyPI plugins the configuration implies (addopts, ini keys, required_plugins, `-p`)."""
    evidence: Evidence | None = None


class ImportedModule(BaseModel):
    """A third-party module the code or tests import (stdlib and the project's own modules excluded)."""

    name: str
    """The dotted name as imported, e.g. `google.protobuf` or `yaml`."""
    top: str
    in_tests: bool = False
    in_code: bool = False
    optional: bool = False
    """Every import of it sits in a try block or under `if TYPE_CHECKING`."""
    evidence: Evidence


class TestLayout(BaseModel):
    """Where the tests are and what style they are written in."""

    dirs: list[str] = Field(default_factory=list)
    files: int = 0
    """Number of test modules (test_*.py, *_test.py, and test*.py in test folders)."""
    style: Literal["pytest", "unittest", "none"] = "none"
    conftest: list[str] = Field(default_factory=list)
    load_tests: bool = False
    """Some module uses the unittest `load_tests` protocol, which pytest ignores."""
    file_pattern: str = "test_*.py"
    """`test*.py` when some test modules are not matched by pytest's default patterns."""
    fixtures: list[Named] = Field(default_factory=list)
    """Plugins implied by the tests themselves (`mocker` fixture, `@pytest.mark.asyncio`, ...)."""


LockKind = Literal["uv", "poetry", "pdm", "pipenv", "pip-tools"]


class LockFile(BaseModel):
    """A lock file: the exact versions the project's own CI installs."""

    path: str
    kind: LockKind
    pins: list[str] = Field(default_factory=list)
    """`name==version` (with `; marker` when the lock gives one), read from the lock; empty for uv.lock,
    which `uv export` turns into requirements inside the sandbox."""
    python: str | None = None
    """pip-tools locks compiled for one interpreter (`...-cp311-linux-x86_64.txt`): its X.Y."""
    stale: str = ""
    """Why the lock is out of sync with the manifest ("" when it is in sync)."""
    evidence: Evidence


class RepoFacts(BaseModel):
    """Everything the survey found; each fact carries the file and line it came from."""

    root: str
    """The directory surveyed."""
    ecosystem: str = "python"
    """The ecosystem whose survey this is (see autoinstall/ecosystems/)."""
    project_name: str | None = None
    build: BuildInfo = Field(default_factory=BuildInfo)
    requires_python: str | None = None
    requires_python_evidence: Evidence | None = None
    dependencies: list[Requirement] = Field(default_factory=list)
    extras: list[DepSet] = Field(default_factory=list)
    dependency_groups: list[DepSet] = Field(default_factory=list)
    """PEP 735 `[dependency-groups]`."""
    tool_groups: list[DepSet] = Field(default_factory=list)
    """Poetry groups (`[tool.poetry.group.X]`, `dev-dependencies`) and pdm dev-dependencies."""
    requirements_files: list[RequirementsFile] = Field(default_factory=list)
    task_envs: list[TaskEnv] = Field(default_factory=list)
    commands: list[Command] = Field(default_factory=list)
    apt_packages: list[Named] = Field(default_factory=list)
    services: list[Service] = Field(default_factory=list)
    pytest: PytestConfig | None = None
    entry_points: list[EntryPoint] = Field(default_factory=list)
    c_extensions: list[Named] = Field(default_factory=list)
    """Evidence of compiled code: `ext_modules`, .c/.pyx sources, a compiled-code backend."""
    lock_files: list[str] = Field(default_factory=list)
    locks: list[LockFile] = Field(default_factory=list)
    """The lock files the plan can install from (survey/locks.py)."""
    packages: list[str] = Field(default_factory=list)
    """The project's own top-level import names."""
    imports: list[ImportedModule] = Field(default_factory=list)
    tests: TestLayout = Field(default_factory=TestLayout)
    versioning: Versioning | None = None
    has_git: bool = False
    """The checkout has a `.git` (setuptools-scm and friends can read it)."""
    setup_imports: list[str] = Field(default_factory=list)
    """Third-party modules setup.py imports at build time (numpy, Cython, ...)."""
    companions: list[CompanionNeed] = Field(default_factory=list)
    """Other ecosystems' toolchains the build or tests need (a maturin or setuptools-rust crate:
    survey/rustbuild.py; a front end or tests that run Node: survey/nodebuild.py)."""
    notes: list[str] = Field(default_factory=list)
    """Things that could not be read (malformed files) or that the plan should know."""

    def add_companion(self, need: CompanionNeed) -> None:
        """Record `need`; the ecosystem then names every companion, sorted ("python+node+rust"), so the plan's
        ecosystem gives the base image their toolchains."""
        self.companions.append(need)
        self.ecosystem = "+".join(["python", *sorted({c.ecosystem for c in self.companions})])
