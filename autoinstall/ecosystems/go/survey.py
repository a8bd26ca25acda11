"""GoFacts: what a Go module's files say (go.mod, packages with tests, cgo, CI), each fact with file:line."""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

_DIRECTIVE = re.compile(r"^(module|go|toolchain)\s+(\S+)")
_REQUIRE = re.compile(r"^(?:require\s+)?([\w.~+-]+(?:/[\w.~+-]+)+)\s+(v[\w.+-]+)")
_CGO = re.compile(r'^import\s+"C"|^\s+"C"\s*$', re.M)
_INCLUDE = re.compile(r"^//\s*#include\s*<([\w./+-]+)>", re.M)
_CI_TEST = re.compile(r"\bgo test\b[^\n#]*")
MAX_GO_FILES = 20000


class Requirement(BaseModel):
    """One `require` of go.mod: a module and the version go.sum pins."""

    module: str
    version: str
    evidence: Evidence


class GoFacts(BaseModel):
    """What a Go module's files say about building and testing it."""

    root: str
    ecosystem: str = "go"
    notes: list[str] = Field(default_factory=list)
    module: str | None = None
    module_evidence: Evidence | None = None
    go_version: str | None = None
    """The `go` line: the least Go the module needs (newer than the image's: GOTOOLCHAIN)."""
    go_evidence: Evidence | None = None
    toolchain: str | None = None
    """The `toolchain` line (e.g. go1.22.3): the toolchain the module prefers."""
    toolchain_evidence: Evidence | None = None
    requires: list[Requirement] = Field(default_factory=list)
    has_go_sum: bool = False
    vendored: bool = False
    """vendor/modules.txt is present: builds use the vendor folder, nothing is downloaded."""
    test_packages: list[str] = Field(default_factory=list)
    """Folders (relative, "." for the root) holding _test.go files."""
    test_files: int = 0
    cgo: list[Evidence] = Field(default_factory=list)
    """Files that `import "C"`."""
    cgo_headers: list[Evidence] = Field(default_factory=list)
    """`#include <...>` lines of cgo preambles (text: the header)."""
    ci_tests: list[Evidence] = Field(default_factory=list)
    """`go test` commands in CI workflows and Makefiles."""
    nested_modules: list[str] = Field(default_factory=list)
    """Other go.mod files below the root: modules `./...` from the root does not test."""


def _go_mod(files: RepoFiles, facts: GoFacts) -> None:
    text = files.text("go.mod") or ""
    in_block = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("//", 1)[0].strip()
        evidence = Evidence(file="go.mod", line=number, text=raw.strip()[:200])
        if line.startswith("require ("):
            in_block = True
            continue
        if in_block and line == ")":
            in_block = False
            continue
        if (m := _DIRECTIVE.match(line)) and not in_block:
            word, value = m.groups()
            if word == "module":
                facts.module, facts.module_evidence = value.strip('"'), evidence
            elif word == "go":
                facts.go_version, facts.go_evidence = value, evidence
            else:
                facts.toolchain, facts.toolchain_evidence = value, evidence
        elif (in_block or line.startswith("require ")) and (m := _REQUIRE.match(line)):
            facts.requires.append(Requirement(module=m.group(1), version=m.group(2), evidence=evidence))
    if facts.module is None:
        facts.notes.append("go.mod: no module line")


def _sources(files: RepoFiles, root: Path, facts: GoFacts) -> None:
    packages: set[str] = set()
    for path in files.walk((".go", "go.mod"), limit=MAX_GO_FILES):
        rel = files.rel(path)
        if rel.startswith(("vendor/", "testdata/")) or "/testdata/" in rel or "/vendor/" in rel:
            continue
        if path.name == "go.mod":
            if rel != "go.mod":
                facts.nested_modules.append(str(Path(rel).parent))
            continue
        if path.name.endswith("_test.go"):
            facts.test_files += 1
            packages.add(str(path.parent.relative_to(root)))
            continue
        text = files.text(rel) or ""
        if _CGO.search(text):
            facts.cgo.append(files.evidence(rel, '"C"'))
            for header in _INCLUDE.findall(text):
                found = files.evidence(rel, header)
                facts.cgo_headers.append(found.model_copy(update={"text": header}))
    inner = tuple(f"{m}/" for m in facts.nested_modules)
    facts.test_packages = sorted(p for p in packages if not (p + "/").startswith(inner))
    if facts.nested_modules:
        facts.notes.append(f"{len(facts.nested_modules)} nested module(s) not tested from the root: "
                           + ", ".join(sorted(facts.nested_modules)[:5]))


def survey(repo: Path) -> GoFacts:
    """The Go facts of the checkout at `repo` (nothing is run)."""
    files = RepoFiles(repo)
    facts = GoFacts(root=str(repo))
    files.guarded("go.mod", lambda: _go_mod(files, facts))
    facts.has_go_sum = files.is_file("go.sum")
    facts.vendored = files.is_file("vendor/modules.txt")
    if files.is_file("go.work"):
        facts.notes.append("go.work present: the workspace's modules build together")
    files.guarded("sources", lambda: _sources(files, repo, facts))
    facts.ci_tests = files.lines_matching(_CI_TEST)
    if facts.requires and not facts.has_go_sum and not facts.vendored:
        facts.notes.append("go.mod requires modules but there is no go.sum: versions are not pinned")
    facts.notes += files.notes
    return facts
