"""A Python package whose build or tests run Node.js: a build backend or hook that builds a JavaScript front end
(hatch-jupyter-builder, jupyter-packaging), a setup.py that runs npm/yarn/pnpm/node, or test modules (and
conftest.py) that start `node` themselves. `node_need` says where the package.json is, with the line that says
Node is needed; the plan then borrows Node's toolchain (a companion, as for a crate the build compiles).

A package.json beside a Python package that neither the build nor the tests run (linters, docs, a front end
built separately) is no need: Node stays out of the image.
"""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import CompanionNeed
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.python.survey.rustbuild import TEST_FILE
from autoinstall.ecosystems.repofiles import RepoFiles, table
from envs.spec import Evidence

FRONTEND_BUILDERS = re.compile(r"^\s*(hatch[-_]jupyter[-_]builder|jupyter[-_]packaging)\b", re.IGNORECASE)
"""Build requirements whose build hook runs the package.json's install and build scripts."""
TOOLS = r"npm|npx|yarn|jlpm|pnpm|node"
RUNS_NODE = re.compile(rf"""(?<![\w.])[\[(]\s*["'](?:{TOOLS})["']\s*[,)\]]"""
                       rf"""|\b(?:system|run|call|check_call|check_output|Popen)\(\s*f?["'](?:{TOOLS})[\s"']"""
                       r"""|which\(\s*["'](?:node|npm)["']\s*\)""")
"""A command that starts Node: an argument list whose first item is the tool (`["npm", "run", "build"]`,
`("node", script)`), a shell string handed to a process call (`os.system("npm install")`), or a
`shutil.which("node")` (a skip unless Node is there says the tests want it). Only in files that start processes
(PROCESS): `["node", "edge"]` in a graph library's tests is data, and so is a call's argument (`Node("node")`)."""
PROCESS = re.compile(r"\b(?:subprocess|Popen|os\.system|os\.spawn|which)\b")
TEST_LIMIT = 400
"""Test modules read for a `node` call at most (the first found)."""


def _first_match(files: RepoFiles, rel: str) -> Evidence | None:
    text = files.text(rel) or ""
    if not PROCESS.search(text):
        return None
    for i, line in enumerate(text.splitlines(), 1):
        if RUNS_NODE.search(line) and not line.lstrip().startswith("#"):
            return Evidence(file=rel, line=i, text=line.strip()[:200])
    return None


def _build_evidence(files: RepoFiles) -> Evidence | None:
    pyproject = files.toml("pyproject.toml") if files.is_file("pyproject.toml") else None
    requires = table(pyproject, "build-system").get("requires")
    for requirement in requires if isinstance(requires, list) else []:
        if m := FRONTEND_BUILDERS.match(str(requirement)):
            return files.evidence("pyproject.toml", m.group(1))
    if files.is_file("setup.py"):
        return _first_match(files, "setup.py")
    return None


def _test_evidence(files: RepoFiles) -> Evidence | None:
    tests = (p for p in files.walk((".py",), limit=20000) if TEST_FILE.match(p.name) or p.name == "conftest.py")
    for count, path in enumerate(tests):
        if count >= TEST_LIMIT:
            break
        if found := _first_match(files, path.relative_to(files.root).as_posix()):
            return found
    return None


def _package_dir(files: RepoFiles) -> str:
    """The root when it has a package.json, else the one folder (two levels at most) that has one, else the root."""
    if files.is_file("package.json"):
        return "."
    found = sorted({p.parent.relative_to(files.root).as_posix()
                    for pattern in ("*/package.json", "*/*/package.json") for p in files.glob(pattern)
                    if "node_modules" not in p.parts and files.is_file(files.rel(p))})
    return found[0] if len(found) == 1 else "."


def node_need(files: RepoFiles) -> CompanionNeed | None:
    """Node's toolchain as the build or the tests need it, with the line that says so; None when neither runs it.
    `root` is where the package.json is (the tests' need installs its dependencies there)."""
    if (evidence := _build_evidence(files)) is not None:
        kind = "build"
    elif (evidence := _test_evidence(files)) is not None:
        kind = "tests"
    else:
        return None
    return CompanionNeed(ecosystem="node", root=_package_dir(files), evidence=evidence, needed_by=kind)


def read_node_build(files: RepoFiles, facts: RepoFacts) -> None:
    """Record Node as a companion need ("python+node"; with a crate as well, "python+node+rust")."""
    if (need := node_need(files)) is not None:
        facts.add_companion(need)


__all__ = ["node_need", "read_node_build"]
