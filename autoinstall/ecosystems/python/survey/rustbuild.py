"""A Python package whose build compiles Rust: maturin (`build-backend = "maturin"`, `[tool.maturin]`) or
setuptools-rust (in the build requirements, `RustExtension(...)` in setup.py, `[tool.setuptools-rust]`).

`rust_build` says where the crate is (the companion need the plan borrows Rust's toolchain for);
`takes_lead` says when Python leads a checkout whose root Cargo.toml would otherwise make it Rust-led: its
own build compiles the crate and it has Python tests (a crate with a pyproject for tooling only stays Rust's).
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from autoinstall.ecosystems.base import CompanionNeed
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.repofiles import RepoFiles, table

RUST_EXTENSION = re.compile(r"""RustExtension\s*\((?P<args>[^)]*)""", re.DOTALL)
PATH_ARG = re.compile(r"""path\s*=\s*["'](?P<path>[^"']+)["']""")
TEST_FILE = re.compile(r"^(test_\w*|\w+_test)\.py$")
PYTEST_CONFIG = ("pytest.ini", "conftest.py", "tox.ini", "noxfile.py")
TEST_LIMIT = 20000


def _crate_dir(files: RepoFiles, manifest: str | None) -> str:
    """The directory of `manifest` (relative to the root) if given; else the root when it has a Cargo.toml,
    else the one first-level folder that has one; else the root."""
    if manifest:
        folder = PurePosixPath(manifest).parent.as_posix()
        return "." if folder in ("", ".") else folder
    if files.is_file("Cargo.toml"):
        return "."
    found = sorted(p.parent.name for p in files.glob("*/Cargo.toml") if files.is_file(files.rel(p)))
    return found[0] if len(found) == 1 else "."


def _maturin(files: RepoFiles, pyproject: dict) -> CompanionNeed | None:
    system = table(pyproject, "build-system")
    tool = table(pyproject, "tool").get("maturin")
    if str(system.get("build-backend", "")).startswith("maturin"):
        evidence = files.evidence("pyproject.toml", "build-backend")
    elif isinstance(tool, dict):
        evidence = files.evidence("pyproject.toml", "[tool.maturin]")
    else:
        return None
    manifest = tool.get("manifest-path") if isinstance(tool, dict) else None
    return CompanionNeed(ecosystem="rust", root=_crate_dir(files, manifest if isinstance(manifest, str)
                                                           else None), evidence=evidence)


def _setuptools_rust(files: RepoFiles, pyproject: dict) -> CompanionNeed | None:
    setup = files.text("setup.py") or ""
    if m := RUST_EXTENSION.search(setup):
        path = PATH_ARG.search(m.group("args"))
        return CompanionNeed(ecosystem="rust", root=_crate_dir(files, path.group("path") if path else None),
                             evidence=files.evidence("setup.py", "RustExtension("))
    modules = table(pyproject, "tool", "setuptools-rust").get("ext-modules") or []
    if modules and isinstance(modules, list) and isinstance(modules[0], dict):
        path = modules[0].get("path")
        return CompanionNeed(ecosystem="rust",
                             root=_crate_dir(files, path if isinstance(path, str) else None),
                             evidence=files.evidence("pyproject.toml", "[tool.setuptools-rust"))
    requires = table(pyproject, "build-system").get("requires")
    if any(re.match(r"setuptools[-_]rust\b", str(r), re.IGNORECASE) for r in _list(requires)):
        return CompanionNeed(ecosystem="rust", root=_crate_dir(files, None),
                             evidence=files.evidence("pyproject.toml", "setuptools"))
    return None


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def rust_build(files: RepoFiles) -> CompanionNeed | None:
    """Where the crate the Python build compiles is, with the line that says so; None for a pure package."""
    pyproject = files.toml("pyproject.toml") if files.is_file("pyproject.toml") else None
    return _maturin(files, pyproject or {}) or _setuptools_rust(files, pyproject or {})


def has_python_tests(files: RepoFiles) -> bool:
    """Pytest or unittest evidence: a pytest configuration, or a test_*.py / *_test.py module."""
    if any(files.is_file(name) for name in PYTEST_CONFIG):
        return True
    pyproject = files.toml("pyproject.toml") if files.is_file("pyproject.toml") else None
    if isinstance(table(pyproject, "tool").get("pytest"), dict):
        return True
    return any(TEST_FILE.match(p.name) for p in files.walk((".py",), limit=TEST_LIMIT)
               if "target" not in p.relative_to(files.root).parts)


def takes_lead(repo: Path) -> bool:
    """True when the Python package's build compiles Rust and the checkout has Python tests."""
    files = RepoFiles(Path(repo))
    return rust_build(files) is not None and has_python_tests(files)


def read_rust_build(files: RepoFiles, facts: RepoFacts) -> None:
    """Record the crate the build compiles as a companion need; the facts' ecosystem then names Rust too
    ("python+rust"), so the plan's ecosystem gives the base image Rust's toolchain."""
    if (need := rust_build(files)) is not None:
        facts.add_companion(need)
