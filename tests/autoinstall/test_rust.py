"""The Rust ecosystem without Docker: survey (Cargo.toml, workspace, Cargo.lock, -sys crates, toolchain
file, CI), the plan, diagnoses, repair rules, the Cargo.lock pins, and a whole build on the FakeFactory (a
-sys crate's missing system library repaired with its Debian package, a test that needs the internet
deselected with its evidence)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.detect import detect, get_ecosystem
from autoinstall.ecosystems.rust import RustEcosystem
from autoinstall.ecosystems.rust.diagnosis import diagnose
from autoinstall.ecosystems.rust.msrv import index_path, newest_buildable
from autoinstall.ecosystems.rust.pins import constraints, freeze, registry_crates, warm
from autoinstall.ecosystems.rust.repairs import MSRV_UPDATE, repair
from autoinstall.ecosystems.rust.survey import survey
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.fake import FakeFactory, FakeSandbox
from envs.host_toolchains import OFF_ENV
from envs.spec import Plan, Step
from tests.autoinstall.ecosystem_checks import (assert_diagnoses, assert_installs_debian_package_once,
                                                repair_context, write_tree)

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "rust_crate"
OUTPUT = (Path(__file__).parents[1] / "envs" / "data" / "cargo_test_rust_crate.txt").read_text()
RUST = RustEcosystem()
BUILD = Step(command="cargo test --no-run --offline", why="compile", kind="project")
LOCK = """version = 3

[[package]]
name = "itoa"
version = "1.0.19"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "3bd1"

