"""What the ecosystems' tests do the same way: write a checkout from a dict; and for Go, Rust, Node and Java,
build the repair context of one failed command, check a table of diagnoses, a missing system package
repaired once, and tests deselected on their own messages' evidence."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Ecosystem, FailedTest, RepairContext
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs import docker as engine
from envs.host_toolchains import HostToolchain
from envs.spec import Diagnosis, EnvSpec, Plan, Repair, Step

Diagnose = Callable[..., Diagnosis]
RepairRule = Callable[[RepairContext], "Repair | None"]
TESTS = Step(command="<tests>", why="run the test suite")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """`root` with `files` (relative path -> text) written into it."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def repair_context(plan: Plan, diagnose: Diagnose, output: str, *, phase: str, failing: Step,
                   **kw: object) -> RepairContext:
    """What a repair rule sees when `failing` printed `output` in `phase` of `plan`'s build (Python 3.13)."""
    return RepairContext(plan=plan, failing=failing, phase=phase, output=output,  # type: ignore[arg-type]
                         diagnosis=diagnose(output), python="3.13", available_pythons=["3.13"], **kw)


def assert_diagnoses(diagnose: Diagnose, cases: dict[str, tuple[str, str]]) -> None:
    """Each output's (kind, subject), with evidence that is part of the output; a timeout is a timeout."""
    for output, (kind, subject) in cases.items():
        d = diagnose(output)
        assert (d.kind, d.subject) == (kind, subject), output
        assert d.evidence and d.evidence in output
    assert diagnose("", timed_out=True).kind == "timeout"


def assert_installs_debian_package_once(repair: RepairRule, ctx: Callable[..., RepairContext], output: str,
                                        package: str) -> None:
    """A missing header or library: the Debian package's apt step goes first; once tried, nothing more (the
    build itself is never skipped)."""
    r = repair(ctx(output))
    assert r is not None and r.kind == "insert_before" and r.step is not None and r.step.kind == "system"
    assert r.step.command.endswith(f"apt-get install -y -qq --no-install-recommends {package}")
    assert repair(ctx(output, tried=[r])) is None


def deselection(repair: RepairRule, ctx: Callable[..., RepairContext], eco: Ecosystem,
                failed: list[FailedTest], tests: list[str], justified: list[bool]) -> Repair:
    """The failed tests' deselection in the tests phase: exactly `tests`, for a service and the internet, and
    which of the messages justify one (`justified`, in `failed`'s order)."""
    out = "\n".join(f.message for f in failed)
    r = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed))
    assert r is not None and r.kind == "deselect" and r.tests == tests
    assert "service" in r.reason and "internet" in r.reason
    assert [eco.justifies_deselection(f.message) for f in failed] == justified
    return r


def need_host_toolchain(reason: str) -> None:
    """Skip a test whose host lacks the toolchain it copies into an image; fail under CI, whose machine kind
    has rustup's stable toolchain and a newer Go tree (the Docker path must be proven there, never skipped)."""
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {reason}", pytrace=False)
    pytest.skip(reason)


def built_on_host_toolchain(repo: Path, out: Path, chosen: HostToolchain) -> EnvSpec:
    """Build the fixture `repo` into `out` with the rebuild check (on Docker; AUTOINSTALL_HOME set by the caller)
    and check what every build on a host toolchain shows: verified on the token naming `chosen`, the base image
    labelled with it, the spec's record of its version and origin (folder and digest), the fixture's tests
    passed, the replay rebuilt, and the Dockerfile FROM that base image naming it."""
    spec = build_environment(str(repo), BuildOptions(out_dir=out, rebuild_check=True))
    assert spec.status == "verified", (spec.failure, [(e.command, e.exit_code) for e in spec.log])
    assert spec.python == f"3.13+{chosen.key}"
    assert (engine.image_labels(spec.base_image or "") or {}).get("autoinstall.toolchain") == chosen.key
    [record] = spec.toolchains
    assert (record.name, record.version, record.origin) == (chosen.name, chosen.version, "host")
    assert record.source.startswith(chosen.prefix) and chosen.digest in record.source
    assert spec.verification is not None and spec.verification.last_run is not None
    assert spec.verification.last_run.passed >= json.loads((repo / "expected.json").read_text())["min_passed"]
    assert any(c.name == "rebuild" and c.ok for c in spec.verification.checks), spec.verification.checks
    dockerfile = (out / "Dockerfile").read_text()
    assert f"FROM {spec.base_image}" in dockerfile
    assert f"# Toolchain: {chosen.name} {chosen.version} from the host: {chosen.prefix}" in dockerfile
    written = json.loads((out / "spec.json").read_text())
    assert written["toolchains"][0]["origin"] == "host" and written["toolchains"][0]["version"] == chosen.version
    return spec
