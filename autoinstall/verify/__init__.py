"""Stage 5, verify: a fresh container from the image, network off, the checks once and the tests twice (the
install phase's last run of the same tree counts as one of the two when the image's first agrees with it).

Files: `checks.py` (run a check, judge runs against the threshold, flaky tests, the suite's size),
`verdict.py` (status and failure class of a spec), `leftout.py` (tests that hang and files that cannot be
collected, which the install loop deselects on that evidence and the cap counts), `widen.py` (a test command
that runs a side suite gives way to the default collection, which the install loop then repairs).
"""
from __future__ import annotations

from collections.abc import Callable

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.options import BuildOptions
from autoinstall.verify.checks import flaky_tests, judge, run_check, verify
from autoinstall.verify.verdict import judge_spec
from envs.base import SandboxFactory
from envs.spec import EnvSpec, TestRun, Verification


def verify_image(spec: EnvSpec, options: BuildOptions, factory: SandboxFactory,
                 ecosystem: Ecosystem, prior: TestRun | None = None,
                 on_frozen: Callable[[str], None] | None = None) -> tuple[str, Verification]:
    """In a fresh sandbox from `spec.image` with the network off: what is installed (handed to `on_frozen` at
    once, before the checks and runs), then the suite (`prior`: the install phase's last run, which may stand
    for the first run: `verify`)."""
    with factory.sandbox(spec.image or "", network=False) as sandbox:
        frozen = ecosystem.freeze(sandbox)
        if on_frozen is not None:
            on_frozen(frozen)
        verification = verify(sandbox, spec.plan, spec.deselected, runs=options.verify_runs,
                              threshold=options.threshold, timeout_s=options.budgets.test_timeout_s,
                              max_deselected=options.max_deselected,
                              per_test_timeout_s=options.budgets.per_test_timeout_s, prior=prior)
    return frozen, verification


__all__ = ["flaky_tests", "judge", "judge_spec", "run_check", "verify", "verify_image"]
