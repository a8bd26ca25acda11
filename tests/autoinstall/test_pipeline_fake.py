"""build_environment end to end on the FakeFactory: no Docker, a scripted machine, real stages and records.

The machine (`Machine`) keeps its state in the sandbox's files, so snapshots, rollbacks and the finalized
image carry it the way Docker images do; installs need the network, imports and tests need the install.
"""
import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from autoinstall.plan.models.replay_server import ReplayServer, tool_call
from autoinstall.record import load_spec
from autoinstall.record.replay import EarlyBuild, early_context
from envs.base import ExecResult, SandboxFactory
from envs.catalog import Catalog
from envs.fake import FactorySandbox, FakeFactory, FakeSandbox
from envs.spec import EnvSpec, Verification

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "pep621_extras"


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each build its own AUTOINSTALL_HOME: every test here builds pep621_extras, whose build lock lives in the
    home, and tests on other xdist workers (or another run) building it at the same moment would find it held."""
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
INSTALLED = "/opt/venv/installed/eggs"
HEADERS = "/usr/include/zlib.h"
TESTS = ("test_default_size", "test_size[1]", "test_size[2]", "test_size[3]")
FREEZE = "attrs==23.2.0\niniconfig==2.0.0\npytest==8.0.0\n"


def junit_report() -> bytes:
    """A JUnit XML report in which the fixture's four tests pass."""
    cases = "".join(f'<testcase classname="tests.test_eggs" name="{n}" file="tests/test_eggs.py"/>'
                    for n in TESTS)
    return f'<?xml version="1.0"?><testsuites><testsuite>{cases}</testsuite></testsuites>'.encode()


class Machine:
    """The scripted behaviour: (sandbox, command, env) -> result, changing the sandbox's files."""

    def __init__(self, install_error: str = "", needs_headers: bool = False) -> None:
        """`install_error`: what installing the checkout always prints; `needs_headers`: it needs zlib.h."""
        self.install_error, self.needs_headers = install_error, needs_headers

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        """Installs need the network; imports, collection and tests need the checkout installed."""
        installed = INSTALLED in sb.files
        if cmd.startswith(("uv pip install", "apt-get")) and not sb.network:
            return ExecResult(exit_code=1, stderr="error: network unreachable")
        if cmd.startswith("apt-get"):
            sb.files[HEADERS] = b"zlib"
            return ExecResult(exit_code=0)
        if cmd.startswith("uv pip install -e"):
            return self._install(sb)
        if cmd.startswith("uv pip install"):
            return ExecResult(exit_code=0)
        if cmd == "uv pip freeze --exclude-editable":
            return ExecResult(exit_code=0, stdout=FREEZE)
        if junit := re.search(r"--junitxml=(\S+)", cmd):
            if not installed:
                return ExecResult(exit_code=2, stdout="ModuleNotFoundError: No module named 'eggs'")
            sb.write_file(junit.group(1), junit_report())
            return ExecResult(exit_code=0, stdout="4 passed in 0.01s")
        if cmd.startswith(("python -c 'import eggs'", "python -m pytest --collect-only", "eggs --help")):
            return ExecResult(exit_code=0 if installed else 1)
        return None

    def _install(self, sb: FakeSandbox) -> ExecResult:
        """`uv pip install -e`: marks the project installed, unless it is scripted to fail."""
        if self.install_error:
            return ExecResult(exit_code=1, stderr=self.install_error)
        if self.needs_headers and HEADERS not in sb.files:
            return ExecResult(exit_code=1,
                              stderr="src/eggs/_speed.c:1:10: fatal error: zlib.h: No such file or directory")
        if "/workspace/pyproject.toml" not in sb.files:
            return ExecResult(exit_code=1, stderr="error: /workspace does not contain a Python project")
        sb.files[INSTALLED] = b"1"
        return ExecResult(exit_code=0)


def runs(sandbox: FactorySandbox) -> list[str]:
    """The test runs (pytest with a JUnit report) a sandbox executed."""
    return [c for c in sandbox.commands() if "--junitxml=" in c]


def dockerfile_runs(out: Path) -> list[str]:
    """The bash commands of the written Dockerfile's RUN lines."""
    return [json.loads(line.removeprefix("RUN "))[2] for line in (out / "Dockerfile").read_text().splitlines()
            if line.startswith("RUN ")]


