"""Toolchains newer than Debian's, without Docker: which host installation is found (a fake rustup home and
GOROOT), which one a need chooses, from which evidence (the manifest, the build's error), the token a plan
carries, the base image it asks for, what the spec records, and what the copy leaves out."""
from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.go import GoEcosystem
from autoinstall.ecosystems.rust import RustEcosystem
from autoinstall.ecosystems.rust.diagnosis import diagnose
from autoinstall.ecosystems.rust.repairs import MSRV_UPDATE, repair
from autoinstall.ecosystems.rust.survey import survey
from autoinstall.ecosystems.rust.toolchain import planned
from envs import host_toolchains
from envs.fake import FakeFactory
from envs.host_toolchains import HostToolchain, find, host_toolchains as found_on_host, write_tarball
from envs.spec import Plan, Step

RUST = RustEcosystem()
BUILD = Step(command="cargo test --no-run --offline", why="compile", kind="project")
NEEDS_188 = ("error: package `clap v4.5.40` cannot be built because it requires rustc 1.88 or newer, while the "
             "currently active rustc version is 1.85.1")
LET_CHAINS = ("error[E0658]: `let` expressions in this position are unstable\n --> helper/src/lib.rs:3:8\n"
              "  = note: see issue #53667 <https://github.com/rust-lang/rust/issues/53667> for more information")


def _rustup_toolchain(root: Path, name: str, version: str) -> Path:
    prefix = root / "toolchains" / f"{name}-x86_64-unknown-linux-gnu"
    for rel in ("bin/rustc", "bin/cargo", "bin/rustdoc", "lib/librustc_driver-abc.so", "share/doc/rust/index.html",
                "lib/rustlib/src/rust/library/core/lib.rs", "lib/rustlib/x86_64-unknown-linux-gnu/lib/libstd.rlib",
                "lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld", "libexec/rust-analyzer-proc-macro-srv"):
        (prefix / rel).parent.mkdir(parents=True, exist_ok=True)
        (prefix / rel).write_text(f"{name} {rel}")
    (prefix / "lib/rustlib/multirust-channel-manifest.toml").write_text(
        f'manifest-version = "2"\n[pkg.rustc]\nversion = "{version} (59807616e 2026-04-14)"\n')
    return prefix


