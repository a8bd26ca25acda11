"""A repository whose root no ecosystem builds, while folders below it hold projects (a monorepo's packages,
a service in `backend/`, a language binding in `python/`): which one to build, and the evidence for it.

Candidates are the folders (three levels down at most) that an ecosystem detects, not counting folders inside
another candidate, vendored code, docs, examples or test data. The one the CI names most (`working-directory:`,
`cd DIR`, `-C DIR`, `--manifest-path DIR/...`) is built; without CI evidence, one that has tests, then the
shallowest, then the first by name. The rest are listed in the plan's notes: one environment per build.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from autoinstall.ecosystems.repofiles import SKIP_DIRS, RepoFiles
from envs.spec import Evidence

MAX_DEPTH = 3
MAX_FOLDERS = 5000
"""Folders looked at, at most (a checkout with more is cut, in order)."""
NOT_PROJECTS = {"docs", "doc", "examples", "example", "samples", "sample", "fixtures", "testdata", "test-data",
                "vendor", "third_party", "third-party", "thirdparty", "external", "extern", "deps", "benchmarks",
                "target", "out", "tmp"}
"""Folders whose projects are someone else's or data (vendored code, examples, test fixtures), never the build."""
CI_FILES = ("Makefile", "justfile", ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", ".circleci/config.yml",
            "tox.ini", "noxfile.py", "Taskfile.yml")
"""Besides .github/workflows: where a repository says how its parts are built and tested."""
_DIR_OPTION = r"(?:working-directory:|working_directory:|\bcd|\s-C|--manifest-path[= ]|--prefix[= ]|--cwd[= ]|" \
              r"--dir(?:ectory)?[= ]|\bpushd|\brootdir[= ]|-w)"
TEST_NAMES = re.compile(r"^(test_.*\.py|.*_test\.(?:py|go)|.*\.(?:test|spec)\.[cm]?[jt]sx?|.*Test\.java|"
                        r"tests?\.rs)$")


class Subproject(BaseModel):
    """One folder an ecosystem builds."""

    root: str
    """Relative to the checkout, with forward slashes."""
    ecosystem: str
    ci: list[Evidence] = Field(default_factory=list)
    """CI lines that work in this folder."""
    has_tests: bool = False


def _folders(repo: Path) -> list[tuple[Path, int]]:
    """Folders below the root (not the root), breadth first, with their depth."""
    found: list[tuple[Path, int]] = []
    level = [repo]
    for depth in range(1, MAX_DEPTH + 1):
        nxt = []
        for folder in level:
            try:
                entries = sorted(e for e in folder.iterdir() if not e.is_symlink() and e.is_dir())
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name in SKIP_DIRS or name.lower() in NOT_PROJECTS \
                        or name.endswith(".egg-info"):
                    continue
                found.append((entry, depth))
                nxt.append(entry)
                if len(found) >= MAX_FOLDERS:
                    return found
        level = nxt
    return found


def _has_tests(folder: Path, limit: int = 2000) -> bool:
    """A test file within the folder (a bounded walk)."""
    files = RepoFiles(folder)
    return any(TEST_NAMES.match(p.name) for p in files.walk(("",), limit=limit))


def find_subprojects(repo: Path, lead_of: Callable[[Path], str | None]) -> list[Subproject]:
    """The folders whose leading ecosystem `lead_of` names (None: no project), outermost only, with their CI
    evidence."""
    chosen: list[tuple[Path, str]] = []
    for folder, _depth in _folders(repo):
        if any(folder.is_relative_to(root) for root, _ in chosen):
            continue  # part of a project already found (a workspace member, a module of a build)
        if (name := lead_of(folder)) is not None:
            chosen.append((folder, name))
    files = RepoFiles(repo)
    projects = []
    for folder, name in chosen:
        rel = folder.relative_to(repo).as_posix()
        mention = re.compile(rf"{_DIR_OPTION}\s*[\"']?(?:\./)?{re.escape(rel)}(?:/[\w./-]*)?[\"']?(?=[\s&;|)]|$)")
        ci = files.lines_matching(mention, CI_FILES)
        projects.append(Subproject(root=rel, ecosystem=name, ci=ci, has_tests=_has_tests(folder)))
    return projects


def choose(projects: list[Subproject]) -> Subproject | None:
    """The project the CI names most; then one with tests; then the shallowest; then the first by name."""
    if not projects:
        return None
    return min(projects, key=lambda p: (-len(p.ci), not p.has_tests, p.root.count("/"), p.root))


def choice_notes(chosen: Subproject, projects: list[Subproject]) -> list[str]:
    """What the plan says about the choice: why this folder, and which others were left."""
    if chosen.ci:
        e = chosen.ci[0]
        why = f"the CI works there ({e.file}:{e.line}: {e.text})"
    elif chosen.has_tests:
        why = "no CI names a folder; it has tests"
    else:
        why = "no CI names a folder and none has tests; the shallowest, first by name"
    notes = [f"the root has no build files; {chosen.ecosystem} project {chosen.root}/ is built: {why}"]
    others = [p for p in projects if p is not chosen]
    if others:
        listed = ", ".join(f"{p.root}/ ({p.ecosystem})" for p in others[:10])
        more = f" and {len(others) - 10} more" if len(others) > 10 else ""
        notes.append(f"{len(others)} other project(s) not built (one environment per build): {listed}{more}")
    return notes


__all__ = ["Subproject", "choice_notes", "choose", "find_subprojects"]