def assert_snapshots_discarded(spec: EnvSpec, factory: FakeFactory) -> None:
    """Every snapshot taken was discarded; only the base image and the environment's image remain."""
    taken = sum(1 for s in factory.sandboxes for c in s.calls if c.method == "snapshot")
    assert taken and sorted(t for t in factory.discarded if t.startswith("fake-snapshot-")) == sorted(
        f"fake-snapshot-{i}" for i in range(1, taken + 1))
    assert set(factory.images) == {spec.base_image, spec.image}


def assert_verified_and_recorded(spec: EnvSpec, factory: FakeFactory, out: Path, tmp_path: Path,
                                 verified_in: str | None = None) -> None:
    """What every verified build must show: offline verification (in `verified_in`, the image the environment's
    was tagged from; its own by default), records on disk, nothing left behind."""
    assert spec.status == "verified" and spec.failure is None, spec.failure
    assert spec.base_image == "fake-base:python3.11"
    installs = [s for s in factory.sandboxes if s.cache]
    checks = [s for s in factory.sandboxes if s.image == (verified_in or spec.image)]
    assert installs and all(s.network_at_start and s.image == spec.base_image for s in installs)
    assert [s.network_at_start for s in checks] == [False]
    installing = [e for e in factory.executed if e.sandbox in {s.index for s in installs}]
    assert all(e.network for e in installing if e.command in {s.command for s in spec.steps})
    assert not any(e.network for e in installing if "--junitxml=" in e.command)
    assert not any(e.network for e in factory.executed if e.sandbox == checks[0].index)
    # the install's last run agreed with the image's: the suite ran once more in the image, not twice
    assert len(runs(checks[0])) == 1 and [r.sandbox for r in spec.verification.runs] == ["install", "image"]
    assert [r.passed for r in spec.verification.runs] == [4, 4]
    assert INSTALLED in factory.images[spec.image].files
    assert factory.images[spec.image].labels["autoinstall.kind"] == "environment"

    assert load_spec(out / "spec.json") == spec
    assert (out / "Dockerfile").read_text() == spec.dockerfile
    assert dockerfile_runs(out) == [s.command for s in spec.steps]
    assert f"FROM {spec.base_image}" in spec.dockerfile
    assert (out / "context" / "autoinstall" / "constraints.txt").read_text() == FREEZE

    assert_snapshots_discarded(spec, factory)

    record = Catalog(tmp_path / "catalog").upsert_spec(spec, out)
    assert (record.status, record.tests_passed, record.image) == ("verified", 4, spec.image)
    assert Catalog(tmp_path / "catalog").get(record.id).env_dir == str(out.resolve())


def test_embedded_model_builds_verifies_and_rebuilds_from_its_dockerfile(tmp_path: Path) -> None:
    factory = FakeFactory(Machine())
    out = tmp_path / "env"
    events: list[tuple[str, str]] = []
    spec = build_environment(str(REPO), BuildOptions(out_dir=out, rebuild_check=True),
                             lambda event, text: events.append((event, text)), factory=factory)

    rebuilt = factory.images[spec.image].parent
    assert rebuilt == f"{spec.image}-rebuild-1"  # built while the install's suite ran, and taken: nothing changed
    assert_verified_and_recorded(spec, factory, out, tmp_path, verified_in=rebuilt)
    assert [s.command for s in spec.steps] == [s.command for s in spec.plan.steps] == [
        "uv pip install -e '.[test]'"]
    assert [text for event, text in events if event == "phase"] == ["source", "propose", "install", "verify"]
    # the environment's image is the replay's build, verified once; the snapshot's image is never verified
    assert rebuilt in factory.discarded and not [s for s in factory.sandboxes if s.image == spec.image]
    snapshot_reads = [s for s in factory.sandboxes if s.image.startswith("fake-snapshot") and not s.cache]
    assert [s.commands() for s in snapshot_reads] == [["uv pip freeze --exclude-editable"]]
    rebuild = [c for c in spec.verification.checks if c.name == "rebuild"]
    assert len(rebuild) == 1 and rebuild[0].ok
    assert "is this build, made and its suite run beside the install phase" in rebuild[0].output_tail
    # its checks and one suite run were made as soon as it was built; the install's last run is the other
    assert len([e for e in factory.executed if e.image == rebuilt and "--junitxml=" in e.command]) == 1
    assert [r.sandbox for r in spec.verification.runs] == ["install", "image"]
    builder = next(s for s in factory.sandboxes if s.image == spec.base_image and not s.cache)
    assert builder.commands() == [s.command for s in spec.steps]


