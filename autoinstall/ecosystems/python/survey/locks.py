"""Lock files: the exact versions the project's own CI installs (uv, poetry, pdm, Pipfile, pip-tools).

A lock is out of sync ("stale") when a dependency the manifest declares is missing from it: the plan then
resolves afresh and says why. Nothing here runs the project's tools; uv.lock is exported by `uv export` in
the sandbox (it knows uv's forks and markers), the others are read here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from autoinstall.ecosystems.python.pypi_names import normalize, requirement_name
from autoinstall.ecosystems.python.survey.facts import LockFile, LockKind, RepoFacts
from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

PIP_TOOLS = re.compile(r"(?:^|/)(?P<env>[\w.-]+?)-cp(?P<major>\d)(?P<minor>\d+)-linux-x86_64\.txt$")
"""pip-tools locks compiled per environment and interpreter (`dependencies/tox-py311-cp311-linux-x86_64.txt`)."""
TEST_ENV = re.compile(r"(?:^|[-_])(?:py\d+|tests?|testing)$")
PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?==")


def read_locks(files: RepoFiles, facts: RepoFacts) -> None:
    """Fill `facts.locks` from the lock files at the root and pip-tools locks among the requirements."""
    declared = _declared(facts)
    readers = (("uv.lock", "uv", _uv_pins), ("poetry.lock", "poetry", _package_pins),
               ("pdm.lock", "pdm", _package_pins))
    for path, kind, read in readers:
        data = files.toml(path) if files.is_file(path) else None
        if isinstance(data, dict):
            packages = [p for p in data.get("package") or [] if isinstance(p, dict) and p.get("name")]
            locked = {normalize(str(p["name"])) for p in packages}
            facts.locks.append(_lock(path, kind, read(packages, facts), declared, locked))  # type: ignore[arg-type]
    pipfile = _pipfile(files, facts)
    if pipfile is not None:
        facts.locks.append(pipfile)
    facts.locks += _pip_tools(facts)


def _lock(path: str, kind: LockKind, pins: list[str], declared: dict[str, str], locked: set[str]) -> LockFile:
    missing = sorted(name for name in declared if name not in locked)
    stale = (f"{', '.join(missing[:5])} declared in {declared[missing[0]]} but not in {path}" if missing else "")
    return LockFile(path=path, kind=kind, pins=pins, stale=stale, evidence=Evidence(file=path))


def _declared(facts: RepoFacts) -> dict[str, str]:
    """Normalized names of what the manifest declares (dependencies, extras, groups) -> the file saying so."""
    reqs = list(facts.dependencies)
    for dep_set in facts.extras + facts.dependency_groups + facts.tool_groups:
        reqs += dep_set.requirements
    own = normalize(facts.project_name or "-")
    names = {}
    for req in reqs:
        name = requirement_name(req.spec) if not req.spec.startswith("-") else None
        if name and name not in ("python", own):
            names.setdefault(name, req.evidence.file)
    return names


def _uv_pins(packages: list[dict[str, Any]], facts: RepoFacts) -> list[str]:
    return []  # `uv export` writes them in the sandbox


def _package_pins(packages: list[dict[str, Any]], facts: RepoFacts) -> list[str]:
    """`name==version` for registry packages of poetry.lock/pdm.lock; a name locked at several versions
    keeps them only when each says, by a marker, where it applies."""
    own = normalize(facts.project_name or "-")
    by_name: dict[str, list[dict[str, Any]]] = {}
    for package in packages:
        source = package.get("source")
        if isinstance(source, dict) and source.get("type") not in (None, "legacy"):
            continue  # git, directory, url: not a registry version
        if isinstance(package.get("version"), str) and normalize(str(package["name"])) != own:
            by_name.setdefault(normalize(str(package["name"])), []).append(package)
    pins = []
    for name, versions in sorted(by_name.items()):
        if len(versions) == 1:
            pins.append(f"{name}=={versions[0]['version']}")
        elif all(isinstance(v.get("marker") or v.get("markers"), str) for v in versions):
            pins += [f"{name}=={v['version']}; {v.get('marker') or v.get('markers')}" for v in versions]
    return pins


def _pipfile(files: RepoFiles, facts: RepoFacts) -> LockFile | None:
    text = files.text("Pipfile.lock") if files.is_file("Pipfile.lock") else None
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError as e:
        files.notes.append(f"Pipfile.lock: malformed JSON, ignored ({e})")
        return None
    pins, locked = [], set()
    for section in ("default", "develop"):
        for name, entry in (data.get(section) or {}).items():
            locked.add(normalize(name))
            version = entry.get("version") if isinstance(entry, dict) else None
            if isinstance(version, str) and version.startswith("=="):
                marker = entry.get("markers")
                pins.append(f"{normalize(name)}{version}" + (f"; {marker}" if isinstance(marker, str) else ""))
    pipfile = files.toml("Pipfile") or {}
    declared = {normalize(n): "Pipfile" for section in ("packages", "dev-packages")
                for n in (pipfile.get(section) or {}) if isinstance(n, str)}
    return _lock("Pipfile.lock", "pipenv", sorted(set(pins)), declared, locked)


def _pip_tools(facts: RepoFacts) -> list[LockFile]:
    """One pip-tools lock per interpreter, from a test environment's files, when every line is pinned."""
    found: dict[str, LockFile] = {}
    for req_file in sorted(facts.requirements_files, key=lambda f: f.path):
        match = PIP_TOOLS.search(req_file.path)
        if not match or not TEST_ENV.search(match.group("env")) or not req_file.requirements:
            continue
        if not all(PINNED.match(r.spec) for r in req_file.requirements):
            continue
        python = f"{match.group('major')}.{match.group('minor')}"
        found.setdefault(python, LockFile(path=req_file.path, kind="pip-tools", python=python,
                                          evidence=Evidence(file=req_file.path)))
    return list(found.values())
