"""Rust facts -> plan: -sys crates' Debian packages, a Cargo.lock, the crates vendored into the image, an
offline build of the tests, and `cargo test` for per-test results."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.debian_names import APT
from autoinstall.ecosystems.rust.survey import SYS_PACKAGES, RustFacts
from autoinstall.ecosystems.rust.toolchain import DEBIAN_RUSTC as IMAGE_RUSTC
from autoinstall.ecosystems.rust.toolchain import planned, wanted
from envs.spec import Check, Evidence, Plan, Step

VENDOR_DIR = "/opt/cargo-vendor"
LOCK_FROM_PINS = "/opt/autoinstall/constraints.txt"
"""Where the replay image finds the recorded constraints: for Rust, the Cargo.lock the build resolved."""
MSRV_AWARE = "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback"
"""Resolve to the newest versions whose rust-version the project's own rust-version (else this rustc) meets
(cargo >= 1.84). Not the first choice: a project's old MSRV picks dependencies older than its tests expect
(hyperium/http: rust-version 1.57 -> quickcheck 1.0.3, whose missing impls break a test target), so it is the
repair for a dependency that needs a newer rustc."""
CHAT_ENVIRONMENT = (
    "Commands run with bash in /workspace (a Cargo project) inside a Debian container with Debian's "
    "rustc and cargo, or a newer toolchain copied from the host (no rustup: none can be downloaded); "
    "crates come from crates.io. "
    "Fetch and build the tests while online (`cargo fetch`, `cargo test --no-run`); tests run offline "
    "with `cargo test` (test_runner cargo).")
"""For chat models: Debian's rustc and cargo without rustup, crates.io, and `cargo test` offline."""
LOCK = f"if [ -s {LOCK_FROM_PINS} ]; then cp {LOCK_FROM_PINS} Cargo.lock; else cargo generate-lockfile; fi"
"""No Cargo.lock in the repository: resolve one (newest versions, as CI does); the replay Dockerfile copies
the recorded one instead."""
VENDOR = (f"cargo vendor --versioned-dirs {VENDOR_DIR} > /tmp/cargo-vendor.toml && mkdir -p /.cargo "
          "&& mv /tmp/cargo-vendor.toml /.cargo/config.toml")
"""Every crate of Cargo.lock into the image, and a `[source]` replacement above the workspace (cargo reads
/.cargo/config.toml from every directory below /) so builds and tests need no registry, offline."""


def test_command(facts: RustFacts) -> str:
    """`cargo test` over the package, or the whole workspace: default features, never stopping early."""
    workspace = " --workspace" if facts.workspace_members else ""
    return f"cargo test{workspace} --no-fail-fast --offline"


def _system_step(facts: RustFacts) -> Step | None:
    """Debian packages for the system libraries of the -sys crates the project depends on."""
    wanted = {SYS_PACKAGES[e.text]: e for e in facts.sys_crates}
    if not wanted:
        return None
    return Step(command=f"{APT} {' '.join(sorted(wanted))}", kind="system",
                why="-sys crates build against these system libraries", evidence=list(wanted.values())[:5])


def _notes(facts: RustFacts, toolchain: list[str]) -> list[str]:
    notes = [*facts.notes, *toolchain]
    asked = wanted(facts)
    if facts.toolchain and (asked is None or asked[0] != facts.toolchain):
        notes.append(f"{facts.toolchain_evidence.file if facts.toolchain_evidence else 'rust-toolchain'} asks "
                     f"for {facts.toolchain}: ignored, the image has no rustup to honour it (rustc {IMAGE_RUSTC} "
                     "or a newer one copied from this host)")
    if facts.features:
        notes.append(f"default features only: --all-features ({', '.join(facts.features[:6])}) can need "
                     "system libraries or a nightly compiler the image lacks, and CI's choice varies")
    notes += [f"CI runs: {e.text} ({e.file}:{e.line})" for e in facts.ci_tests[:3]]
    if facts.build_scripts:
        notes.append(f"build scripts: {', '.join(e.file for e in facts.build_scripts[:5])}")
    return notes


def propose_plan(facts: RustFacts, repo: Path, python: str) -> Plan:
    """At most five steps and the checks (an offline build of the tests, their list, the tests), on the toolchain
    the manifest needs (`python` plus a host rustup toolchain: toolchain.py)."""
    python, toolchain = planned(facts, python)
    steps: list[Step] = []
    where = facts.package_evidence or facts.workspace_evidence or Evidence(file="Cargo.toml", line=1,
                                                                           text="Cargo.toml")
    if (system := _system_step(facts)) is not None:
        steps.append(system)
    if not facts.has_lock:
        steps.append(Step(command=LOCK, kind="other", evidence=[where],
                          why="no Cargo.lock: resolve one, kept in the image and recorded as the pins"))
    dependencies = facts.dependencies + facts.dev_dependencies
    if dependencies or facts.locked_packages:
        evidence = dependencies[0] if dependencies else Evidence(file="Cargo.lock", line=1, text="Cargo.lock")
        locked = " --locked" if facts.has_lock else ""
        steps.append(Step(command=VENDOR.replace("cargo vendor", f"cargo vendor{locked}", 1), kind="other",
                          evidence=[evidence],
                          why="download every locked crate (through the shared registry cache) into the image, "
                              "so the offline build and tests need no registry"))
    build = test_command(facts).replace("--no-fail-fast", "--no-run")
    steps.append(Step(command=build, kind="project", evidence=[where],
                      why="compile the crate and every test target once; target/ stays in the image"))
    tests = test_command(facts)
    checks = [Check(name="build", kind="import", command=build, why="the tests compile offline from the image"),
              Check(name="collect", kind="collect", command=f"{tests} -- --list",
                    why="libtest names every unit, integration and doc test"),
              Check(name="tests", kind="tests", command=tests,
                    why=f"{facts.test_targets} source files with tests or doc examples")]
    return Plan(ecosystem="rust", python=python, steps=steps, checks=checks, test_command=tests,
                test_runner="cargo", notes=_notes(facts, toolchain))