@pytest.fixture
def rustup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A rustup home with 1.90.0 and 1.95.0 (stable, plus its version-named link) and a 1.97 nightly."""
    monkeypatch.setattr(host_toolchains.platform, "machine", lambda: "x86_64")
    monkeypatch.setenv("RUSTUP_HOME", str(tmp_path / "rustup"))
    monkeypatch.delenv(host_toolchains.OFF_ENV, raising=False)
    _rustup_toolchain(tmp_path / "rustup", "1.90.0", "1.90.0")
    stable = _rustup_toolchain(tmp_path / "rustup", "stable", "1.95.0")
    (stable.parent / "1.95.0-x86_64-unknown-linux-gnu").symlink_to(stable)
    _rustup_toolchain(tmp_path / "rustup", "nightly", "1.97.0-nightly")
    other = _rustup_toolchain(tmp_path / "rustup", "other", "1.99.0")  # another machine's: not runnable here
    other.rename(other.parent / "stable-aarch64-unknown-linux-gnu")
    return stable


def ctx(output: str, python: str = "3.13", tried: list | None = None) -> RepairContext:
    return RepairContext(plan=Plan(ecosystem="rust", python=python, steps=[BUILD]), failing=BUILD, phase="install",
                         output=output, diagnosis=diagnose(output), python=python, available_pythons=[python],
                         tried=tried or [])


def test_rustup_toolchains_are_found_once_per_version_with_an_identity(rustup: Path) -> None:
    found = found_on_host("rust")
    assert [t.key for t in found] == ["rust-1.90.0", "rust-1.95.0", "rust-1.97.0-nightly"]
    assert [t.release for t in found] == [True, True, False]
    stable = find("rust-1.95.0")
    assert stable is not None and stable.prefix == str(rustup) and stable.home == "/opt/toolchains/rust-1.95.0"
    assert len(stable.digest) == 12 and stable.digest != found[0].digest
    assert find("rust-1.96.0") is None


def test_turned_off_no_host_toolchain_is_used(rustup: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    assert found_on_host("rust") == []


def test_choose_takes_the_oldest_release_meeting_the_need_else_the_newest_newer_never_a_nightly() -> None:
    have = [HostToolchain(name="rust", version=v, prefix="/p", digest="d")
            for v in ("1.90.0", "1.95.0", "1.97.0-nightly")]
    assert toolchains.choose(have, "1.88", "1.85").version == "1.90.0"
    assert toolchains.choose(have, "1.91.1", "1.85").version == "1.95.0"
    assert toolchains.choose(have, "1.96", "1.85").version == "1.95.0"  # closer: the fallback does the rest
    assert toolchains.choose(have, "1.96", "1.95.0") is None  # the 1.97 nightly is no release
    assert toolchains.choose([], "1.88", "1.85") is None


def test_the_token_names_the_python_and_each_host_toolchain() -> None:
    stable = HostToolchain(name="rust", version="1.95.0", prefix="/p", digest="d")
    token = toolchains.with_host("3.13", stable)
    assert token == "3.13+rust-1.95.0" and toolchains.split(token) == ("3.13", ("rust-1.95.0",))
    older = HostToolchain(name="rust", version="1.90.0", prefix="/p", digest="d")
    assert toolchains.with_host(toolchains.with_host("3.13+go-1.26.8", older), stable) == "3.13+go-1.26.8+rust-1.95.0"
    assert toolchains.current(token, "rust") == "1.95.0" and toolchains.current("3.13", "rust") is None
    factory = FakeFactory()
    assert RUST.base_image(factory, token) == "fake-base:python3.13-rust-1.95.0"
    assert RUST.base_image(factory, "3.13") == "fake-base:python3.13"


def test_a_rust_version_newer_than_debians_plans_the_host_toolchain_with_its_evidence(rustup: Path,
                                                                                      tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\nedition = "2024"\n'
                                     'rust-version = "1.88"\n')
    plan = RUST.propose(survey(repo), repo, ("3.13",))
    assert plan.python == "3.13+rust-1.90.0"
    assert any("Cargo.toml:5 asks for rustc 1.88" in n and str(rustup.parent / "1.90.0") in n
               for n in plan.notes), plan.notes
    (repo / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "1.93"\n')
    assert RUST.propose(survey(repo), repo, ("3.13",)).python == "3.13+rust-1.95.0"  # the larger ask wins
    (repo / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\nrust-version = "1.70"\n')
    (repo / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    plan = RUST.propose(survey(repo), repo, ("3.13",))
    assert plan.python == "3.13" and any("nightly: ignored" in n for n in plan.notes)


def test_planned_without_a_newer_host_toolchain_keeps_debians_and_says_what_follows(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\nrust-version = "1.88"\n')
    python, notes = planned(survey(tmp_path), "3.13")
    assert python == "3.13" and "MSRV-aware" in notes[0]


def test_a_build_error_needing_a_newer_rustc_switches_to_the_host_toolchain_first(rustup: Path) -> None:
    r = repair(ctx(NEEDS_188))
    assert r is not None and r.kind == "switch_python" and r.python == "3.13+rust-1.90.0"
    assert "clap@4.5.40" in r.reason and "rustup toolchain 1.90.0" in r.reason and str(rustup.parent) in r.reason
    let = repair(ctx(LET_CHAINS))  # a dev-dependency's let chains: no crate named, the language needs 1.88
    assert let is not None and let.kind == "switch_python" and let.python == "3.13+rust-1.90.0"
    # on the switched toolchain the same need is met: nothing to switch to; a still newer need gets the newest
    assert repair(ctx(LET_CHAINS, python="3.13+rust-1.90.0")) is None
    needs_196 = NEEDS_188.replace("1.88", "1.96")
    r196 = repair(ctx(needs_196))
    assert r196 is not None and r196.python == "3.13+rust-1.95.0" and "not 1.96" in r196.reason
    # there, the MSRV-aware resolution is the fallback, against the host toolchain's rustc
    fallback = repair(ctx(needs_196, python="3.13+rust-1.95.0"))
    assert fallback is not None and fallback.step is not None and fallback.step.command == MSRV_UPDATE
    assert "the image has 1.95.0" in fallback.step.why


def test_without_host_toolchains_the_msrv_fallback_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    r = repair(ctx(NEEDS_188))
    assert r is not None and r.step is not None and r.step.command == MSRV_UPDATE
    assert repair(ctx(LET_CHAINS)) is None


def test_the_spec_records_version_and_origin(rustup: Path, tmp_path: Path) -> None:
    [record] = toolchains.records(RUST, "3.13+rust-1.95.0", {}, tmp_path)
    assert (record.name, record.version, record.origin, record.home) == ("rust", "1.95.0", "host",
                                                                        "/opt/toolchains/rust-1.95.0")
    assert record.source.startswith(str(rustup)) and "digest" in record.source
    assert toolchains.records(RUST, "3.13", {}, tmp_path) == []
    [gone] = toolchains.records(RUST, "3.13+rust-1.91.0", {}, tmp_path)
    assert gone.source == "no longer on this host"


def test_the_go_module_proxys_toolchain_is_recorded_from_gotoolchain_or_the_go_commands_own_switch(
        tmp_path: Path) -> None:
    go = GoEcosystem()
    [record] = toolchains.records(go, "3.13", {"GOTOOLCHAIN": "go1.25.0"}, tmp_path)
    assert (record.name, record.version, record.origin) == ("go", "1.25.0", "registry")
    assert "golang.org/toolchain@v0.0.1-go1.25.0.linux-" in record.source and "(GOTOOLCHAIN)" in record.source
    assert toolchains.records(go, "3.13", {"GOTOOLCHAIN": "local"}, tmp_path) == []
    (tmp_path / "go.mod").write_text("module m\n\ngo 1.25.0\n\ntoolchain go1.25.3\n")
    [auto] = toolchains.records(go, "3.13", {}, tmp_path)  # Debian's Go 1.24 switched to the toolchain line
    assert auto.version == "1.25.3" and "GOTOOLCHAIN=auto" in auto.source
    assert [r.origin for r in toolchains.records(go, "3.13+go-1.26.8", {}, tmp_path)] == ["host"]
    (tmp_path / "go.mod").write_text("module m\n\ngo 1.22\n")
    assert toolchains.records(go, "3.13", {}, tmp_path) == []  # the image's Go served


def test_the_copy_leaves_out_docs_sources_and_tools_no_build_needs(rustup: Path, tmp_path: Path) -> None:
    stable = find("rust-1.95.0")
    assert stable is not None
    write_tarball(stable, tmp_path / "t.tar")
    with tarfile.open(tmp_path / "t.tar") as tar:
        names = {m.name.removeprefix("./") for m in tar.getmembers()}
        assert {m.uid for m in tar.getmembers()} == {0}
    assert {"bin/rustc", "bin/cargo", "bin/rustdoc", "lib/librustc_driver-abc.so",
            "lib/rustlib/x86_64-unknown-linux-gnu/lib/libstd.rlib",
            "lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld"} <= names
    assert not any(n.startswith(("share", "libexec", "lib/rustlib/src")) for n in names)


@pytest.fixture
def goroots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Go 1.26.8 by hand, 1.25.1 from golang.org/dl under ~/sdk, and a 1.27rc1 in the module cache."""
    monkeypatch.setattr(host_toolchains.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv(host_toolchains.OFF_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "mod"))
    roots = {"local/go": "go1.26.8", "sdk/go1.25.1": "go1.25.1",
             "mod/golang.org/toolchain@v0.0.1-go1.27rc1.linux-amd64": "go1.27rc1"}
    for rel, version in roots.items():
        (tmp_path / rel / "bin").mkdir(parents=True)
        (tmp_path / rel / "bin" / "go").write_text(version)
        (tmp_path / rel / "VERSION").write_text(f"{version}\ntime 2026-08-28T16:20:06Z\n")
    monkeypatch.setattr(host_toolchains, "GO_ROOTS", (tmp_path / "local" / "go",))
    return tmp_path


