"""Debian's suites as a source of toolchains (envs/debian_toolchains.py, envs/debian_layer.py), without Docker: what
an index offers, which one a need chooses and in which order (the host's, Debian's, the registry's, the fallback),
the layer's recipe (apt source, low pin, exact versions, the refusal of essential packages), the spec's record
and the replay Dockerfile that repeats the recipe. tests/autoinstall/test_debian_toolchain_docker.py builds one."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.go import GoEcosystem
from autoinstall.ecosystems.go.repairs import repair as go_repair
from autoinstall.ecosystems.go.survey import survey as go_survey
from autoinstall.ecosystems.java.repairs import repair as java_repair
from autoinstall.ecosystems.java.toolchain import planned as java_planned
from autoinstall.ecosystems.java.survey import survey as java_survey
from autoinstall.ecosystems.rust.repairs import MSRV_UPDATE
from autoinstall.ecosystems.rust.repairs import repair as rust_repair
from autoinstall.ecosystems.rust.survey import survey as rust_survey
from autoinstall.ecosystems.rust.toolchain import planned as rust_planned
from autoinstall.ecosystems.rust.toolchain import toolchain_repair
from autoinstall.record.dockerfile import render_dockerfile
from envs import debian_toolchains, host_toolchains
from envs.debian_layer import recipe
from envs.debian_toolchains import SUITES_ENV, SuiteIndex, candidates, parse_packages, upstream
from envs.host_toolchains import HostToolchain
from envs.spec import Step
from tests.autoinstall.test_toolchains import NEEDS_188, ctx, go_ctx

INDEXES = {
    "trixie": """\
Package: libc6
Version: 2.41-12+deb13u5

Package: openjdk-21-jdk-headless
Version: 21.0.13+8-1~deb13u1
Depends: openjdk-21-jre-headless (= 21.0.13+8-1~deb13u1), libc6 (>= 2.34)

Package: openjdk-25-jdk-headless
Version: 25.0.5+8-1~deb13u1
Depends: openjdk-25-jre-headless (= 25.0.5+8-1~deb13u1), libc6 (>= 2.34)

Package: golang-1.24-go
Version: 1.24.4-1

Package: rustc
Version: 1.85.1+dfsg1-1+deb13u1

Package: cargo
Version: 1.85.1+dfsg1-1+deb13u1
""",
    "testing": """\
Package: openjdk-26-jdk-headless
Version: 26.0.2.1+1-1
Depends: libc6 (>= 2.38)

Package: openjdk-27-jdk-headless
Version: 27~34ea-1

Package: golang-1.26-go
Version: 1.26.10-1
Depends: golang-1.26-src (>= 1.26.10-1), libc6 (>= 2.34)

Package: rustc
Version: 1.97.1+dfsg1-1
Depends: libc6 (>= 2.34), libstd-rust-dev (= 1.97.1+dfsg1-1)

Package: cargo
Version: 1.97.1+dfsg1-1

Package: nodejs
Version: 24.21.0+dfsg+~cs24.13.4-1
""",
    "unstable": """\
Package: openjdk-28-jdk-headless
Version: 28.0.1+3-1
Depends: libc6 (>= 2.43)

Package: golang-1.27-go
Version: 1.27.3-1

Package: rustc
Version: 1.98.0+dfsg1-1

Package: cargo
Version: 1.97.1+dfsg1-1
""",
}
"""Abridged from what the suites carried on this machine's mirror (2026-10-30)."""


def _index(suite: str) -> SuiteIndex:
    return SuiteIndex(suite=suite, codename={"testing": "forky"}.get(suite, suite), date="Fri, 30 Oct 2026",
                      packages=parse_packages(INDEXES[suite], debian_toolchains._wanted))


@pytest.fixture
def debian(monkeypatch: pytest.MonkeyPatch) -> None:
    """No host toolchains; Debian's suites from INDEXES (no mirror is read)."""
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    monkeypatch.setenv(SUITES_ENV, "testing unstable")
    monkeypatch.setattr(debian_toolchains, "suite_index", lambda suite, mirror: _index(suite))


