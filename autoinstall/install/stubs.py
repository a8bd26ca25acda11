"""Stubs in the install loop: a stand-in package for a dependency no registry has, written where the installer
finds it (STUB_DIR), recorded, and the test files that import it deselected; written again into every new
sandbox and after every rollback."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import STUB_DIR, Ecosystem
from autoinstall.install.result import InstallResult
from envs.base import Sandbox
from envs.spec import Deselection, Repair, StubRecord


def add_stub(sandbox: Sandbox | None, ecosystem: Ecosystem, result: InstallResult, repo: Path, repair: Repair,
             output: str) -> None:
    """Apply a `stub_distribution` repair (the ecosystem raises AutoinstallError when it cannot stand in)."""
    assert sandbox is not None and repair.distribution and repair.import_name
    name, wheel = ecosystem.stub(repair.distribution, repair.import_name, output)
    result.stub_wheels[name] = wheel
    sandbox.write_file(f"{STUB_DIR}/{name}", wheel)
    result.stubs.append(StubRecord(distribution=repair.distribution, import_name=repair.import_name,
                                   reason=repair.reason))
    result.env.update(ecosystem.stub_env)
    for path in ecosystem.stub_users(repo, repair.import_name):
        result.deselected.append(Deselection(
            test=path, reason=f"imports {repair.import_name}, a stub for {repair.distribution}"))


def put_stub_wheels(sandbox: Sandbox | None, result: InstallResult) -> None:
    """Write the stubs made so far into `sandbox` (a new one, or one just rolled back)."""
    assert sandbox is not None
    for name, wheel in result.stub_wheels.items():
        sandbox.write_file(f"{STUB_DIR}/{name}", wheel)
