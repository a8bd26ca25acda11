"""The Rust ecosystem: Cargo packages and workspaces built with Debian trixie's rustc/cargo (1.85), the
crates vendored into the image, tested with `cargo test` read per test from libtest's output.

Files: `survey.py` (RustFacts from Cargo.toml, Cargo.lock, -sys crates, rust-toolchain, CI), `proposal.py`
(facts -> plan), `diagnosis.py` + `repairs.py` (failure -> fix: -sys crates' Debian packages, an MSRV-aware
`cargo update` when a dependency needs a newer rustc, a stale Cargo.lock, deselecting tests that need a
service or the internet), `pins.py` (Cargo.lock as the pins, the registry cache warm-up),
`companion.py` (the toolchain a Python package built by maturin or setuptools-rust borrows).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.rules import LockPinned
from autoinstall.ecosystems.rust.companion import PACKAGES, companion
from autoinstall.ecosystems.rust.diagnosis import NETWORK_OFF, SERVICE_REFUSED, diagnose
from autoinstall.ecosystems.rust.grading import RULES as GRADING
from autoinstall.ecosystems.rust.pins import constraints, freeze, warm
from autoinstall.ecosystems.rust.proposal import propose_plan
from autoinstall.ecosystems.rust.repairs import repair
from autoinstall.ecosystems.rust.survey import RustFacts, survey
from envs.spec import Plan


class RustEcosystem(LockPinned):
    """Cargo projects: `cargo vendor` into the image, `cargo test --no-run`, `cargo test` per test."""

    name = "rust"
    manifests = ("Cargo.toml",)
    """Files that make a folder a project of its own (subprojects.py: a monorepo's packages)."""
    toolchains = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian rustc is 1.85; a plan or a repair
    adds a newer host rustup toolchain to it ("3.13+rust-1.95.0": toolchain.py)."""
    chat_environment = (
        "Commands run with bash in /workspace (a Cargo project) inside a Debian container with Debian's "
        "rustc and cargo, or a newer toolchain copied from the host (no rustup: none can be downloaded); "
        "crates come from crates.io. "
        "Fetch and build the tests while online (`cargo fetch`, `cargo test --no-run`); tests run offline "
        "with `cargo test` (test_runner cargo).")
    PACKAGES = PACKAGES
    REGISTRY = "crates.io"
    SERVICE_REFUSED = SERVICE_REFUSED
    NETWORK_OFF = NETWORK_OFF
    pin_env = ()
    grading = GRADING
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""
    """Cargo.lock pins every crate: the replay Dockerfile's lock step reads the constraints file itself."""

    def detect(self, repo: Path) -> bool:
        return is_file(repo, repo / "Cargo.toml")

    # The protocol methods that are this package's functions as they are.
    survey = staticmethod(survey)
    diagnose = staticmethod(diagnose)
    repair = staticmethod(repair)
    freeze = staticmethod(freeze)
    warm = staticmethod(warm)
    constraints = staticmethod(constraints)
    companion = staticmethod(companion)
    """What a leading ecosystem whose build compiles a crate borrows (companion.py)."""

    def propose(self, facts: RustFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        # `toolchains` are the model's Python versions, not Rust's: the image is always this ecosystem's.
        return propose_plan(facts, Path(repo), self.toolchains[0])


__all__ = ["RustEcosystem", "RustFacts"]
