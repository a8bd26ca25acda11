"""The Go ecosystem: go.mod modules built with Debian's Go (or the toolchain go.mod asks for), tested with
`go test -json` for per-test results.

Files: `survey.py` (GoFacts from go.mod, the packages, cgo and CI), `proposal.py` (facts -> plan),
`diagnosis.py` + `repairs.py` (failure -> fix: cgo's Debian packages, GOTOOLCHAIN, go mod tidy,
deselecting tests that need a service or the internet), `pins.py` (the module list and the cache warm-up).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import Log, RepairContext
from autoinstall.ecosystems.go.diagnosis import NETWORK_OFF, SERVICE_REFUSED, diagnose
from autoinstall.ecosystems.go.pins import constraints, freeze, warm
from autoinstall.ecosystems.go.proposal import propose_plan
from autoinstall.ecosystems.go.repairs import repair
from autoinstall.ecosystems.go.survey import GoFacts, survey
from autoinstall.errors import AutoinstallError
from envs.base import Sandbox, SandboxFactory
from envs.spec import Diagnosis, Plan, Repair

PACKAGES = ("golang-go",)
"""Debian's Go, added to the base image (trixie: Go 1.24)."""
IMAGE_GO = {"3.13": "1.24", "3.11": "1.19"}
"""Debian's Go by the base image's Python (trixie, bookworm): what GOTOOLCHAIN has to beat."""


class GoEcosystem:
    """Go modules: `go mod download` into the image's module cache, `go build`, `go test -json` per test."""

    name = "go"
    toolchains = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian Go (1.24) knows GOTOOLCHAIN.
    The Go version itself is Debian's or the one GOTOOLCHAIN names (a repair, recorded in the env)."""
    stub_env: dict[str, str] = {}
    pin_env = ()
    """go.sum pins every module already: the replay Dockerfile needs no constraints file."""

    def detect(self, repo: Path) -> bool:
        return (repo / "go.mod").is_file()

    def survey(self, repo: Path) -> GoFacts:
        return survey(repo)

    def propose(self, facts: GoFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        # `toolchains` are the model's Python versions, not Go's: the image is always this ecosystem's.
        python = self.toolchains[0]
        return propose_plan(facts, Path(repo), python, IMAGE_GO[python])

    def diagnose(self, output: str, *, timed_out: bool = False) -> Diagnosis:
        return diagnose(output, timed_out=timed_out)

    def repair(self, context: RepairContext) -> Repair | None:
        return repair(context)

    def justifies_deselection(self, message: str) -> bool:
        return bool(SERVICE_REFUSED.search(message) or NETWORK_OFF.search(message))

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        return factory.base_image(python=toolchain, log=log, packages=PACKAGES)

    def stub(self, distribution: str, import_name: str, output: str) -> tuple[str, bytes]:
        """Not applicable: a Go module no proxy has cannot be stood in for. The embedded rules never ask; a
        model that does ends the build with this one-line error (the loop has no way to refuse a repair)."""
        msg = (f"a stub for {distribution} was asked for, but Go modules cannot be stubbed: make the module "
               "reachable through the module proxy, or build with a model that does not propose stubs")
        raise AutoinstallError(msg)

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        return []

    def freeze(self, sandbox: Sandbox) -> str:
        return freeze(sandbox)

    def as_of(self, date: str) -> dict[str, str]:
        """Nothing: go.sum pins every version already, whatever the date."""
        return {}

    def warm(self, sandbox: Sandbox, constraints: str) -> None:
        warm(sandbox, constraints)

    def constraints(self, freeze: str, project: str | None) -> str:
        return constraints(freeze, project)


__all__ = ["GoEcosystem", "GoFacts"]