def test_upstream_versions_and_the_releases_each_suite_offers() -> None:
    assert upstream("1:1.97.1+dfsg1-1") == "1.97.1" and upstream("25.0.5+8-1~deb13u1") == "25.0.5"
    found, refused = candidates("java", [_index(s) for s in ("trixie", "testing", "unstable")], "trixie")
    # trixie's own 25 beside its default 21; testing's 26; 27's early access is no release; unstable's 28 needs a
    # newer libc6 than trixie's and is refused with the reason
    assert [t.key for t in found] == ["java-21.0.13@trixie", "java-25.0.5@trixie", "java-26.0.2.1@testing"]
    assert refused == ["Debian unstable's openjdk-28-jdk-headless 28.0.1+3-1 needs libc6 >= 2.43, the base suite "
                       "has 2.41-12+deb13u5"]
    assert found[1].home == f"/usr/lib/jvm/java-25-openjdk-{debian_toolchains.arch()}"
    rust, _ = candidates("rust", [_index(s) for s in ("trixie", "testing", "unstable")], "trixie")
    # rustc goes with cargo of the same version: unstable's rustc 1.98 has no cargo 1.98 yet
    assert [(t.key, t.packages) for t in rust] == [
        ("rust-1.85.1@trixie", {"rustc": "1.85.1+dfsg1-1+deb13u1", "cargo": "1.85.1+dfsg1-1+deb13u1"}),
        ("rust-1.97.1@testing", {"rustc": "1.97.1+dfsg1-1", "cargo": "1.97.1+dfsg1-1"})]


