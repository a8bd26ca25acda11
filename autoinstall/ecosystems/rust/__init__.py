"""The Rust ecosystem: Cargo packages and workspaces built with Debian trixie's rustc/cargo (1.85), the
crates vendored into the image, tested with `cargo test` read per test from libtest's output.

Files: `survey.py` (RustFacts from Cargo.toml, Cargo.lock, -sys crates, rust-toolchain, CI), `proposal.py`
(facts -> plan), `diagnosis.py` + `repairs.py` (failure -> fix: -sys crates' Debian packages, an MSRV-aware
`cargo update` when a dependency needs a newer rustc, a stale Cargo.lock, deselecting tests that need a
service or the internet), `pins.py` (Cargo.lock as the pins, the registry cache warm-up),
`companion.py` (the toolchain a Python package built by maturin or setuptools-rust borrows).
"""
from __future__ import annotations

from autoinstall.ecosystems.compiled import CompiledEcosystem, Language
from autoinstall.ecosystems.rust import diagnosis, pins
from autoinstall.ecosystems.rust.companion import PACKAGES, companion
from autoinstall.ecosystems.rust.grading import RULES as GRADING
from autoinstall.ecosystems.rust.proposal import CHAT_ENVIRONMENT, propose_plan
from autoinstall.ecosystems.rust.repairs import repair
from autoinstall.ecosystems.rust.survey import RustFacts, survey
from autoinstall.ecosystems.rust.toolchain import DEBIAN_RUSTC


class RustEcosystem(CompiledEcosystem):
    """Cargo projects: `cargo vendor` into the image, `cargo test --no-run`, `cargo test` per test. The base
    image is trixie's, whose Debian rustc is 1.85; a plan or a repair adds a newer host rustup toolchain to it
    ("3.13+rust-1.95.0": toolchain.py). Cargo.lock pins every crate: the replay
    Dockerfile's lock step reads the constraints file itself."""

    language = Language(name="rust", manifests=("Cargo.toml",), survey=survey, propose=propose_plan,
                        chat_environment=CHAT_ENVIRONMENT, packages=PACKAGES, diagnosis=diagnosis,
                        repair=repair, registry="crates.io", pins=pins, grading=GRADING)
    companion = staticmethod(companion)
    """What a leading ecosystem whose build compiles a crate borrows (companion.py)."""
    host_toolchain = ("rust", DEBIAN_RUSTC)
    """The host's newer rustup toolchains can replace Debian's rustc (toolchain.py; a chat model's switch_python
    names one)."""


__all__ = ["RustEcosystem", "RustFacts"]
