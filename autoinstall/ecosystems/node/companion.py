"""Node.js as a companion toolchain: what a leading ecosystem (a Python package whose build makes a JavaScript
front end, or whose tests start `node`) borrows. Node-led plans (proposal.py) are not affected.

The lead gets Debian's nodejs/npm in its base image. A build that needs Node (hatch-jupyter-builder,
jupyter-packaging, a setup.py running npm) installs and builds its front end itself, online, inside the lead's
project step: the toolchain is all it borrows. Tests that start `node` get the package.json's dependencies
installed right after the lead's project step, with the lock file's manager (yarn/pnpm from the npm registry),
so they run offline from node_modules in the image. After, not before: a node_modules folder at the root
would be one more top-level package to setuptools' flat-layout discovery ("Multiple top-level packages
discovered"), and the build has no use for it. Without a lock file the install resolves the newest versions,
and so does the replay Dockerfile (the lead's constraints pin only its own packages): the plan notes it.
"""
from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

from autoinstall.ecosystems.base import Companion, CompanionNeed
from autoinstall.ecosystems.node.proposal import NPM_FLAGS, install_command, manager_step
from autoinstall.ecosystems.node.survey import NodeFacts, survey
from autoinstall.ecosystems.repofiles import is_file
from envs.spec import Evidence, Step

PACKAGES = ("nodejs", "npm")
"""Debian's Node and npm (bookworm: Node 18, trixie: Node 20.19 and npm 9.2), whether Node leads or lends its
toolchain."""
CHAT_ENVIRONMENT = ("Debian's nodejs and npm are installed (no downloads from nodejs.org); JavaScript packages "
                    "come from the npm registry, into node_modules beside the package.json.")
NO_LOCK_INSTALL = f"npm install --package-lock {NPM_FLAGS}"
"""Without a lock file: resolve one in place. Not the Node-led NPM_INSTALL, which reads the recorded
constraints as a package-lock.json: a lead's constraints are its own (Python's), not npm's."""


def _rooted(evidence: Evidence, root: str) -> Evidence:
    """`evidence` from the package.json's folder, named from the checkout's root."""
    if root in ("", "."):
        return evidence
    return evidence.model_copy(update={"file": (PurePosixPath(root) / evidence.file).as_posix()})


def _install_steps(facts: NodeFacts, need: CompanionNeed, root: str) -> list[Step]:
    """yarn/pnpm when the lock file names it, then the dependencies into node_modules in `root`."""
    manifest = _rooted(facts.manifest, root)
    steps: list[Step] = []
    if (manager := manager_step(facts, manifest)) is not None:
        steps.append(manager.model_copy(update={"evidence": [_rooted(e, root) for e in manager.evidence]}))
    if not (facts.dependencies or facts.dev_dependencies):
        return steps
    command = install_command(facts) if facts.lock_file or facts.manager != "npm" else NO_LOCK_INSTALL
    prefix = "" if root in ("", ".") else f"cd {shlex.quote(root)} && "
    where = _rooted(facts.manager_evidence if facts.lock_file and facts.manager_evidence
                    else facts.dependency_evidence or facts.manifest, root)
    steps.append(Step(command=prefix + command, kind="other", evidence=[need.evidence, where],
                      why=f"the tests run Node: the package.json's dependencies into node_modules with "
                          f"{facts.manager} ({facts.lock_file or 'no lock file: resolved now'}), online, so the "
                          "tests find them offline"))
    return steps


def companion(need: CompanionNeed | None = None, repo: Path | None = None) -> Companion:
    """Debian's nodejs/npm, and for tests that need Node the package.json's install in `need.root` right after
    the lead's build; without a need, the toolchain alone (what the base image and chat models need)."""
    toolchain = Companion(ecosystem="node", packages=PACKAGES, chat_environment=CHAT_ENVIRONMENT)
    if need is None or repo is None:
        return toolchain
    why = f"{need.evidence.file}:{need.evidence.line or 1}: {need.evidence.text}"
    if need.needed_by == "build":
        note = (f"the build runs Node ({why}): Debian's nodejs/npm join the base image; the build installs and "
                "builds its front end itself")
        return toolchain.model_copy(update={"notes": [note]})
    root = PurePosixPath(need.root).as_posix()
    if not is_file(Path(repo), Path(repo) / root / "package.json"):  # nothing across a link out
        note = f"the tests run Node ({why}): Debian's nodejs/npm join the base image (no package.json to install)"
        return toolchain.model_copy(update={"notes": [note]})
    facts = survey(Path(repo) / root)
    after = _install_steps(facts, need, root)
    unpinned = "" if facts.lock_file or not after else "; no lock file, so a replay resolves the Node packages anew"
    note = f"the tests run Node ({why}): Debian's nodejs/npm join the base image{unpinned}"
    return toolchain.model_copy(update={"after": after, "notes": [note]})
