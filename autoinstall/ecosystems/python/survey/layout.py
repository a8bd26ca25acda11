"""Files on disk: requirements files, lock files, the project's own packages, imports, compiled sources."""

from __future__ import annotations

import re
from pathlib import Path

from autoinstall.ecosystems.python.imports import extract_imports, is_stdlib
from autoinstall.ecosystems.python.survey.facts import (
    ImportedModule,
    Named,
    RepoFacts,
    Requirement,
    RequirementsFile,
)
from autoinstall.ecosystems.python.survey.locks import read_locks
from autoinstall.ecosystems.python.survey.testing import TEST_DIR_NAMES
from autoinstall.ecosystems.repofiles import RepoFiles, table
from envs.spec import Evidence

REQUIREMENT_GLOBS = [
    "*requirements*.txt",
    "*requirements*.in",
    "requirements/**/*.txt",
    "requirements/**/*.in",
    "reqs/*.txt",
    "dependencies/**/*.txt",
    "dependencies/**/*.in",
    "tests/*requirements*.txt",
    "test/*requirements*.txt",
    "testing/*requirements*.txt",
    "ci/*requirements*.txt",
    "docs/*requirements*.txt",
    "doc/*requirements*.txt",
    ".github/*requirements*.txt",
]
LOCK_FILES = [
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile.lock",
    "Pipfile",
    "pylock.toml",
    "requirements.lock",
    "environment.yml",
    "environment.yaml",
    "conda.yml",
]
NOT_PACKAGES = TEST_DIR_NAMES | {
    "docs",
    "doc",
    "examples",
    "example",
    "benchmarks",
    "bench",
    "scripts",
    "tools",
    "build",
    "dist",
    "site",
    "ci",
    "requirements",
    "dependencies",
    "src",
    "lib",
}
NOT_MODULES = {
    "setup",
    "conftest",
    "noxfile",
    "fabfile",
    "tasks",
    "versioneer",
    "manage",
    "dodo",
    "conf",
    "bootstrap",
    "ez_setup",
    "distribute_setup",
    "runtests",
    "run_tests",
}
IMPORT_SKIP_DIRS = {"docs", "doc", "examples", "example", "benchmarks", "bench", "asv_bench"}
NAMESPACE_TOPS = {"google", "ruamel", "zope", "backports", "jaraco", "azure", "sphinxcontrib"}
COMPILED = (".c", ".cc", ".cpp", ".cxx", ".pyx")


