"""The Node.js ecosystem: package.json packages installed with Debian's Node and npm (yarn and pnpm from the
npm registry), tested through the package's test script with per-test results read from the runner's
output (envs/testrun/node_runner.py).

Files: `survey.py` (NodeFacts from package.json, the lock file, engines/.nvmrc, workspaces, CI),
`proposal.py` (facts -> plan), `diagnosis.py` + `repairs.py` (failure -> fix: yarn/pnpm, node-gyp's Debian
packages, a stale lock file, peer-dependency conflicts, a missing build, deselecting tests that need a
service or the internet), `pins.py` (package-lock.json as the pins, the npm cache warm-up), `companion.py` (the
toolchain a Python package whose build or tests run Node borrows).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.node.companion import PACKAGES, companion
from autoinstall.ecosystems.node.diagnosis import NETWORK_OFF, SERVICE_REFUSED, diagnose
from autoinstall.ecosystems.node.grading import RULES as GRADING
from autoinstall.ecosystems.node.pins import constraints, freeze, warm
from autoinstall.ecosystems.node.proposal import propose_plan
from autoinstall.ecosystems.node.repairs import repair
from autoinstall.ecosystems.node.survey import NodeFacts, survey
from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.rules import LockPinned
from envs.spec import Plan


class NodeEcosystem(LockPinned):
    """Node.js packages: dependencies into node_modules (network on), the test script offline, per test."""

    name = "node"
    manifests = ("package.json",)
    """Files that make a folder a project of its own (subprojects.py: a monorepo's packages)."""
    toolchains = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian Node is 20. A newer Node that
    engines or .nvmrc ask for cannot be had (nodejs.org is not reachable): noted, and the build goes on."""
    chat_environment = (
        "Commands run with bash in /workspace (a Node.js package) inside a Debian container with Debian's "
        "nodejs and npm (no downloads from nodejs.org); packages come from the npm registry. Install with "
        "the lock file's manager (`npm ci`, else `npm install`), build when the tests need it; tests run "
        "offline with the package's test script (test_runner node).")
    PACKAGES = PACKAGES
    REGISTRY = "the npm registry"
    SERVICE_REFUSED = SERVICE_REFUSED
    NETWORK_OFF = NETWORK_OFF
    pin_env = ()
    grading = GRADING
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""
    """The lock file pins every package: the replay Dockerfile's install step reads the constraints file."""

    companion = staticmethod(companion)
    """What a leading ecosystem whose build or tests run Node borrows (companion.py)."""

    def detect(self, repo: Path) -> bool:
        return is_file(repo, repo / "package.json")

    # The protocol methods that are this package's functions as they are.
    survey = staticmethod(survey)
    diagnose = staticmethod(diagnose)
    repair = staticmethod(repair)
    freeze = staticmethod(freeze)
    warm = staticmethod(warm)
    constraints = staticmethod(constraints)

    def propose(self, facts: NodeFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        # `toolchains` are the model's Python versions, not Node's: the image is always this ecosystem's.
        return propose_plan(facts, Path(repo), self.toolchains[0])


__all__ = ["NodeEcosystem", "NodeFacts"]
