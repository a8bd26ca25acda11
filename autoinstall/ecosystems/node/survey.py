"""NodeFacts: what a Node.js package's files say (package.json, the lock file and its manager, the Node
version asked for, the test and build scripts, workspaces, CI), each fact with file:line."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

Manager = Literal["npm", "yarn", "pnpm"]
LOCKS: list[tuple[str, Manager]] = [("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"),
                                    ("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn")]
"""Lock files by the manager that reads them, in the order they are believed when several are present."""
RUNNERS = ("vitest", "jest", "mocha", "ava", "tap", "uvu", "tape", "jasmine", "c8", "nyc", "node")
"""Test runners (and the coverage wrappers in front of them) recognised as the first word of a script."""
_CI_TEST = re.compile(r"\b(?:npm (?:run )?test|npm t\b|yarn (?:run )?test|pnpm (?:run )?test)[^\n#]*")
_VERSION_FILES = (".nvmrc", ".node-version")
_CI_NODE = re.compile(r"\bnode(?:js|-version|_version)?:\s*\[?\s*['\"]?v?\d[^#\n]*")
"""A CI workflow's Node versions: `node-version: 20.x`, `node: [18, 20, 22]`, `nodejs: [10, 12, 14]`."""


class NodeFacts(BaseModel):
    """What a Node.js package's files say about installing and testing it."""

    root: str
    ecosystem: str = "node"
    notes: list[str] = Field(default_factory=list)
    name: str | None = None
    manifest: Evidence = Field(default_factory=lambda: Evidence(file="package.json", line=1, text="package.json"))
    manager: Manager = "npm"
    manager_version: str | None = None
    """The `packageManager` field's version (e.g. pnpm@9.1.0 -> 9.1.0)."""
    manager_evidence: Evidence | None = None
    lock_file: str | None = None
    node_version: str | None = None
    """What engines.node, .nvmrc or .node-version ask for, as written."""
    node_evidence: Evidence | None = None
    test_script: str | None = None
    test_evidence: Evidence | None = None
    runner: str | None = None
    """The test runner the test script calls (RUNNERS), else the one devDependencies name."""
    runner_version: str | None = None
    """Its range in devDependencies (e.g. ^16.0.0)."""
    scripts: dict[str, str] = Field(default_factory=dict)
    build_script: str | None = None
    """`build` when the tests need built output (TypeScript, or main/exports into a folder the checkout lacks)
    and `prepare` does not build already (npm runs prepare after installing)."""
    build_evidence: Evidence | None = None
    typescript: bool = False
    dependencies: int = 0
    dev_dependencies: int = 0
    dependency_evidence: Evidence | None = None
    workspaces: list[str] = Field(default_factory=list)
    native: list[Evidence] = Field(default_factory=list)
    """binding.gyp files and node-gyp dependencies: native builds (python3, make, g++ are in the image)."""
    ci_tests: list[Evidence] = Field(default_factory=list)
    ci_node: list[Evidence] = Field(default_factory=list)
    """The Node versions CI workflows test on (text: the line, e.g. `nodejs: [10, 12, 14]`)."""


def _line(files: RepoFiles, key: str) -> Evidence:
    return files.evidence("package.json", f'"{key}"')


def _manager(files: RepoFiles, data: dict, facts: NodeFacts) -> None:
    for lock, manager in LOCKS:
        if files.is_file(lock):
            facts.lock_file, facts.manager = lock, manager
            facts.manager_evidence = Evidence(file=lock, line=1, text=lock)
            break
    if facts.lock_file == "yarn.lock" and "__metadata:" in (files.text("yarn.lock") or "")[:2000]:
        facts.manager_version = "4"  # a Yarn 2+ (berry) lock; packageManager below names the exact version
    field = data.get("packageManager")
    if isinstance(field, str) and "@" in field:
        name, _, version = field.partition("@")
        if name in ("npm", "yarn", "pnpm"):
            if facts.lock_file and name != facts.manager:
                facts.notes.append(f"packageManager says {name} but the lock file is {facts.lock_file}: "
                                   "the lock file's manager is used")
            else:
                facts.manager = name  # type: ignore[assignment]
                facts.manager_version = version.split("+", 1)[0]
                facts.manager_evidence = _line(files, "packageManager")