def go_ctx(output: str, python: str = "3.13", **kw: object) -> RepairContext:
    from autoinstall.ecosystems.go.diagnosis import diagnose as go_diagnose  # only these tests read Go's

    step = Step(command="go build ./...", why="compile", kind="project")
    return RepairContext(plan=Plan(ecosystem="go", python=python, steps=[step]), failing=step, phase="install",
                         output=output, diagnosis=go_diagnose(output), python=python, available_pythons=[python],
                         **kw)


def test_go_trees_are_found_and_the_oldest_meeting_the_go_line_is_planned(goroots: Path) -> None:
    from autoinstall.ecosystems.go.survey import survey as go_survey  # only these tests read Go's

    assert [t.key for t in found_on_host("go")] == ["go-1.25.1", "go-1.26.8"]  # a release candidate is no release
    repo = goroots / "repo"
    repo.mkdir()
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.25.0\n")
    plan = GoEcosystem().propose(go_survey(repo), repo, ("3.13",))
    assert plan.python == "3.13+go-1.25.1"
    assert any("go.mod:3 asks for go 1.25.0" in n and str(goroots / "sdk" / "go1.25.1") in n for n in plan.notes)
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.27.0\n")
    plan = GoEcosystem().propose(go_survey(repo), repo, ("3.13",))
    assert plan.python == "3.13" and any("the go command fetches go1.27.0" in n for n in plan.notes)


