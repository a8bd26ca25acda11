"""The Node.js ecosystem: package.json packages installed with Debian's Node and npm (yarn and pnpm from the
npm registry), tested through the package's test script with per-test results read from the runner's
output (envs/testrun/node_runner.py).

Files: `survey.py` (NodeFacts from package.json, the lock file, engines/.nvmrc, workspaces, CI),
`proposal.py` (facts -> plan), `testchain.py` (a test script's style and type checks left out of the test
command, its build steps and runner kept), `diagnosis.py` + `repairs.py` (failure -> fix: yarn/pnpm, node-gyp's Debian
packages, a stale lock file, peer-dependency conflicts, a missing build, deselecting tests that need a
service or the internet), `pins.py` (package-lock.json as the pins, the npm cache warm-up), `companion.py` (the
toolchain a Python package whose build or tests run Node borrows).
"""
from __future__ import annotations

from autoinstall.ecosystems.compiled import CompiledEcosystem, Language
from autoinstall.ecosystems.node import diagnosis, pins
from autoinstall.ecosystems.node.companion import PACKAGES, companion
from autoinstall.ecosystems.node.grading import RULES as GRADING
from autoinstall.ecosystems.node.proposal import CHAT_ENVIRONMENT, propose_plan
from autoinstall.ecosystems.node.repairs import repair
from autoinstall.ecosystems.node.survey import NodeFacts, survey


class NodeEcosystem(CompiledEcosystem):
    """Node.js packages: dependencies into node_modules (network on), the test script offline, per test.
    The base image is trixie's, whose Debian Node is 20; a newer Node that engines or .nvmrc ask for comes
    from the npm registry's node binary packages (nodejs.org is not reachable). The lock file pins every
    package: the replay Dockerfile's install step reads the constraints file."""

    language = Language(name="node", manifests=("package.json",), survey=survey, propose=propose_plan,
                        chat_environment=CHAT_ENVIRONMENT, packages=PACKAGES, diagnosis=diagnosis,
                        repair=repair, registry="the npm registry", pins=pins, grading=GRADING)
    companion = staticmethod(companion)
    """What a leading ecosystem whose build or tests run Node borrows (companion.py)."""


__all__ = ["NodeEcosystem", "NodeFacts"]
