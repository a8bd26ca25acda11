"""Rust as a companion toolchain: what a leading ecosystem (a Python package built by maturin or
setuptools-rust) borrows to compile its crate. Rust-led plans (proposal.py) are not affected.

The lead gets Debian's cargo/rustc in its base image; its own project step compiles the extension online
(the crates come through the shared registry cache, with whatever features the build enables: maturin's
`features = ["pyo3/generate-import-lib"]` pulls crates a plain Cargo.lock lacks, so vendoring first and
replacing the registry would break that build). Right after it, one step vendors the crates of the Cargo.lock
the build used into the image (the `cargo vendor` and `/.cargo/config.toml` source replacement of a Rust-led
plan), so later cargo runs (a rebuild, a test that calls cargo) work offline. The crate's `cargo test` is not a
check: bindings crates enable pyo3's `extension-module` feature, which leaves libpython unlinked, so their test
binaries usually fail to link; the lead's tests exercise the compiled code instead.
"""
from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

from autoinstall.ecosystems.base import Companion, CompanionNeed
from autoinstall.ecosystems.rust.proposal import VENDOR
from envs.spec import Step

PACKAGES = ("cargo", "rustc")
"""Debian's Rust, added to the base image (trixie: 1.85), whether Rust leads or lends its toolchain;
pkg-config is in every base image already."""
PREFERRED = ("3.13",)
"""The lead's base image whose Debian has the newest rustc (trixie: 1.85; bookworm's 1.63 builds few crates)."""
CHAT_ENVIRONMENT = ("Debian's rustc and cargo are installed (no rustup): the project install compiles the Rust "
                    "extension online, then a `cargo vendor` step puts the crates into the image (source "
                    "replacement in /.cargo/config.toml) so cargo works offline later.")


def companion(need: CompanionNeed | None = None, repo: Path | None = None) -> Companion:
    """Debian's cargo/rustc, and for a `need` a vendoring step in the crate's directory (`need.root`) after
    the lead's build; without one, the toolchain alone (what the base image and chat models need)."""
    toolchain = Companion(ecosystem="rust", packages=PACKAGES, toolchains=PREFERRED,
                          chat_environment=CHAT_ENVIRONMENT)
    if need is None or repo is None:
        return toolchain
    root = PurePosixPath(need.root).as_posix()
    command = VENDOR if root in ("", ".") else f"cd {shlex.quote(root)} && {VENDOR}"
    where = "the crate" if root in ("", ".") else f"the crate in {root}/"
    step = Step(command=command, kind="other", evidence=[need.evidence],
                why=f"the build compiled {where} online: vendor the crates of the Cargo.lock it used into the "
                    "image, so later cargo runs need no registry")
    note = (f"the build compiles Rust ({need.evidence.file}:{need.evidence.line or 1}: {need.evidence.text}): "
            "Debian's cargo/rustc join the base image; the crate's own `cargo test` is not a check (bindings "
            "crates leave libpython unlinked, so their test binaries rarely link), the Python tests exercise it")
    return toolchain.model_copy(update={"after": [step], "notes": [note]})