def test_a_go_line_beyond_the_image_takes_the_hosts_go_then_the_module_proxys(goroots: Path) -> None:
    from autoinstall.ecosystems.go.repairs import repair as go_repair  # only these tests repair Go

    out = "go: go.mod requires go >= 1.26.0 (running go 1.24.4; GOTOOLCHAIN=local)"
    r = go_repair(go_ctx(out))
    assert r is not None and (r.kind, r.python) == ("switch_python", "3.13+go-1.26.8")
    assert str(goroots / "local" / "go") in r.reason
    proxy = go_repair(go_ctx(out, tried=[r]))  # the host's did not do: the exact release from the proxy
    assert proxy is not None and (proxy.kind, proxy.env) == ("set_env", {"GOTOOLCHAIN": "go1.26.0"})
    newer = go_repair(go_ctx(out.replace("1.26.0", "1.27.0")))  # no host Go meets it: straight to the proxy
    assert newer is not None and newer.env == {"GOTOOLCHAIN": "go1.27.0"}


def test_the_replay_dockerfile_names_each_toolchain_and_where_it_came_from() -> None:
    from autoinstall.record.dockerfile import render_dockerfile  # only this test renders one

    host = HostToolchain(name="rust", version="1.95.0", prefix="/r/stable", digest="abc").record()
    [proxy] = toolchains.records(GoEcosystem(), "3.13", {"GOTOOLCHAIN": "go1.25.0"}, Path("/nonexistent"))
    text = render_dockerfile(base_image="base:rust", steps=[BUILD], env={"GOTOOLCHAIN": "go1.25.0"}, name="p",
                             commit=None, source="/p", toolchains=[host, proxy])
    assert ("# Toolchain: rust 1.95.0 from the host: /r/stable (digest abc) (in the base image at "
            "/opt/toolchains/rust-1.95.0)\n") in text
    assert "# Toolchain: go 1.25.0 from the registry: golang.org/toolchain@v0.0.1-go1.25.0.linux-" in text
    assert text.index("FROM base:rust") < text.index("# Toolchain") < text.index('ENV GOTOOLCHAIN="go1.25.0"')
