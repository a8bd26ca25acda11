"""What pyproject.toml, setup.py and setup.cfg say: build backend, python range, dependencies, versioning."""

from __future__ import annotations

from typing import Any

from autoinstall.ecosystems.python.survey.facts import (
    BuildBackend,
    BuildInfo,
    DepSet,
    EntryPoint,
    Named,
    RepoFacts,
    Requirement,
    Versioning,
    is_test_name,
)
from autoinstall.ecosystems.python.survey.poetry import read_poetry
from autoinstall.ecosystems.python.survey.setuppy import SETUP_CFG, SETUP_PY, read_setup_cfg, read_setup_py
from autoinstall.ecosystems.repofiles import RepoFiles

PYPROJECT = "pyproject.toml"
BACKENDS: list[tuple[str, BuildBackend]] = [
    ("setuptools", "setuptools"),
    ("poetry", "poetry"),
    ("hatchling", "hatchling"),
    ("flit", "flit"),
    ("pdm", "pdm"),
    ("maturin", "maturin"),
    ("scikit_build", "scikit-build"),
    ("mesonpy", "meson"),
]
COMPILED_BACKENDS = ("maturin", "scikit-build", "meson")
TOOLS_READ = ("poetry", "pytest", "setuptools", "setuptools_scm", "hatch", "pdm", "tox", "maturin",
              "setuptools-rust", "uv", "poe")
"""The [tool.*] tables the survey reads (one that is not a table is ignored, with a note)."""


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _reqs(files: RepoFiles, specs: list[str], after: int) -> list[Requirement]:
    return [Requirement(spec=s, evidence=files.evidence(PYPROJECT, s, after)) for s in specs]


def _build(files: RepoFiles, data: dict[str, Any]) -> BuildInfo:
    system = files.table(PYPROJECT, data, "build-system")
    path = str(system.get("build-backend") or "")
    requires = _strs(system.get("requires"))
    backend: BuildBackend | None = next((b for key, b in BACKENDS if key in path), "other" if path else None)
    evidence = files.evidence(PYPROJECT, "build-backend") if path else None
    if backend is None and files.is_file(SETUP_PY):
        backend, evidence = "setup.py", files.evidence(SETUP_PY, "setup(")
    elif backend is None and (requires or "project" in data or files.is_file(SETUP_CFG)):
        backend, evidence = (
            "setuptools",
            files.evidence(PYPROJECT, "[build-system]" if requires else "[project]"),
        )
        files.notes.append(f"{PYPROJECT} names no build-backend: pip and uv fall back to setuptools")
    installable = backend is not None and not (backend == "poetry" and "build-system" not in data)
    return BuildInfo(
        backend=backend, backend_path=path, requires=requires, installable=installable, evidence=evidence
    )


def _versioning(files: RepoFiles, data: dict[str, Any], requires: list[str]) -> Versioning | None:
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    hatch_version = (tool.get("hatch") or {}).get("version") or {}
    pdm_version = (tool.get("pdm") or {}).get("version") or {}
    if isinstance(hatch_version, dict) and hatch_version.get("source") == "vcs":
        fallback = "fallback-version" in ((tool.get("hatch") or {}).get("version") or {})
        return Versioning(
            scheme="hatch-vcs",
            needs_vcs=not fallback,
            evidence=files.evidence(PYPROJECT, "vcs", files.line_of(PYPROJECT, "[tool.hatch.version")),
        )
    if isinstance(pdm_version, dict) and pdm_version.get("source") == "scm":
        return Versioning(scheme="pdm-scm", needs_vcs=True, evidence=files.evidence(PYPROJECT, "scm"))
    if isinstance(tool.get("poetry-dynamic-versioning"), dict):
        return Versioning(
            scheme="poetry-dynamic-versioning",
            needs_vcs=True,
            evidence=files.evidence(PYPROJECT, "[tool.poetry-dynamic-versioning"),
        )
    scm = tool.get("setuptools_scm")
    scm_required = any(r.lower().replace("_", "-").startswith("setuptools-scm") for r in requires)
    if isinstance(scm, dict) or scm_required:
        return Versioning(
            scheme="setuptools-scm",
            needs_vcs=not (isinstance(scm, dict) and "fallback_version" in scm),
            evidence=files.evidence(PYPROJECT, "setuptools_scm" if isinstance(scm, dict) else "scm"),
        )
    if isinstance(tool.get("versioneer"), dict):
        return Versioning(scheme="versioneer", evidence=files.evidence(PYPROJECT, "[tool.versioneer]"))
    if "version" in _strs((data.get("project") or {}).get("dynamic")):
        return Versioning(scheme="dynamic", evidence=files.evidence(PYPROJECT, "dynamic"))
    return None


