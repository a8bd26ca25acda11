"""Stage 4, install: run the plan's steps in a sandbox, diagnose and repair what fails, snapshot what works.

Files: `loop.py` (the Installer: run, snapshot, diagnose, repair, roll back, within budgets), `result.py`
(`InstallResult`, what it produced), `passing.py` (which repairs a suite over the threshold still takes: a system
package for failures that show one missing), `overtime.py` (a step that ran out of time: the timeout each step
runs with, and the one more run with more time granted to a step still working), `stubs.py` (stand-ins for
dependencies no registry has, written into every sandbox).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import Ecosystem
from autoinstall.install.loop import Installer, InstallResult, Reporter, StepsDone
from autoinstall.options import BuildOptions
from envs.base import Sandbox, SandboxFactory
from envs.spec import Plan


def install(plan: Plan, src: Path, model: object, factory: SandboxFactory, ecosystem: Ecosystem,
            options: BuildOptions, env: dict[str, str], log_dir: Path, report: Reporter,
            on_steps_done: StepsDone | None = None) -> InstallResult:
    """Phase 2 in sandboxes from `factory` (network on, package cache mounted); snapshots are kept.
    `on_steps_done`: called with what is installed before each round of checks and tests (loop.py)."""

    def make(toolchain: str) -> Sandbox:
        image = ecosystem.base_image(factory, toolchain)
        return factory.sandbox(image, network=True, env=env, cache=True)

    installer = Installer(plan, src, model, make, ecosystem=ecosystem, log_dir=log_dir, report=report,
                          budgets=options.budgets.model_copy(update={"threshold": options.threshold}),
                          available_pythons=toolchains.choices(ecosystem),  # host toolchains too: "3.13+java-25.0.3"
                          on_steps_done=on_steps_done)
    installer.result.env.update(env)
    try:
        return said_why(installer.run())
    except BaseException:
        factory.discard(installer.result.snapshots)  # interrupted (Ctrl-C, SIGTERM): nothing will use them
        raise


def said_why(result: InstallResult) -> InstallResult:
    """A model that gave up said why (a newer JDK that this host lacks, and where one comes from): the failure
    it ended on says it too."""
    last = result.repairs[-1] if result.repairs else None
    if result.failure is not None and last is not None and last.kind == "give_up" and last.reason:
        result.failure.message = f"{result.failure.message}: {last.reason}"
    return result


__all__ = ["InstallResult", "Installer", "StepsDone", "install", "said_why"]