def test_the_host_comes_first_then_debian_then_the_registry(debian: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.25.0\n")
    plan = GoEcosystem().propose(go_survey(repo), repo, ("3.13",))
    assert plan.python == "3.13+go-1.26.10@testing"
    assert any("go.mod:3 asks for go 1.25.0" in n and "Debian testing's golang-1.26-go=1.26.10-1" in n
               and "pinned low" in n for n in plan.notes), plan.notes
    # the host's Go that meets it goes first
    host = HostToolchain(name="go", version="1.25.1", prefix="/sdk/go1.25.1", digest="d")
    monkeypatch.setattr(toolchains, "host_toolchains", lambda name: [host] if name == "go" else [])
    assert GoEcosystem().propose(go_survey(repo), repo, ("3.13",)).python == "3.13+go-1.25.1"
    monkeypatch.setattr(toolchains, "host_toolchains", lambda name: [])
    # a need no suite meets: the module proxy's, as before
    out = "go: go.mod requires go >= 1.28.0 (running go 1.24.4; GOTOOLCHAIN=local)"
    proxy = go_repair(go_ctx(out))
    assert proxy is not None and proxy.env == {"GOTOOLCHAIN": "go1.28.0"}
    debian_go = go_repair(go_ctx(out.replace("1.28.0", "1.27.0")))
    assert debian_go is not None and debian_go.python == "3.13+go-1.27.3@unstable"  # testing has none
    # once tried, the registry's
    again = go_repair(go_ctx(out.replace("1.28.0", "1.27.0"), tried=[debian_go]))
    assert again is not None and again.env == {"GOTOOLCHAIN": "go1.27.0"}
    monkeypatch.setenv(SUITES_ENV, "off")
    plan = GoEcosystem().propose(go_survey(repo), repo, ("3.13",))
    assert plan.python == "3.13" and any("the go command fetches go1.25.0" in n for n in plan.notes)


def test_rust_takes_debians_rustc_before_the_msrv_fallback(debian: None, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\nrust-version = "1.88"\n')
    python, notes = rust_planned(rust_survey(tmp_path), "3.13")
    assert python == "3.13+rust-1.97.1@testing" and "rustc=1.97.1+dfsg1-1 cargo=1.97.1+dfsg1-1" in notes[-1]
    switched = rust_repair(ctx(NEEDS_188))
    assert switched is not None and switched.python == "3.13+rust-1.97.1@testing"
    assert toolchains.current(switched.python, "rust") == "1.97.1"
    assert toolchain_repair(ctx(NEEDS_188, python=switched.python)) is None  # met there: nothing to switch to
    needs_199 = NEEDS_188.replace("1.88", "1.99")  # nothing carries it: MSRV-aware resolution stays the last resort
    fallback = rust_repair(ctx(needs_199))
    assert fallback is not None and fallback.step is not None and fallback.step.command == MSRV_UPDATE
    monkeypatch.setenv(SUITES_ENV, "off")
    python, notes = rust_planned(rust_survey(tmp_path), "3.13")
    assert python == "3.13" and "MSRV-aware" in notes[-1]


def test_java_takes_the_base_suites_own_newer_jdk_then_a_newer_suites(debian: None, tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text("<project><properties><maven.compiler.release>25</maven.compiler.release>"
                                      "</properties></project>")
    python, notes = java_planned(java_survey(tmp_path), "3.13")
    assert python == "3.13+java-25.0.5@trixie" and "as JAVA_HOME" in notes[-1] and "pinned" not in notes[-1]
    (tmp_path / "pom.xml").write_text("<project><properties><maven.compiler.release>28</maven.compiler.release>"
                                      "</properties></project>")
    python, notes = java_planned(java_survey(tmp_path), "3.13")
    assert python == "3.13" and notes[-1].endswith("the build is expected to fail")
    assert any("unstable's openjdk-28-jdk-headless" in n and "libc6 >= 2.43" in n for n in notes), notes


def test_the_recipe_pins_the_newer_suite_low_and_installs_exact_versions() -> None:
    [_, go] = candidates("go", [_index("trixie"), _index("testing")], "trixie")[0]
    text = recipe(go, "http://mirror/debian")
    assert "URIs: http://mirror/debian\\nSuites: testing\\n" in text and "Check-Valid-Until: no" in text
    assert "Pin: release a=testing\\nPin-Priority: 100" in text
    assert "apt-get install -y --no-install-recommends golang-1.26-go/testing" in text
    assert "for pv in golang-1.26-go=1.26.10-1;" in text and "autoinstall: refused:" in text
    assert "printf 'libc6\\nlibgcc-s1\\nlibstdc++6\\n'" in text
    assert "ENV PATH=/usr/lib/go-1.26/bin:$PATH GOTOOLCHAIN=local\nRUN go version" in text
    [_, jdk25] = candidates("java", [_index("trixie")], "trixie")[0]
    own = recipe(jdk25, "http://mirror/debian")  # the base suite's own package: its source is the image's
    assert "sources.list.d" not in own and "preferences.d" not in own and "openjdk-25-jdk-headless/trixie" in own
    assert "JAVA_HOME=/usr/lib/jvm/java-25-openjdk-" in own and "jssecacerts" in own


def test_the_replay_starts_under_the_layer_and_repeats_its_recipe(tmp_path: Path) -> None:
    [_, go] = candidates("go", [_index("trixie"), _index("testing")], "trixie")[0]
    steps = recipe(go, "http://mirror/debian")
    record = go.record({"golang-1.26-src": "1.26.10-1"}).model_copy(update={"recipe": steps, "base": "base:go"})
    assert record.source == "debian:testing (forky, Fri, 30 Oct 2026)" and record.origin == "debian"
    assert record.packages == {"golang-1.26-go": "1.26.10-1", "golang-1.26-src": "1.26.10-1"}
    build = Step(command="go build ./...", why="compile", kind="project")
    text = render_dockerfile(base_image="base:go-layer", steps=[build], env={}, name="p", commit=None,
                             source="/p", toolchains=[record])
    assert "FROM base:go\n# Debian testing's go 1.26.10: the layer under the steps\n" + steps in text
    assert text.index(steps) < text.index("COPY repo/") < text.index("# Toolchain: go 1.26.10 from the debian")
    host = HostToolchain(name="rust", version="1.95.0", prefix="/r", digest="abc").record()
    text = render_dockerfile(base_image="base:both", steps=[build], env={}, name="p", commit=None, source="/p",
                             toolchains=[record, host])  # a host layer on top: the base image carries both
    assert "FROM base:both\n" in text and steps not in text
    [gone] = toolchains.records(GoEcosystem(), "3.13+go-1.26.10@testing", {}, tmp_path)
    assert (gone.origin, gone.suite, gone.version) == ("debian", "testing", "1.26.10")


def test_javacs_need_switches_to_debians_jdk_and_a_chat_model_may_name_it(debian: None) -> None:
    from autoinstall.ecosystems.java import JavaEcosystem  # only this test reads Java's repairs
    from tests.autoinstall.test_jdk_toolchains import RELEASE_25
    from tests.autoinstall.test_jdk_toolchains import ctx as java_ctx

    switched = java_repair(java_ctx(RELEASE_25))
    assert switched is not None and switched.kind == "switch_python" and switched.python == "3.13+java-25.0.5@trixie"
    assert "openjdk-25-jdk-headless=25.0.5+8-1~deb13u1" in switched.reason and "JAVA_HOME" in switched.reason
    choices = toolchains.choices(JavaEcosystem())
    assert "3.13+java-25.0.5@trixie" in choices and "3.13+java-26.0.2.1@testing" in choices
    assert not any("java-21" in c for c in choices)  # not newer than the image's own


def test_an_index_is_read_once_a_day_and_a_mirror_out_of_reach_once(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import lzma  # only this test writes an index

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        if "nowhere" in url:
            raise OSError("unreachable")
        return b"Codename: forky\nDate: Fri, 30 Oct 2026\n" if url.endswith("Release") else lzma.compress(
            INDEXES["testing"].encode())

    monkeypatch.setattr(debian_toolchains, "_fetch", fetch)
    first = debian_toolchains.suite_index("testing", "http://mirror/debian")
    assert first is not None and first.codename == "forky" and len(asked) == 2
    assert {p.name for p in first.packages} == {"openjdk-26-jdk-headless", "openjdk-27-jdk-headless",
                                                 "golang-1.26-go", "rustc", "cargo"}  # nodejs is no kind here
    assert debian_toolchains.suite_index("testing", "http://mirror/debian") == first and len(asked) == 2
    debian_toolchains.forget("testing", "http://mirror/debian")
    assert debian_toolchains.suite_index("testing", "http://mirror/debian") == first and len(asked) == 4
    assert debian_toolchains.suite_index("testing", "http://nowhere/debian") is None
    assert debian_toolchains.suite_index("testing", "http://nowhere/debian") is None and len(asked) == 5


def test_the_layer_refuses_a_plan_that_replaces_the_c_runtime_and_says_what(tmp_path: Path) -> None:
    import subprocess  # only this test runs the recipe's own shell (our text, on apt output written here)

    [_, _, jdk26] = candidates("java", [_index("trixie"), _index("testing")], "trixie")[0]
    lines = recipe(jdk26, "http://mirror/debian").replace("/tmp/", f"{tmp_path}/").split("; \\\n    ")
    judge = "; ".join(line for line in lines if line.startswith(("awk 'NR==FNR", "if [ -s ")))
    (tmp_path / "kept").write_text("dpkg\nlibc-bin\nlibc6\n")
    (tmp_path / "plan").write_text(
        "Inst libnss3 (2:3.110-1+deb13u5 Debian:13.8/stable [amd64])\n"
        "Inst libc6 [2.41-12+deb13u5] (2.43-7 Debian:testing [amd64])\n"
        "Inst openjdk-26-jdk-headless (26.0.2.1+1-1 Debian:testing [amd64])\n")
    refused = subprocess.run(["sh", "-c", judge], capture_output=True, text=True, check=False)
    assert refused.returncode == 3, refused
    assert refused.stderr.startswith("autoinstall: refused: Debian testing's java 26.0.2.1 would replace")
    assert "packages): libc6 2.41-12+deb13u5 -> 2.43-7; Use a toolchain built for the base suite" in refused.stderr
    (tmp_path / "plan").write_text("Inst libnss3 (2:3.110-1+deb13u5 Debian:13.8/stable [amd64])\n"
                                   "Inst openjdk-26-jdk-headless (26.0.2.1+1-1 Debian:testing [amd64])\n")
    assert subprocess.run(["sh", "-c", judge], capture_output=True, check=False).returncode == 0