def _node_version(files: RepoFiles, data: dict, facts: NodeFacts) -> None:
    for name in _VERSION_FILES:
        text = (files.text(name) or "").strip()
        if text:
            facts.node_version = text.splitlines()[0].strip()
            facts.node_evidence = Evidence(file=name, line=1, text=facts.node_version[:200])
            return
    engines = data.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        facts.node_version = engines["node"]
        facts.node_evidence = files.evidence("package.json", '"node"', files.line_of("package.json", '"engines"'))


def _runner(script: str, dev: dict) -> str | None:
    for word in re.split(r"[\s;&|()]+", script):
        word = word.rsplit("/", 1)[-1]
        if word in RUNNERS and word not in ("c8", "nyc", "node"):
            return word
    if re.search(r"\bnode\b[^;&|]*--test\b", script):
        return "node:test"
    return next((r for r in RUNNERS[:8] if r in dev), None)


def _build(files: RepoFiles, data: dict, facts: NodeFacts) -> None:
    scripts = facts.scripts
    facts.typescript = files.is_file("tsconfig.json")
    entry = [data.get("main"), data.get("module"), data.get("types")]
    exports = data.get("exports")
    entry += [exports] if isinstance(exports, str) else re.findall(r'"(\./[^"]+)"', json.dumps(exports or {}))
    missing = [e for e in entry if isinstance(e, str) and files.kind(e, noted=False) == "missing"
               and files.kind(f"{e}.js", noted=False) == "missing"]
    if "build" not in scripts or not (facts.typescript or missing):
        return
    if "build" in scripts.get("prepare", ""):
        facts.notes.append("prepare runs the build: npm runs it after installing the dependencies")
        return
    facts.build_script = "build"
    facts.build_evidence = files.evidence("package.json", '"build"', files.line_of("package.json", '"scripts"'))


def survey(repo: Path) -> NodeFacts:
    """The Node.js facts of the checkout at `repo` (nothing is run)."""
    files = RepoFiles(repo)
    facts = NodeFacts(root=str(repo))
    data = files.json("package.json")
    if data is not None and not isinstance(data, dict):
        files.note(f"package.json: a JSON {type(data).__name__}, not an object: ignored")
    data = data if isinstance(data, dict) else {}
    files.guarded("package.json", lambda: _read(files, data, facts))
    facts.ci_tests = files.lines_matching(_CI_TEST)
    facts.ci_node = files.lines_matching(_CI_NODE, ())
    facts.notes += files.notes
    return facts


def _read(files: RepoFiles, data: dict, facts: NodeFacts) -> None:
    facts.name = data.get("name") if isinstance(data.get("name"), str) else None
    scripts = files.table("package.json", data, "scripts")
    facts.scripts = {str(k): str(v) for k, v in scripts.items()}
    deps = files.table("package.json", data, "dependencies")
    dev = files.table("package.json", data, "devDependencies")
    files.table("package.json", data, "engines")  # a note if it is not an object
    facts.dependencies, facts.dev_dependencies = len(deps), len(dev)
    if deps or dev:
        facts.dependency_evidence = _line(files, "dependencies" if deps else "devDependencies")
    _manager(files, data, facts)
    _node_version(files, data, facts)
    test = facts.scripts.get("test", "")
    if test and "no test specified" not in test:
        facts.test_script = test
        facts.test_evidence = files.evidence("package.json", '"test"', files.line_of("package.json", '"scripts"'))
        facts.runner = _runner(test, dev)
        version = dev.get(facts.runner) if facts.runner else None
        facts.runner_version = version if isinstance(version, str) else None
    _build(files, data, facts)
    workspaces = data.get("workspaces")
    workspaces = workspaces.get("packages") if isinstance(workspaces, dict) else workspaces
    if isinstance(workspaces, list) and workspaces:
        facts.workspaces = [str(w) for w in workspaces]
        facts.notes.append(f"workspaces ({', '.join(facts.workspaces[:5])}): installed together; the root's "
                           "test script decides which packages are tested")
    if files.is_file("binding.gyp"):
        facts.native.append(Evidence(file="binding.gyp", line=1, text="binding.gyp"))
    if "node-gyp" in deps or "node-gyp" in dev:
        facts.native.append(_line(files, "node-gyp"))
    for hook in ("pretest", "posttest"):
        if hook in facts.scripts:
            facts.notes.append(f"{hook} ({facts.scripts[hook][:60]}) is not run: the tests run with "
                               "--ignore-scripts (lint and coverage hooks are not the tests)")