class FailsIn(Machine):
    """Machine whose suite fails in the replay's image (`rebuild`) and/or in the snapshot's, tagged as the
    environment's (`image`), never in the install sandbox."""

    def __init__(self, *where: str) -> None:
        super().__init__()
        self.where = where

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        place = ("rebuild" if re.search(r"-rebuild(-\d+)?$", sb.image) else "install" if sb.image.startswith(
            ("fake-base", "fake-snapshot")) else "image")
        if place in self.where and "--junitxml=" in cmd:
            return ExecResult(exit_code=1, stdout="1 failed, 3 passed in 0.01s")
        return super().__call__(sb, cmd, env)


def test_a_replay_that_does_not_verify_is_a_mismatch_when_the_snapshot_does(tmp_path: Path) -> None:
    factory = FakeFactory(FailsIn("rebuild"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True), factory=factory)

    assert spec.status == "failed" and spec.failure is not None
    assert spec.failure.failure_class == "rebuild_mismatch", spec.failure
    assert factory.images[spec.image].parent.startswith("fake-snapshot")  # debug starts from the installed state
    assert len(runs(next(s for s in factory.sandboxes if s.image == spec.image))) == 1  # the snapshot's verdict
    rebuild = [c for c in spec.verification.checks if c.name == "rebuild"]
    assert len(rebuild) == 1 and not rebuild[0].ok
    assert not [i for i in factory.images if "-rebuild" in i]
    assert load_spec(tmp_path / "env" / "spec.json").failure.failure_class == "rebuild_mismatch"


def test_an_environment_that_fails_in_both_images_keeps_its_own_failure(tmp_path: Path) -> None:
    factory = FakeFactory(FailsIn("rebuild", "image"))
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True), factory=factory)

    assert spec.status == "failed" and spec.failure is not None
    assert spec.failure.failure_class not in ("rebuild_mismatch", "infrastructure"), spec.failure
    assert [c.ok for c in spec.verification.checks if c.name == "rebuild"] == [False]
    assert not [i for i in factory.images if "-rebuild" in i]


def test_a_dockerfile_that_does_not_build_is_a_mismatch_not_an_error(tmp_path: Path) -> None:
    class NoNetworkInBuilds(Machine):
        def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
            if sb.image == "fake-base:python3.11" and not sb.cache and cmd.startswith("uv pip install"):
                return ExecResult(exit_code=1, stderr="error: the registry is unreachable")
            return super().__call__(sb, cmd, env)

    factory = FakeFactory(NoNetworkInBuilds())
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True), factory=factory)

    assert spec.failure is not None and spec.failure.failure_class == "rebuild_mismatch", spec.failure
    assert "did not build" in spec.failure.message
    assert factory.images[spec.image].parent.startswith("fake-snapshot")


PLAN = {"python": "3.11", "test_command": "python -m pytest",
        "steps": [{"command": "uv pip install 'attrs>=21'", "why": "the runtime dependency", "kind": "other"},
                  {"command": "uv pip install -e '.[test]'", "why": "the checkout", "kind": "project"}],
        "checks": [{"name": "import eggs", "kind": "import", "command": "python -c 'import eggs'"}]}


def test_replay_chat_model_plan_is_installed_in_order_and_verified(tmp_path: Path) -> None:
    factory = FakeFactory(Machine())
    out = tmp_path / "env"
    replies = [tool_call("read_file", {"path": "pyproject.toml"}, "c1"),
               tool_call("submit_plan", {"plan": json.dumps(PLAN)}, "c2")]
    with ReplayServer(replies) as server:
        options = BuildOptions(model="openai:replay", base_url=server.base_url, out_dir=out)
        spec = build_environment(str(REPO), options, factory=factory)

    assert_verified_and_recorded(spec, factory, out, tmp_path)
    assert spec.model == "openai:replay" and spec.image.endswith("-openai-replay")
    assert [s.command for s in spec.steps] == [s["command"] for s in PLAN["steps"]]
    assert 'name = "eggs"' in server.requests[1]["messages"][-1]["content"]
    install = factory.sandboxes[0]
    installed = [c for c in install.commands() if c.startswith("uv pip install")]
    assert installed == [s.command for s in spec.steps]