[[package]]
name = "rust_crate"
version = "0.1.0"
dependencies = ["itoa"]
"""


def test_the_fixture_is_rust_and_its_facts_point_into_it() -> None:
    assert detect(REPO)[0] is get_ecosystem("rust")
    facts = survey(REPO)
    assert (facts.package, facts.edition, facts.rust_version, facts.has_lock) == ("rust_crate", "2021", "1.70",
                                                                                 False)
    assert [e.text for e in facts.dependencies] == ["itoa"] and facts.features == ["loud"]
    assert [(e.file, e.line, e.text) for e in facts.ci_tests] == [(".github/workflows/ci.yml", 7,
                                                                  "cargo test --all-features")]
    for evidence in [facts.package_evidence, facts.rust_version_evidence, *facts.dependencies, *facts.ci_tests]:
        assert evidence and (REPO / evidence.file).is_file() and evidence.line, evidence


def test_the_fixture_plan_locks_vendors_builds_then_tests_per_test() -> None:
    plan = RUST.propose(survey(REPO), REPO, ("3.11", "3.13"))
    assert (plan.ecosystem, plan.python, plan.test_runner) == ("rust", "3.13", "cargo")
    commands = [s.command for s in plan.steps]
    assert "cargo generate-lockfile" in commands[0] and "cp /opt/autoinstall/constraints.txt Cargo.lock" in commands[0]
    assert commands[1].startswith("cargo vendor --versioned-dirs /opt/cargo-vendor") and "--locked" not in commands[1]
    assert commands[2] == "cargo test --no-run --offline"
    assert plan.test_command == "cargo test --no-fail-fast --offline"
    assert [(c.name, c.kind) for c in plan.checks] == [("build", "import"), ("collect", "collect"), ("tests", "tests")]
    assert any("--all-features" in n and "loud" in n for n in plan.notes)
    assert RUST.base_image(FakeFactory(), plan.python) == "fake-base:python3.13"


def test_survey_reads_a_workspace_lock_sys_crates_and_toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")  # the host's rustup toolchains: tests/autoinstall/test_toolchains.py
    root = write_tree(tmp_path, {
        "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nresolver = "2"\n\n[workspace.package]\n'
                      'rust-version = "1.88"\n',
        "crates/db/Cargo.toml": '[package]\nname = "db"\nversion = "0.1.0"\n\n[dependencies]\n'
                                'pq-sys = "0.6"\nserde = "1"\n',
        "crates/db/build.rs": "fn main() {}\n", "crates/db/src/lib.rs": "#[test]\nfn t() {}\n",
        "crates/web/Cargo.toml": '[package]\nname = "web"\nversion = "0.1.0"\n',
        "Cargo.lock": 'version = 3\n\n[[package]]\nname = "openssl-sys"\nversion = "0.9.1"\n'
                      'source = "registry+https://github.com/rust-lang/crates.io-index"\n',
        "rust-toolchain.toml": '[toolchain]\nchannel = "1.90.0"\n',
        "Makefile": "test:\n\tcargo test --workspace --all-features\n",
    })
    facts = survey(root)
    assert facts.workspace_members == ["crates/*"] and facts.rust_version == "1.88" and facts.has_lock
    assert [(e.file, e.line, e.text) for e in facts.sys_crates] == [
        ("crates/db/Cargo.toml", 6, "pq-sys"), ("Cargo.lock", 4, "openssl-sys")]
    assert [e.file for e in facts.build_scripts] == ["crates/db/build.rs"] and facts.locked_packages == 1
    assert (facts.toolchain, facts.toolchain_evidence.line if facts.toolchain_evidence else 0) == ("1.90.0", 2)
    plan = RUST.propose(facts, root, ("3.13",))
    assert [s.command.split(" && ")[-1] for s in plan.steps] == [
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpq-dev libssl-dev",
        "mv /tmp/cargo-vendor.toml /.cargo/config.toml", "cargo test --workspace --no-run --offline"]
    assert "cargo vendor --locked" in plan.steps[1].command
    assert plan.test_command == "cargo test --workspace --no-fail-fast --offline"
    assert plan.python == "3.13"  # the channel file asks more than rust-version; no host toolchain has it
    assert any("rust-toolchain.toml:2 asks for rustc 1.90.0" in n and "MSRV-aware" in n for n in plan.notes)


def ctx(output: str, *, phase: str = "install", failing: Step = BUILD, **kw: object) -> RepairContext:
    plan = Plan(ecosystem="rust", python="3.13", steps=[failing])
    return repair_context(plan, diagnose, output, phase=phase, failing=failing, **kw)


def test_diagnoses_of_cargo_output() -> None:
    cases = {
        "  The system library `libpq` required by crate `pq-sys` was not found.": ("missing_library", "libpq"),
        "  Could not find directory of OpenSSL installation, and this `-sys` crate cannot proceed":
            ("missing_library", "openssl"),
        "Package libcurl was not found in the pkg-config search path.": ("missing_library", "curl"),
        "  = note: /usr/bin/ld: cannot find -lsqlite3: No such file or directory": ("missing_library", "sqlite3"),
        "  cargo:warning=src/zstd.c:1:10: fatal error: zstd.h: No such file or directory":
            ("missing_header", "zstd.h"),
        "  is `cmake` not installed?": ("missing_tool", "cmake"),
        "error: package `clap v4.5.40` cannot be built because it requires rustc 1.88 or newer, while the "
        "currently active rustc version is 1.85.1": ("missing_tool", "rustc 1.88 for clap@4.5.40"),
        # captured: Debian's cargo 1.85 on a package whose own rust-version is 1.90
        "error: rustc 1.85.1 is not supported by the following packages:\n  msrv@0.1.0 requires rustc 1.90":
            ("missing_tool", "rustc 1.90 for msrv@0.1.0"),
        "  feature `edition2024` is required": ("missing_tool", "rustc 1.85 for the edition 2024"),
        "error: the lock file /w/Cargo.lock needs to be updated but --locked was passed to prevent this":
            ("missing_module", "Cargo.lock"),
        "called `Result::unwrap()` on an `Err` value: Os { code: 111, kind: ConnectionRefused }":
            ("service_unavailable", ""),
        "failed to connect: failed to lookup address information: Temporary failure in name resolution":
            ("network_required", ""),
    }
    assert_diagnoses(diagnose, cases)


def test_a_sys_crates_missing_library_installs_the_debian_dev_package_first() -> None:
    out = "  The system library `openssl` required by crate `openssl-sys` was not found."
    assert_installs_debian_package_once(repair, ctx, out, "libssl-dev")


def test_a_dependency_needing_a_newer_rustc_reresolves_then_pins_and_the_projects_own_msrv_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")  # no host rustup toolchain: the fallback (test_toolchains.py: the first choice)
    out = ("error: package `clap v4.5.40` cannot be built because it requires rustc 1.88 or newer, while the "
           "currently active rustc version is 1.85.1")
    r = repair(ctx(out))
    assert r is not None and r.kind == "insert_before" and r.step is not None
    assert r.step.command == MSRV_UPDATE and "clap@4.5.40" in r.step.why
    assert r.step.command.startswith("rm -f /.cargo/config.toml && ") and "cargo vendor" in r.step.command
    asked: list[tuple[str, str, str]] = []
    monkeypatch.setattr("autoinstall.ecosystems.rust.repairs.newest_for_rustc",
                        lambda name, rustc, locked: asked.append((name, rustc, locked)) or "4.5.20")
    pin = repair(ctx(out, tried=[r]))  # MSRV-aware resolution kept clap: pin its newest buildable release
    assert asked == [("clap", "1.85", "4.5.40")]
    assert pin is not None and pin.step is not None
    assert "cargo update -p clap@4.5.40 --precise 4.5.20 && cargo vendor" in pin.step.command
    assert repair(ctx(out, tried=[r, pin])) is None
    monkeypatch.setattr("autoinstall.ecosystems.rust.repairs.newest_for_rustc", lambda *_: None)
    assert repair(ctx(out, tried=[r])) is None  # crates.io has none the image can build
    assert repair(ctx("  feature `edition2024` is required")) is None  # no rustup here: a recorded failure


def test_a_stale_lock_drops_locked_from_the_vendor_step() -> None:
    vendor = Step(command="cargo vendor --locked --versioned-dirs /opt/cargo-vendor", why="v", kind="other")
    out = "error: the lock file /w/Cargo.lock needs to be updated but --locked was passed to prevent this"
    r = repair(ctx(out, failing=vendor))
    assert r is not None and r.kind == "replace" and r.step is not None
    assert r.step.command == "cargo vendor --versioned-dirs /opt/cargo-vendor"


def test_cargo_lock_is_the_pins_and_warm_fetches_exactly_its_registry_crates() -> None:
    box = FakeSandbox(rules=[("cat Cargo.lock", LOCK)]).start()
    assert freeze(box) == LOCK and constraints(LOCK, "rust_crate") == LOCK
    assert registry_crates(LOCK) == [("itoa", "1.0.19")] and registry_crates("not toml [") == []
    warm(box, LOCK)
    manifest = box.files["/var/tmp/autoinstall-cargo-warm/Cargo.toml"].decode()
    assert 'c0 = { package = "itoa", version = "=1.0.19", default-features = false }' in manifest
    assert box.commands()[-1] == "cd /var/tmp/autoinstall-cargo-warm && cargo fetch"


class CargoMachine:
    """A scripted cargo: the build needs openssl's pkg-config file until libssl-dev is installed; one unit
    test needs the internet unless it is skipped."""

    def __init__(self) -> None:
        self.ssl = False

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        if "apt-get install" in cmd and "libssl-dev" in cmd:
            self.ssl = True
        if cmd.startswith("cargo test --no-run") and not self.ssl:
            return ExecResult(exit_code=101, stderr="  The system library `openssl` required by crate "
                                                    "`openssl-sys` was not found.")
        if cmd.startswith("cargo test") and "--list" in cmd:
            return ExecResult(exit_code=0, stdout="tests::adds: test\ntests::shouts: test\ntests::slow_sum: test\n"
                                                  "add_is_commutative: test\nsrc/lib.rs - add (line 5): test\n")
        if cmd.startswith("cargo test --no-fail-fast"):
            if "--skip tests::shouts --exact" in cmd:
                return ExecResult(exit_code=0, stdout=OUTPUT.replace("test tests::shouts ... ok\n", ""))
            broken = OUTPUT.replace("test tests::shouts ... ok", "test tests::shouts ... FAILED").replace(
                "test result: ok. 2 passed", "failures:\n\n---- tests::shouts stdout ----\nthread 'tests::shouts' "
                "panicked at src/lib.rs:9:\nfailed to lookup address information: Temporary failure in name "
                "resolution\n\nfailures:\n    tests::shouts\n\ntest result: FAILED. 1 passed", 1)
            return ExecResult(exit_code=101, stdout=broken)
        return ExecResult(exit_code=0) if cmd.startswith(("cargo ", "if [")) else None


def test_a_fake_rust_build_repairs_a_sys_library_and_deselects_a_network_test(tmp_path: Path) -> None:
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", max_deselected=0.25),
                             factory=FakeFactory(CargoMachine()))
    assert spec.status == "verified", spec.failure
    assert spec.plan.ecosystem == "rust" and any("libssl-dev" in s.command for s in spec.steps)
    assert [d.test for d in spec.deselected] == ["rust_crate-lib::tests::shouts"]
    assert "internet" in spec.deselected[0].reason
    run = spec.verification.runs[-1]
    assert (run.passed, run.counts["skipped"]) == (3, 1)
    assert "cargo test --no-run --offline" in (tmp_path / "env" / "Dockerfile").read_text()


INDEX_LINES = [json.dumps(e) for e in (
    {"vers": "1.0.100", "rust_version": "1.56"}, {"vers": "1.0.119", "rust_version": "1.76"},
    {"vers": "1.0.120", "rust_version": "1.88"}, {"vers": "1.0.118", "yanked": True},
    {"vers": "1.0.121-rc.1"}, {"vers": "2.0.0", "rust_version": "1.60"}, {"vers": "1.0.110"})]


def test_the_newest_release_a_rustc_can_build_stays_semver_compatible() -> None:
    assert newest_buildable(INDEX_LINES, "1.85", "1.0.120") == "1.0.119"
    assert newest_buildable(INDEX_LINES, "1.70", "1.0.120") == "1.0.110"  # states no rust-version
    assert newest_buildable(INDEX_LINES, "1.85", "0.3.1") is None
    assert [index_path(n) for n in ("a", "cc", "syn", "trybuild")] == ["1/a", "2/cc", "3/s/syn", "tr/yb/trybuild"]
