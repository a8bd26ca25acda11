"""A Maven reactor's modules read from the poms (nothing is run): each module's folder, artifactId, the sibling
modules it depends on, and its tests by a static count; what depends on a module, transitively.

What leaving out a module whose build cannot complete here needs (modules.py): the modules built on it go
too, and their tests count against the deselection cap.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from autoinstall.ecosystems.java.survey import read_pom
from autoinstall.ecosystems.repofiles import RepoFiles

MAX_MODULES = 500
"""Modules read at most (nested aggregators included): a reactor larger than this is read in part."""
MAX_TEST_FILES = 20000
TEST_SUFFIXES = (".java", ".kt", ".groovy", ".scala")
_TEST_ANNOTATION = re.compile(r"@(?:org\.junit\.(?:jupiter\.api\.|jupiter\.params\.)?)?"
                              r"(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b(?!\w)")
_JUNIT3_METHOD = re.compile(r"\bpublic\s+void\s+test\w*\s*\(")


class Module(BaseModel):
    """One module of the reactor (the root pom not included)."""

    path: str
    """Its folder, relative to the root pom's (as `<modules>` names it, nested ones joined: `services/app`)."""
    artifact: str
    """Its artifactId: what Maven's `on project X` and `-pl :X` name."""
    depends_on: list[str] = Field(default_factory=list)
    """artifactIds of the reactor modules it depends on (dependencies and plugin dependencies, any scope)."""
    tests: int = 0
    """Its tests by a static count of src/test (annotated test methods; JUnit 3 `public void test*`)."""


def _text(element: ET.Element | None, path: str) -> str:
    found = element.find(path) if element is not None else None
    return (found.text or "").strip() if found is not None else ""


def _dependencies(pom: ET.Element) -> set[str]:
    """artifactIds of every dependency the pom declares (managed versions left out: they add none)."""
    managed = {id(d) for m in pom.iter("dependencyManagement") for d in m.iter("dependency")}
    return {_text(d, "artifactId") for d in pom.iter("dependency") if id(d) not in managed} - {""}


def count_tests(files: RepoFiles, folder: str) -> int:
    """Test methods under `folder`/src/test: annotated ones, or JUnit 3's `public void test*` in a file that has
    no annotation (parameterized cases count once: a lower bound)."""
    root = files.root / folder / "src" / "test"
    if files.kind(files.rel(root), noted=False) != "dir":
        return 0
    found = 0
    for path in RepoFiles(root).walk(TEST_SUFFIXES, limit=MAX_TEST_FILES):
        text = files.text(files.rel(path)) or ""
        found += len(_TEST_ANNOTATION.findall(text)) or len(_JUNIT3_METHOD.findall(text))
    return found


def read_reactor(repo: Path) -> list[Module]:
    """The modules under the root pom's `<modules>`, nested aggregators followed (breadth first); [] for a
    single-module project or a root pom that cannot be read."""
    files = RepoFiles(Path(repo))
    root = read_pom(files, "pom.xml")
    queue = [(PurePosixPath("."), root)] if root is not None else []
    found: list[Module] = []
    while queue and len(found) < MAX_MODULES:
        folder, pom = queue.pop(0)
        for entry in pom.iterfind("modules/module"):
            rel = (folder / (entry.text or "").strip()).as_posix()
            if not (entry.text or "").strip() or ".." in PurePosixPath(rel).parts:
                continue
            child = read_pom(files, f"{rel}/pom.xml") if files.is_file(f"{rel}/pom.xml") else None
            if child is None or not (artifact := _text(child, "artifactId")):
                continue
            found.append(Module(path=rel, artifact=artifact, depends_on=sorted(_dependencies(child)),
                                tests=count_tests(files, rel)))
            queue.append((PurePosixPath(rel), child))
    names = {m.artifact for m in found}
    for module in found:
        module.depends_on = [a for a in module.depends_on if a in names and a != module.artifact]
    return found


def built_on(modules: list[Module], artifact: str) -> list[Module]:
    """The module `artifact`, every module nested under its folder, and every module that depends on one of
    those, transitively: what cannot be built once `artifact` is not."""
    start = next((m for m in modules if m.artifact == artifact), None)
    if start is None:
        return []
    out = {m.artifact for m in modules if m.path == start.path or m.path.startswith(f"{start.path}/")}
    grew = True
    while grew:
        more = {m.artifact for m in modules if m.artifact not in out and set(m.depends_on) & out}
        out |= more
        grew = bool(more)
    return [m for m in modules if m.artifact in out]