def _parse_requirements(files: RepoFiles, rel: str) -> RequirementsFile:
    text = files.text(rel) or ""
    found = RequirementsFile(
        path=rel,
        test_like=bool(re.search(r"test|dev|ci", rel, re.IGNORECASE)),
        docs_like=bool(re.search(r"doc", rel, re.IGNORECASE)),
    )
    base = Path(rel).parent
    for number, raw in enumerate(re.sub(r"\\\n", " ", text).splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        option = re.match(r"^(-r|--requirement|-c|--constraint)[=\s]*(\S+)", line)
        if option:
            found.references.append((base / option.group(2)).as_posix())
        elif line and (not line.startswith("-") or line.startswith(("-e ", "--editable"))):
            spec = re.split(r"\s+--hash", line)[0]
            found.requirements.append(
                Requirement(spec=spec, evidence=Evidence(file=rel, line=number, text=raw.strip()[:200]))
            )
    return found


def read_requirements(files: RepoFiles, facts: RepoFacts) -> None:
    """Requirements files at the root and in the usual folders, and lock files."""
    seen: set[str] = set()
    for pattern in REQUIREMENT_GLOBS:
        for path in files.glob(pattern):
            rel = files.rel(path)
            if files.is_file(rel) and rel not in seen:
                seen.add(rel)
                facts.requirements_files.append(_parse_requirements(files, rel))
    facts.lock_files = [name for name in LOCK_FILES if files.is_file(name)]
    read_locks(files, facts)


def _package_hints(files: RepoFiles) -> set[str]:
    """Package names the build configuration lists explicitly (poetry, setuptools, flit)."""
    tool = table(files.toml("pyproject.toml"), "tool")
    hints = set()
    packages = table(tool, "poetry").get("packages")
    for entry in packages if isinstance(packages, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("include"), str):
            hints.add(entry["include"].split("/")[0])
    for key in ("packages", "py-modules"):
        value = table(tool, "setuptools").get(key)
        hints.update(v.split(".")[0] for v in value if isinstance(v, str)) if isinstance(
            value, list
        ) else None
    text = files.text("setup.py") or ""
    for key in ("packages", "py_modules"):
        for listed in re.findall(rf"\b{key}\s*=\s*\[([^\]]*)\]", text):
            hints.update(n.split(".")[0] for n in re.findall(r"['\"]([\w.]+)['\"]", listed))
    for mapping in re.findall(r"\bpackage_dir\s*=\s*\{([^}]*)\}", text):
        hints.update(k.split(".")[0] for k in re.findall(r"['\"]([\w.]+)['\"]\s*:", mapping))
    return hints


def read_packages(files: RepoFiles, facts: RepoFacts) -> set[str]:
    """The project's top-level import names; returns every module name local to the repository."""
    found: list[str] = []
    loose = len(files.glob("*.py"))
    for folder, strict in ((".", True), ("src", False), ("lib", True)):
        base = files.root / folder
        for entry in files.listdir(folder):
            name, rel = entry.name, files.rel(entry)
            if name not in NOT_PACKAGES and name.isidentifier() and files.is_dir(rel):
                if files.is_file(f"{rel}/__init__.py") or (not strict and files.glob(f"{rel}/*.py")):
                    found.append(name)
            elif (
                base.name != "lib"
                and entry.suffix == ".py"
                and entry.stem.isidentifier()
                and not entry.stem.startswith("__")
                and entry.stem not in NOT_MODULES
                and not entry.stem.startswith("test")
                and (base != files.root or loose <= 3)
            ):
                found.append(entry.stem)
    hints = [h for h in _package_hints(files) if h.isidentifier()]
    dirs = {n for n in found if files.is_dir(n) or files.is_dir(f"src/{n}")}
    if dirs:  # a real package exists: loose top-level scripts (app.py, clock.py) are not the project
        found = [n for n in found if n in dirs or n in hints or files.is_file(f"src/{n}.py")]
    found += [h for h in hints if h not in found]
    wanted = re.sub(r"[-.]", "_", (facts.project_name or "").lower())
    facts.packages = sorted(set(found), key=lambda n: (n.lower() != wanted, n))
    local = set(facts.packages)
    for path in files.walk((".py", ".pyx", ".so")):
        local.add(path.name.split(".")[0])
        local.update(part for part in files.rel(path).split("/")[:-1])
    return local


def _is_test_path(rel: str) -> bool:
    parts = rel.split("/")
    return (
        any(p in TEST_DIR_NAMES for p in parts[:-1])
        or parts[-1].startswith("test")
        or parts[-1] in ("conftest.py",)
        or parts[-1].endswith("_test.py")
    )


def _in_nested_project(files: RepoFiles, folder: Path, nested: dict[Path, bool]) -> bool:
    """True inside a sub-folder that is a project of its own (test fixtures, vendored projects)."""
    if folder not in nested:
        own = any(files.is_file(files.rel(folder / name)) for name in ("pyproject.toml", "setup.py"))
        nested[folder] = own or _in_nested_project(files, folder.parent, nested)
    return nested[folder]


def read_imports(files: RepoFiles, facts: RepoFacts, local: set[str]) -> None:
    """Third-party modules imported by the code and the tests (stdlib and local modules excluded)."""
    modules: dict[str, ImportedModule] = {}
    nested: dict[Path, bool] = {files.root: False}
    for path in files.walk((".py",), limit=3000):
        rel = files.rel(path)
        if set(rel.split("/")[:-1]) & IMPORT_SKIP_DIRS or rel in ("noxfile.py", "fabfile.py", "tasks.py"):
            continue
        if _in_nested_project(files, path.parent, nested):
            continue
        text = files.text(rel)
        if text is None:
            continue
        in_tests = _is_test_path(rel)
        for imp in extract_imports(text.encode()):
            if is_stdlib(imp.name) or imp.top in local:
                continue
            if rel == "setup.py":
                if imp.top not in facts.setup_imports and imp.top not in (
                    "setuptools",
                    "distutils",
                    "pkg_resources",
                ):
                    facts.setup_imports.append(imp.top)
                continue
            parts = imp.name.split(".")
            key = ".".join(parts[:2]) if imp.top in NAMESPACE_TOPS and len(parts) > 1 else imp.top
            evidence = Evidence(file=rel, line=imp.line, text=imp.text)
            known = modules.get(key)
            if known is None:
                known = modules[key] = ImportedModule(
                    name=key, top=imp.top, optional=imp.optional, evidence=evidence
                )
            elif known.optional and not imp.optional:
                known.optional, known.evidence = False, evidence
            known.in_tests |= in_tests
            known.in_code |= not in_tests
    facts.imports = sorted(modules.values(), key=lambda m: m.name.lower())


def read_compiled(files: RepoFiles, facts: RepoFacts) -> None:
    """Compiled sources that belong to the project (not its tests or docs)."""
    count = 0
    for path in files.walk(COMPILED, limit=500):
        rel = files.rel(path)
        if set(rel.split("/")[:-1]) & (TEST_DIR_NAMES | IMPORT_SKIP_DIRS):
            continue
        facts.c_extensions.append(Named(name=rel, evidence=Evidence(file=rel, line=1)))
        count += 1
        if count >= 5:
            break
    if files.is_file("Cargo.toml"):
        facts.c_extensions.append(
            Named(name="Cargo.toml", evidence=files.evidence("Cargo.toml", "[package]"))
        )
