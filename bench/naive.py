"""The naive baseline of bench/setup_success.py: the one-liner a person tries first in each language, in a fresh
container of Debian's toolchain for it (the suite and packages `autoinstall` starts from: bookworm's Python 3.11,
trixie's Go 1.24, rustc 1.85, Node 20, JDK 21), the network on.

    python  pip install -e .[test] (or -e .), pytest        runnable: at least one test passed
    go      go test ./...                                    runnable: exit 0 (passed: packages `ok`)
    rust    cargo test                                       runnable: exit 0 and a test passed
    node    npm ci (npm install without a lock), npm test    runnable: exit 0 (passed: a runner's summary, if any)
    java    mvn -B test                                      runnable: exit 0 and a test passed

Go's own GOTOOLCHAIN=auto fetches a newer Go from the module proxy when go.mod asks for one, as it would for
that person; nothing else is upgraded.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from pathlib import Path

from autoinstall.ecosystems.compiled import CompiledEcosystem
from autoinstall.ecosystems.go import PACKAGES as GO_PACKAGES
from autoinstall.ecosystems.java import PACKAGES as JAVA_PACKAGES
from autoinstall.ecosystems.node.companion import PACKAGES as NODE_PACKAGES
from autoinstall.ecosystems.rust.companion import PACKAGES as RUST_PACKAGES
from autoinstall.source.checkout import prepare_source
from envs.baseimage import ensure_base_image
from envs.docker import DockerSandbox, DockerSandboxConfig
from envs.testrun import parse_summary

Counts = tuple[int, int]
"""(passed, failed) as the one-liner's output tells them."""


def _pytest(output: str, exit_code: int) -> Counts:
    counts = parse_summary(output)
    return counts["passed"], counts["failed"] + counts["error"]


def _sum(pattern: str, output: str) -> int:
    return sum(int(m) for m in re.findall(pattern, output, flags=re.MULTILINE))


def _go(output: str, exit_code: int) -> Counts:
    packages = re.compile(r"^(ok|FAIL)\t|^(ok)\s", flags=re.MULTILINE)  # `ok  \tpkg 0.1s`, `FAIL\tpkg 0.1s`
    verdicts = [m.group(1) or m.group(2) for m in packages.finditer(output)]
    return verdicts.count("ok"), verdicts.count("FAIL")


def _cargo(output: str, exit_code: int) -> Counts:
    return (_sum(r"^test result: \w+\. (\d+) passed", output), _sum(r"^test result: .*?; (\d+) failed", output))


def _maven(output: str, exit_code: int) -> Counts:
    totals = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$", output,
                        flags=re.MULTILINE)
    if not totals:
        return 0, 0
    run, failures, errors, skipped = map(int, totals[-1])  # the reactor's last summary: its module's whole run
    return run - failures - errors - skipped, failures + errors


def _node(output: str, exit_code: int) -> Counts:
    for passed, failed in ((r"(\d+) passing", r"(\d+) failing"), (r"Tests:.*?(\d+) passed", r"Tests:.*?(\d+) failed"),
                           (r"^# pass\s+(\d+)", r"^# fail\s+(\d+)"), (r"Passed:\s+(\d+)", r"Failed:\s+(\d+)"),
                           (r"Tests\s+(\d+) passed", r"Tests\s+(\d+) failed"), (r"^ℹ pass (\d+)", r"^ℹ fail (\d+)")):
        if re.search(passed, output, flags=re.MULTILINE):
            return _sum(passed, output), _sum(failed, output)
    return 0, 0


@dataclass(frozen=True)
class OneLiner:
    command: str
    packages: tuple[str, ...]
    counts: Callable[[str, int], Counts]
    runnable_when: Literal["a_test_passed", "exit_0", "exit_0_and_a_test_passed"]
    """What makes the one-liner's run count as runnable (its output's counts, its exit status, or both)."""


ONE_LINERS = {
    "python": OneLiner("pip install -q -e '.[test]' || pip install -q -e .; pip install -q pytest; "
                       "python -m pytest -q -p no:cacheprovider", (), _pytest, "a_test_passed"),
    "go": OneLiner("go test ./... 2>&1", GO_PACKAGES, _go, "exit_0"),
    "rust": OneLiner("cargo test 2>&1", RUST_PACKAGES, _cargo, "exit_0_and_a_test_passed"),
    "node": OneLiner("{ if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then npm ci; else npm install; fi "
                     "&& npm test; } 2>&1", NODE_PACKAGES, _node, "exit_0"),
    "java": OneLiner("mvn -B test 2>&1", JAVA_PACKAGES, _maven, "exit_0_and_a_test_passed"),
}


def judge(one_liner: OneLiner, output: str, exit_code: int | None) -> dict:
    """The baseline's row from the one-liner's output and exit status."""
    passed, failed = one_liner.counts(output, exit_code or 0)
    runnable = {"a_test_passed": passed > 0,  # pytest exits 1 on any failure: a suite that runs counts (as before)
                "exit_0": exit_code == 0,
                "exit_0_and_a_test_passed": exit_code == 0 and passed > 0}[one_liner.runnable_when]
    return {"runnable": runnable, "passed": passed, "failed": failed, "exit_code": exit_code}


def run_naive(repo: str, scratch: Path, language: str, commit: str | None = None, timeout_s: float = 900) -> dict:
    """The language's one-liner on a fresh copy of `repo` (at `commit`), in a container of its base image."""
    one_liner = ONE_LINERS[language]
    started = time.monotonic()
    src = scratch / "naive"
    prepare_source(repo, commit, src)
    # the suite `autoinstall` starts each language from: trixie's (Python 3.13) for the compiled ones
    python = "3.11" if language == "python" else CompiledEcosystem.toolchains[0]
    image = ensure_base_image(python, packages=one_liner.packages)
    with DockerSandbox(DockerSandboxConfig(image=image)) as sandbox:
        sandbox.put(src, sandbox.workdir)
        result = sandbox.exec(one_liner.command, timeout=timeout_s)
    return {**judge(one_liner, result.output, result.exit_code), "command": one_liner.command,
            "timed_out": result.timed_out, "wall_s": round(time.monotonic() - started, 1)}