def _pep621(files: RepoFiles, facts: RepoFacts, project: dict[str, Any]) -> None:
    after = files.line_of(PYPROJECT, "[project]")
    facts.project_name = project.get("name") if isinstance(project.get("name"), str) else None
    if isinstance(project.get("requires-python"), str):
        facts.requires_python = project["requires-python"]
        facts.requires_python_evidence = files.evidence(PYPROJECT, "requires-python")
    facts.dependencies += _reqs(files, _strs(project.get("dependencies")), after)
    extras_line = files.line_of(PYPROJECT, "[project.optional-dependencies]") or after
    for name, specs in (project.get("optional-dependencies") or {}).items():
        facts.extras.append(
            DepSet(
                name=name,
                requirements=_reqs(files, _strs(specs), extras_line),
                test_like=is_test_name(name),
                evidence=files.evidence(PYPROJECT, name, extras_line),
            )
        )
    scripts_line = files.line_of(PYPROJECT, "[project.scripts]") or after
    for name, target in (project.get("scripts") or {}).items():
        facts.entry_points.append(
            EntryPoint(
                name=name, target=str(target), evidence=files.evidence(PYPROJECT, f"{name}", scripts_line)
            )
        )


def _dependency_groups(files: RepoFiles, groups: Any) -> list[DepSet]:
    after = files.line_of(PYPROJECT, "[dependency-groups]")
    found = []
    for name, items in groups.items() if isinstance(groups, dict) else []:
        includes = (
            [i["include-group"] for i in items if isinstance(i, dict) and "include-group" in i]
            if isinstance(items, list)
            else []
        )
        found.append(
            DepSet(
                name=name,
                requirements=_reqs(files, _strs(items), after),
                includes=includes,
                test_like=is_test_name(name),
                evidence=files.evidence(PYPROJECT, name, after),
            )
        )
    return found


def _pdm_groups(files: RepoFiles, tool: dict[str, Any]) -> list[DepSet]:
    pdm_dev = (tool.get("pdm") or {}).get("dev-dependencies") or {}
    after = files.line_of(PYPROJECT, "[tool.pdm.dev-dependencies]")
    return (
        [
            DepSet(
                name=name,
                requirements=_reqs(files, [s for s in _strs(specs) if not s.startswith("-")], after),
                test_like=is_test_name(name),
                evidence=files.evidence(PYPROJECT, name, after),
            )
            for name, specs in pdm_dev.items()
        ]
        if isinstance(pdm_dev, dict)
        else []
    )


def read_project(files: RepoFiles, facts: RepoFacts) -> None:
    """Fill the build, python range, dependencies, extras, groups, scripts and versioning facts."""
    data = files.toml(PYPROJECT) or {}
    facts.build = _build(files, data)
    tool = files.table(PYPROJECT, data, "tool")
    for section in ("project", "dependency-groups"):  # a note for each that is not a table, as for the tools
        files.table(PYPROJECT, data, section)
    for name in TOOLS_READ:
        files.table(PYPROJECT, tool, name)
    if not isinstance(files.table(PYPROJECT, data, "build-system").get("requires", []), list):
        files.note(f"{PYPROJECT}: build-system.requires is not a list: ignored")
    if isinstance(data.get("project"), dict):
        _pep621(files, facts, data["project"])
    facts.dependency_groups = _dependency_groups(files, data.get("dependency-groups"))
    if isinstance(tool.get("poetry"), dict):
        poetry = read_poetry(files, tool["poetry"])
        facts.project_name = facts.project_name or poetry["name"]
        if not facts.dependencies:
            facts.dependencies = poetry["dependencies"]
        if not facts.extras:
            facts.extras = poetry["extras"]
        facts.tool_groups += poetry["groups"]
        facts.entry_points += [] if facts.entry_points else poetry["scripts"]
        if poetry["python"] and not facts.requires_python:
            facts.requires_python = poetry["python"]
            facts.requires_python_evidence = files.evidence(PYPROJECT, "python =")
        if tool["poetry"].get("package-mode") is False:
            facts.build.installable = False
            files.notes.append(
                f"{PYPROJECT}: poetry package-mode = false: the project itself is not installed"
            )
    facts.tool_groups += _pdm_groups(files, tool)
    read_setup_cfg(files, facts)
    read_setup_py(files, facts)
    facts.versioning = _versioning(files, data, facts.build.requires) or facts.versioning
    if facts.versioning is None and files.is_file("versioneer.py"):
        facts.versioning = Versioning(
            scheme="versioneer", evidence=files.evidence("versioneer.py", "versioneer")
        )
    setup_text = files.text(SETUP_PY) or ""
    if facts.versioning is None and "use_scm_version" in setup_text:
        facts.versioning = Versioning(
            scheme="setuptools-scm", needs_vcs=True, evidence=files.evidence(SETUP_PY, "use_scm_version")
        )
    if facts.build.backend in COMPILED_BACKENDS:
        facts.c_extensions.append(
            Named(
                name=facts.build.backend,
                evidence=facts.build.evidence or files.evidence(PYPROJECT, "build-backend"),
            )
        )
