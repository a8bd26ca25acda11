"""The Go ecosystem: go.mod modules built with Debian's Go (or the toolchain go.mod asks for), tested with
`go test -json` for per-test results.

Files: `survey.py` (GoFacts from go.mod, the packages, cgo and CI), `proposal.py` (facts -> plan),
`diagnosis.py` + `repairs.py` (failure -> fix: cgo's Debian packages, GOTOOLCHAIN, go mod tidy,
deselecting tests that need a service or the internet), `pins.py` (the module list and the cache warm-up).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.compiled import CompiledEcosystem, Language
from autoinstall.ecosystems.go import diagnosis, pins
from autoinstall.ecosystems.go.grading import RULES as GRADING
from autoinstall.ecosystems.go.proposal import CHAT_ENVIRONMENT, propose_plan
from autoinstall.ecosystems.go.repairs import repair
from autoinstall.ecosystems.go.survey import GoFacts, survey
from autoinstall.ecosystems.go.toolchain import IMAGE_GO, registry_toolchains
from envs.spec import Plan

PACKAGES = ("golang-go",)
"""Debian's Go, added to the base image (trixie: Go 1.24)."""


def _propose(facts: GoFacts, repo: Path, python: str) -> Plan:
    """The plan for the Debian Go of the base image whose Python is `python`."""
    return propose_plan(facts, repo, python, IMAGE_GO[python])


class GoEcosystem(CompiledEcosystem):
    """Go modules: `go mod download` into the image's module cache, `go build`, `go test -json` per test.
    The base image is trixie's, whose Debian Go (1.24) knows GOTOOLCHAIN; the Go version itself is Debian's or
    the one GOTOOLCHAIN names (a repair, recorded in the env). go.sum pins every module already: the replay
    Dockerfile needs no constraints file."""

    language = Language(name="go", manifests=("go.mod",), survey=survey, propose=_propose,
                        chat_environment=CHAT_ENVIRONMENT, packages=PACKAGES, diagnosis=diagnosis,
                        repair=repair, registry="the Go module proxy", pins=pins, grading=GRADING)
    registry_toolchains = staticmethod(registry_toolchains)
    """The Go the module proxy gave, for the spec (autoinstall/ecosystems/toolchains.py `records`)."""
    host_toolchain = ("go", IMAGE_GO["3.13"])
    """The host's newer Go trees can replace Debian's Go (toolchain.py; a chat model's switch_python names one)."""


__all__ = ["GoEcosystem", "GoFacts"]