def test_failed_step_is_repaired_and_the_build_verifies_on_the_repaired_steps(tmp_path: Path) -> None:
    factory = FakeFactory(Machine(needs_headers=True))
    out = tmp_path / "env"
    spec = build_environment(str(REPO), BuildOptions(out_dir=out), factory=factory)

    assert_verified_and_recorded(spec, factory, out, tmp_path)
    assert [s.command for s in spec.plan.steps] == ["uv pip install -e '.[test]'"]
    assert [s.command.split()[-1] for s in spec.steps] == ["zlib1g-dev", "'.[test]'"]
    failed = [e for e in spec.log if e.exit_code != 0]
    assert len(failed) == 1 and failed[0].diagnosis is not None and failed[0].diagnosis.subject == "zlib.h"
    assert failed[0].repair is not None and failed[0].repair.kind == "insert_before"
    install = factory.sandboxes[0]
    assert [c.method for c in install.calls].count("restore") == 1
    assert HEADERS in factory.images[spec.image].files


def test_a_step_nothing_repairs_fails_with_its_evidence_and_keeps_the_last_good_state(tmp_path: Path) -> None:
    factory = FakeFactory(Machine(install_error="error: the compiler exploded\nSegmentation fault"))
    out = tmp_path / "env"
    spec = build_environment(str(REPO), BuildOptions(out_dir=out), factory=factory)

    assert spec.status == "failed" and spec.failure is not None
    assert (spec.failure.failure_class, spec.failure.step_index) == ("install_failed", 1)
    assert "Segmentation fault" in spec.failure.evidence
    assert spec.steps == [] and spec.verification is None
    assert all(s.network_at_start for s in factory.sandboxes)
    kept = factory.images[spec.image]
    assert kept.origin == "finalize" and "/workspace/pyproject.toml" in kept.files
    assert INSTALLED not in kept.files
    assert kept.parent in factory.discarded
    assert_snapshots_discarded(spec, factory)
    assert load_spec(out / "spec.json") == spec and not (out / "Dockerfile").exists()
    record = Catalog(tmp_path / "catalog").upsert_spec(spec, out)
    assert (record.status, record.failure_class) == ("failed", "install_failed")


def test_a_tree_with_nothing_to_build_fails_listing_what_was_looked_for(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "docs").mkdir(parents=True)
    (empty / "README.md").write_text("# notes only\n")
    (empty / "docs" / "index.md").write_text("# docs\n")
    factory = FakeFactory()
    spec = build_environment(str(empty), BuildOptions(out_dir=tmp_path / "env"), factory=factory)
    assert spec.status == "failed" and spec.failure is not None and spec.failure.failure_class == "no_build_files"
    for name in ("pyproject.toml", "requirements*.txt", "package.json", "go.mod", "Cargo.toml", "pom.xml"):
        assert name in spec.failure.message, spec.failure.message
    assert "3 levels below" in spec.failure.message and not factory.sandboxes  # no sandbox was started


class NeedsPluginForTests(Machine):
    """Machine whose suite needs a package the plan does not install: the first run fails on its import, and
    the repair installs it after the steps (so after the replay's early build started)."""

    PLUGIN = "/opt/venv/installed/hypothesis"

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        if cmd.startswith("uv pip install") and "hypothesis" in cmd and sb.network:
            sb.files[self.PLUGIN] = b"1"
            return ExecResult(exit_code=0)
        if ("--junitxml=" in cmd or "--collect-only" in cmd) and self.PLUGIN not in sb.files:
            return ExecResult(exit_code=2, stdout="E   ModuleNotFoundError: No module named 'hypothesis'\n"
                                                  "1 error in 0.01s")
        return super().__call__(sb, cmd, env)


def test_a_step_added_after_the_early_build_gets_a_replay_of_its_own(tmp_path: Path) -> None:
    factory = FakeFactory(NeedsPluginForTests())
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True), factory=factory)

    assert spec.status == "verified", spec.failure
    assert any("hypothesis" in s.command for s in spec.steps), spec.steps
    # built again as soon as the repair's step was in, beside the suite's next run: the first one lacked it
    assert factory.images[spec.image].parent == f"{spec.image}-rebuild-2"
    assert f"{spec.image}-rebuild-1" in factory.discarded  # the first early build, not taken, removed
    assert not [i for i in factory.images if "-rebuild" in i]
    assert any("hypothesis" in line for line in spec.dockerfile.splitlines() if line.startswith("RUN"))


class SlowBuilds(FakeFactory):
    """A factory whose builds wait for `release` (a replay still downloading)."""

    def __init__(self, release: threading.Event, behaviour: Machine | None = None) -> None:
        super().__init__(behaviour)
        self.release = release

    def build(self, context: Path, tag: str, labels: Mapping[str, str]) -> str:
        self.release.wait(30)
        return super().build(context, tag, labels)


