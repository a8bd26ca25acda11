"""The Go ecosystem: go.mod modules built with Debian's Go (or the toolchain go.mod asks for), tested with
`go test -json` for per-test results.

Files: `survey.py` (GoFacts from go.mod, the packages, cgo and CI), `proposal.py` (facts -> plan),
`diagnosis.py` + `repairs.py` (failure -> fix: cgo's Debian packages, GOTOOLCHAIN, go mod tidy,
deselecting tests that need a service or the internet), `pins.py` (the module list and the cache warm-up).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.go.diagnosis import NETWORK_OFF, SERVICE_REFUSED, diagnose
from autoinstall.ecosystems.go.grading import RULES as GRADING
from autoinstall.ecosystems.go.pins import constraints, freeze, warm
from autoinstall.ecosystems.go.proposal import propose_plan
from autoinstall.ecosystems.go.repairs import repair
from autoinstall.ecosystems.go.survey import GoFacts, survey
from autoinstall.ecosystems.go.toolchain import IMAGE_GO, registry_toolchains
from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.rules import LockPinned
from envs.spec import Plan

PACKAGES = ("golang-go",)
"""Debian's Go, added to the base image (trixie: Go 1.24)."""


class GoEcosystem(LockPinned):
    """Go modules: `go mod download` into the image's module cache, `go build`, `go test -json` per test."""

    name = "go"
    manifests = ("go.mod",)
    """Files that make a folder a project of its own (subprojects.py: a monorepo's packages)."""
    toolchains = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian Go (1.24) knows GOTOOLCHAIN.
    The Go version itself is Debian's or the one GOTOOLCHAIN names (a repair, recorded in the env)."""
    chat_environment = (
        "Commands run with bash in /workspace (a Go module) inside a Debian container with Debian's Go "
        "toolchain; modules come from the Go module proxy (`go mod download`). Build with `go build ./...`; "
        "tests run offline with `go test ./...` (test_runner go).")
    PACKAGES = PACKAGES
    REGISTRY = "the Go module proxy"
    SERVICE_REFUSED = SERVICE_REFUSED
    NETWORK_OFF = NETWORK_OFF
    pin_env = ()
    grading = GRADING
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""
    """go.sum pins every module already: the replay Dockerfile needs no constraints file."""

    def detect(self, repo: Path) -> bool:
        return is_file(repo, repo / "go.mod")

    # The protocol methods that are this package's functions as they are.
    survey = staticmethod(survey)
    diagnose = staticmethod(diagnose)
    repair = staticmethod(repair)
    freeze = staticmethod(freeze)
    warm = staticmethod(warm)
    constraints = staticmethod(constraints)
    registry_toolchains = staticmethod(registry_toolchains)
    """The Go the module proxy gave, for the spec (autoinstall/ecosystems/toolchains.py `records`)."""

    def propose(self, facts: GoFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        # `toolchains` are the model's Python versions, not Go's: the image is always this ecosystem's.
        python = self.toolchains[0]
        return propose_plan(facts, Path(repo), python, IMAGE_GO[python])


__all__ = ["GoEcosystem", "GoFacts"]
