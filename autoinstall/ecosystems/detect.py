"""The ecosystems in the order detection tries them, with an explicit fallback (as repo2docker's buildpacks)."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.ecosystems.go import GoEcosystem
from autoinstall.ecosystems.java import JavaEcosystem
from autoinstall.ecosystems.node import NodeEcosystem
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.ecosystems.rust import RustEcosystem

PYTHON: Ecosystem = PythonEcosystem()
ECOSYSTEMS: list[Ecosystem] = [GoEcosystem(), RustEcosystem(), JavaEcosystem(), PYTHON,
                              NodeEcosystem()]
"""Tried in order; the first that detects the repository leads its plan. Go first: a root go.mod is a sure
sign, while a stray script or requirements file at the root of a Go module would make it look Python. Rust
before Python for the same reason: a root Cargo.toml is the build (a pyproject.toml beside it is usually
maturin's Python bindings, whose tests need the crate built first); a root pom.xml too (a Maven build
with helper scripts beside it is more common than a Python package with a pom). Node after Python: a
package.json beside a Python package is usually tooling (docs, linters, a front end), while a Node package rarely has
Python build files at its root."""
FALLBACK: Ecosystem = PYTHON
"""Used when none detects the repository: its survey then finds nothing and the build says so."""


def detect(repo: Path) -> list[Ecosystem]:
    """The ecosystems whose files the checkout has, in ECOSYSTEMS order; [FALLBACK] when none has."""
    found = [eco for eco in ECOSYSTEMS if eco.detect(Path(repo))]
    return found or [FALLBACK]


def get_ecosystem(name: str) -> Ecosystem:
    """The ecosystem recorded in a plan or spec by its name."""
    for eco in ECOSYSTEMS:
        if eco.name == name:
            return eco
    msg = f"unknown ecosystem {name!r} (available: {', '.join(e.name for e in ECOSYSTEMS)})"
    raise ValueError(msg)