def test_an_interrupt_does_not_wait_for_the_replay_still_building(tmp_path: Path) -> None:
    release = threading.Event()
    class InterruptedSuite(Machine):
        def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
            if "--junitxml=" in cmd:
                raise KeyboardInterrupt
            return super().__call__(sb, cmd, env)

    factory = SlowBuilds(release, InterruptedSuite())
    try:
        with pytest.raises(KeyboardInterrupt):
            build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True), factory=factory)
        assert not release.is_set()  # it came back while the replay was still building
        assert [t for t in threading.enumerate() if t.name == "early-replay"]
    finally:
        release.set()
    for thread in [t for t in threading.enumerate() if t.name == "early-replay"]:
        thread.join(30)


def replay_context(at: Path, base: str) -> Path:
    """A replay's build context at `at`: a Dockerfile from `base`, an empty autoinstall/."""
    (at / "autoinstall").mkdir(parents=True, exist_ok=True)
    (at / "Dockerfile").write_text(f"FROM {base}\n")
    return at


def test_a_replay_of_a_context_that_is_no_longer_the_final_one_is_not_waited_for(tmp_path: Path) -> None:
    release = threading.Event()
    factory = SlowBuilds(release)
    base = factory.base_image("3.11")
    early = EarlyBuild(factory, "autoinstall-env/x:1")
    early.start(replay_context(early_context(), base))  # what the install had done when its steps were in
    try:
        assert early.take(replay_context(tmp_path / "final", f"{base}-changed")) is None  # the freeze differs
        assert [t for t in threading.enumerate() if t.name == "early-replay"]  # came back, the build still on
    finally:
        release.set()
    early.discard()
    assert factory.discarded == ["autoinstall-env/x:1-rebuild-1"]


def test_the_last_replay_is_taken_when_its_context_is_the_final_one(tmp_path: Path) -> None:
    factory = FakeFactory()
    base = factory.base_image("3.11")
    early = EarlyBuild(factory, "autoinstall-env/x:1")
    early.start(replay_context(early_context(), base))

    assert early.take(replay_context(tmp_path / "final", base)) == "autoinstall-env/x:1-rebuild-1"
    early.discard()
    assert factory.discarded == []


def test_a_verification_made_of_other_inputs_is_not_kept(tmp_path: Path) -> None:
    factory = FakeFactory()
    base = factory.base_image("3.11")
    early = EarlyBuild(factory, "autoinstall-env/x:1")
    made = Verification(verified=True, reason="1/1 tests passed")
    early.start(replay_context(early_context(), base), lambda image, beside: made, inputs="plan; no deselection")

    assert early.take(replay_context(tmp_path / "final", base)) == "autoinstall-env/x:1-rebuild-1"
    assert early.verification("plan; no deselection") is made
    assert early.verification("plan; a test deselected since") is None  # verified again by the rebuild check
    early.discard()


def test_a_build_discarded_before_it_is_built_is_not_verified(tmp_path: Path) -> None:
    release = threading.Event()
    verified: list[str] = []

    factory = SlowBuilds(release)
    early = EarlyBuild(factory, "autoinstall-env/x:1")
    early.start(replay_context(early_context(), factory.base_image("3.11")),
                lambda image, beside: verified.append(image) or Verification(verified=True, reason=""),
                inputs="")
    threading.Timer(0.2, release.set).start()
    early.discard()  # the install failed: its replay is no longer wanted
    assert verified == [] and factory.discarded == ["autoinstall-env/x:1-rebuild-1"]


def test_an_interrupt_stops_the_verification_running_beside_the_install(tmp_path: Path) -> None:
    running, release = threading.Event(), threading.Event()
    sandboxes: list[FakeSandbox] = []

    def verify_beside(image: str, beside: SandboxFactory) -> Verification:
        with beside.sandbox(image, network=False) as sandbox:
            assert isinstance(sandbox, FakeSandbox)
            sandboxes.append(sandbox)
            running.set()
            release.wait(30)  # the image's suite, still running
        return Verification(verified=True, reason="")

    factory = FakeFactory()
    early = EarlyBuild(factory, "autoinstall-env/x:1")
    early.start(replay_context(early_context(), factory.base_image("3.11")), verify_beside, inputs="")
    try:
        assert running.wait(30)
        early.abandon()  # Ctrl-C: the process is on its way out, the thread would leave its container running
        assert [s.started for s in sandboxes] == [False]
    finally:
        release.set()
