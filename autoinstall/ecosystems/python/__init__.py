"""The Python ecosystem: pyproject/setup/tox/nox/requirements survey, the embedded rules, name maps, stubs.

Files: `survey/` (RepoFacts from the repository's files), `proposal/` (facts -> plan: deps, interpreter
and Debian packages, services CI starts (run here through autoinstall/ecosystems/services.py), test command
and checks; `proposal/locked.py` installs from lock files, `proposal/runners.py` reads a unittest discovery
and a runner script's subcommands), `diagnosis.py` + `repairs.py` (failure -> fix),
`timemachine.py` (resolve as of the commit date, build tooling exempt), `pypi_names.py`, `pytest_plugins.py`, `imports.py` (name maps and import extraction), `stubs.py`.
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import STUB_DIR, Log, RepairContext
from autoinstall.ecosystems.browsers import unobtainable_browser
from autoinstall.ecosystems.python.diagnosis import NETWORK_OFF, STUB_USED, diagnose
from autoinstall.ecosystems.python.grading import RULES as GRADING
from autoinstall.ecosystems.python.index import stub_refusal
from autoinstall.ecosystems.python.pins import constraints_from_freeze, freeze, warm
from autoinstall.ecosystems.python.proposal.assemble import propose_plan
from autoinstall.ecosystems.python.repairs import SERVICE_FAILURE, repair
from autoinstall.ecosystems.python.stubs import build_stub_wheel, files_importing, stub_version
from autoinstall.ecosystems.python.survey import survey
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.python.survey.rustbuild import takes_lead
from autoinstall.ecosystems.python.timemachine import as_of
from autoinstall.ecosystems.repofiles import RepoFiles, is_file
from autoinstall.ecosystems.services import well_known_service
from autoinstall.errors import AutoinstallError
from envs.base import Sandbox, SandboxFactory
from envs.hostfacts import buildable_pythons
from envs.spec import Diagnosis, Plan, Repair

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini", "noxfile.py", "Pipfile")
"""Files whose presence at the root says "a Python project"."""


class PythonEcosystem:
    """Python projects: pip/uv installs into /opt/venv, pytest or unittest, uv pip freeze pins."""

    name = "python"
    manifests = ("pyproject.toml", "setup.py", "setup.cfg")
    """Files that make a folder a project of its own (subprojects.py: a monorepo's packages)."""
    markers = (*MARKERS, "requirements*.txt", "*.py")
    """What `detect` looks for at the root (listed by a `no_build_files` failure)."""

    @property
    def toolchains(self) -> tuple[str, ...]:
        """The interpreters base images can be built for here, preferred first: Debian's (3.11, 3.13, 3.9),
        then the host's own CPython builds (envs/hostfacts.py), newest first."""
        return tuple(buildable_pythons())
    chat_environment = (
        "Commands run with bash in /workspace (the repository) inside a Debian container whose Python venv "
        "/opt/venv is active and where `uv` is on PATH; prefer `uv pip install`. Always install the local "
        "checkout (e.g. `uv pip install -e .[test]`), never the project's PyPI release. Checks: import checks, "
        "a pytest --collect-only check, entry points; test_runner pytest, unittest or custom.")
    stub_env = {"UV_FIND_LINKS": STUB_DIR, "PIP_FIND_LINKS": STUB_DIR}
    pin_env = ("UV_CONSTRAINT", "PIP_CONSTRAINT")
    grading = GRADING
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""
    """Variables the replay Dockerfile points at the constraints file."""

    def detect(self, repo: Path) -> bool:
        return any(is_file(repo, repo / name) for name in MARKERS) \
            or any(is_file(repo, p) for pattern in ("requirements*.txt", "*.py") for p in repo.glob(pattern))

    def takes_lead(self, repo: Path) -> bool:
        """Lead even where Rust detects a root Cargo.toml: the package's build compiles the crate (maturin,
        setuptools-rust) and it has Python tests; its plan then borrows Rust's toolchain (a companion)."""
        return takes_lead(repo)

    def survey(self, repo: Path) -> RepoFacts:
        return survey(repo)

    def propose(self, facts: RepoFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        return propose_plan(facts, Path(repo), toolchains or self.toolchains)

    def diagnose(self, output: str, *, timed_out: bool = False) -> Diagnosis:
        return diagnose(output, timed_out=timed_out)

    def repair(self, context: RepairContext) -> Repair | None:
        return repair(context)

    def justifies_deselection(self, message: str) -> bool:
        refused = SERVICE_FAILURE.search(message) and well_known_service(message)
        return bool(refused or NETWORK_OFF.search(message) or STUB_USED.search(message)
                    or unobtainable_browser(message))

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        return factory.base_image(python=toolchain, log=log)

    def stub(self, distribution: str, import_name: str, output: str) -> tuple[str, bytes]:
        """A stub wheel, only for a name the index does not have (AutoinstallError says why not otherwise)."""
        if refusal := stub_refusal(distribution):
            raise AutoinstallError(refusal)
        return build_stub_wheel(distribution, import_name, stub_version(distribution, output))

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        files = RepoFiles(repo)
        tests = {files.rel(p): files.text(files.rel(p)) or "" for p in files.walk((".py",), limit=20000)
                 if "test" in p.name or "tests" in p.relative_to(repo).parts}
        return files_importing(tests, import_name)

    def freeze(self, sandbox: Sandbox) -> str:
        return freeze(sandbox)

    def as_of(self, date: str | None) -> dict[str, str]:
        """Dependencies as of `date`, build tooling exempt; latest releases (and why) without a usable date."""
        return as_of(date)

    def warm(self, sandbox: Sandbox, constraints: str) -> None:
        warm(sandbox, constraints)

    def constraints(self, freeze: str, project: str | None) -> str:
        return constraints_from_freeze(freeze, project)


__all__ = ["PythonEcosystem", "RepoFacts"]
