"""JavaFacts: what a Maven project's files say (pom.xml, modules, the Java release, dependencies, the
Maven wrapper, test sources, CI), each fact with file:line."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

WRAPPER_PROPERTIES = ".mvn/wrapper/maven-wrapper.properties"
REACHABLE_HOSTS = ("repo.maven.apache.org", "repo1.maven.org")
"""Maven Central's hosts: the only place a wrapper's distributionUrl can be fetched from on these machines."""
_CI_TEST = re.compile(r"(?:\./mvnw|\bmvn)\b[^\n#]*")
_TEST_FILE = re.compile(r"(?:^|/)(?:Test\w*|\w*Tests?|\w*TestCase|IT\w*|\w*IT)\.java$")
_VERSION_PROPERTIES = ("maven.compiler.release", "maven.compiler.source", "maven.compiler.target",
                       "java.version", "jdk.version", "javaVersion", "java.release")
MAX_JAVA_FILES = 30000


class JavaFacts(BaseModel):
    """What a Maven project's files say about building and testing it."""

    root: str
    ecosystem: str = "java"
    notes: list[str] = Field(default_factory=list)
    artifact: str | None = None
    """groupId:artifactId of the root pom."""
    artifact_evidence: Evidence | None = None
    packaging: str = "jar"
    modules: list[str] = Field(default_factory=list)
    """`<modules>` of the root pom (non-empty: a multi-module reactor, built with `install`)."""
    modules_evidence: Evidence | None = None
    java_release: str | None = None
    """The Java version the build compiles for (release, else source/target), normalised: 1.8 -> 8."""
    java_evidence: Evidence | None = None
    toolchain_jdk: str | None = None
    """The JDK version maven-toolchains-plugin asks for (the plan's ~/.m2/toolchains.xml lists the image's)."""
    java_required: str | None = None
    """The least Java maven-enforcer-plugin's requireJavaVersion accepts, as a release number ("[25,)" -> 25)."""
    java_required_evidence: Evidence | None = None
    dependencies: list[Evidence] = Field(default_factory=list)
    """`<dependency>` entries of the root pom (text: groupId:artifactId)."""
    test_frameworks: list[str] = Field(default_factory=list)
    """junit4, junit5, testng: from the dependencies of every pom."""
    parent: str | None = None
    parent_evidence: Evidence | None = None
    repositories: list[Evidence] = Field(default_factory=list)
    """`<repository>` URLs other than Maven Central (text: the URL)."""
    wrapper: str | None = None
    """The wrapper's distributionUrl, when mvnw and its properties are present."""
    wrapper_evidence: Evidence | None = None
    wrapper_usable: bool = False
    """The distributionUrl is on Maven Central, which these machines reach: builds run ./mvnw."""
    test_files: int = 0
    """Java files under src/test (of the root and the modules) named like tests."""
    first_test: str | None = None
    """The simple name of one test class (the first the walk finds): the build runs it once."""
    ci_tests: list[Evidence] = Field(default_factory=list)
    """`mvn`/`./mvnw` commands in CI workflows and Makefiles."""


def _strip(root: ET.Element) -> ET.Element:
    """The tree without XML namespaces, so `find("properties")` works for every pom."""
    for element in root.iter():
        if isinstance(element.tag, str) and "}" in element.tag:
            element.tag = element.tag.split("}", 1)[1]
    return root


def read_pom(files: RepoFiles, rel: str) -> ET.Element | None:
    """The parsed pom at `rel`, or None with a note if it is malformed."""
    text = files.text(rel)
    if text is None:
        return None
    try:
        return _strip(ET.fromstring(text))
    except (ET.ParseError, ValueError, RecursionError) as e:
        files.note(f"{rel}: malformed XML, ignored ({str(e)[:200]})")
        return None


def _text(element: ET.Element | None, path: str) -> str | None:
    found = element.find(path) if element is not None else None
    return found.text.strip() if found is not None and found.text and found.text.strip() else None


def java_number(version: str) -> str:
    """`1.8` -> `8`, `17` -> `17`; anything else as written."""
    version = version.strip()
    return version.removeprefix("1.")


def least_java(spec: str) -> str | None:
    """The Java release a Maven version requirement's lower bound names: "25", "[25,)", "[17,22)" -> its lower
    bound ("(21,)" too: 21.0.1 is above 21); "1.8" -> 8; None for no lower bound ("(,21]") or anything else."""
    found = re.match(r"\s*[\[(]?\s*(?:1\.)?(\d+)", spec)
    return found[1] if found else None


def _resolve(value: str, properties: dict[str, str]) -> str:
    """`${java.version}` -> its value among the pom's properties (one level)."""
    m = re.fullmatch(r"\$\{([^}]+)\}", value.strip())
    return properties.get(m.group(1), value) if m else value


def _java(files: RepoFiles, pom: ET.Element, facts: JavaFacts) -> None:
    properties = {child.tag: (child.text or "").strip() for child in pom.find("properties") or []}
    candidates: list[tuple[str, str]] = [(name, properties[name]) for name in _VERSION_PROPERTIES
                                         if properties.get(name)]
    for plugin in pom.iter("plugin"):
        name = _text(plugin, "artifactId")
        if name == "maven-compiler-plugin":
            for key in ("release", "source", "target"):
                if value := _text(plugin, f"configuration/{key}"):
                    candidates.insert(0, (f"<{key}>", _resolve(value, properties)))
        elif name == "maven-enforcer-plugin" and (rule := _text(plugin, ".//requireJavaVersion/version")):
            if least := least_java(_resolve(rule, properties)):
                facts.java_required = least
                facts.java_required_evidence = files.evidence(
                    "pom.xml", "<version>", after=files.line_of("pom.xml", "<requireJavaVersion>"))
        elif name == "maven-toolchains-plugin" and (version := _text(plugin, ".//jdk/version")):
            facts.toolchain_jdk = _resolve(version, properties)
            facts.notes.append(f"maven-toolchains-plugin asks for JDK {facts.toolchain_jdk}: ~/.m2/toolchains.xml "
                               "lists the image's JDKs by feature release (Debian's 21, a newer one from the host)")
    for needle, value in candidates:
        if re.fullmatch(r"(?:1\.)?\d+", value):
            facts.java_release = java_number(value)
            facts.java_evidence = files.evidence("pom.xml", needle.strip("<>"))
            return


def _dependencies(files: RepoFiles, pom: ET.Element, rel: str, facts: JavaFacts, root: bool) -> None:
    for dependency in pom.iter("dependency"):
        group = _text(dependency, "groupId") or ""
        framework = {"junit": "junit4", "org.junit.jupiter": "junit5", "org.testng": "testng"}.get(group)
        if framework and framework not in facts.test_frameworks:
            facts.test_frameworks.append(framework)
    for dependency in pom.iterfind("dependencies/dependency") if root else []:
        group, artifact = _text(dependency, "groupId") or "", _text(dependency, "artifactId") or ""
        if artifact:
            found = files.evidence(rel, f"<artifactId>{artifact}</artifactId>")
            facts.dependencies.append(found.model_copy(update={"text": f"{group}:{artifact}"}))


def _root_pom(files: RepoFiles, pom: ET.Element, facts: JavaFacts) -> None:
    group = _text(pom, "groupId") or _text(pom, "parent/groupId") or ""
    artifact = _text(pom, "artifactId")
    if artifact:
        facts.artifact = f"{group}:{artifact}"
        facts.artifact_evidence = files.evidence("pom.xml", f"<artifactId>{artifact}</artifactId>")
    facts.packaging = _text(pom, "packaging") or "jar"
    facts.modules = [m.text.strip() for m in pom.iterfind("modules/module") if m.text and m.text.strip()]
    if facts.modules:
        facts.modules_evidence = files.evidence("pom.xml", "<modules>")
    if (parent := pom.find("parent")) is not None:
        facts.parent = ":".join(_text(parent, k) or "?" for k in ("groupId", "artifactId", "version"))
        facts.parent_evidence = files.evidence("pom.xml", "<parent>")
        if facts.parent.endswith("-SNAPSHOT") and _text(parent, "relativePath") is None:
            facts.notes.append(f"the parent {facts.parent} is a SNAPSHOT: only a snapshot repository has it, "
                               "and only Maven Central is reachable here")
    for url in pom.iterfind(".//repositories/repository/url"):
        host = urlparse((url.text or "").strip()).hostname or ""
        if host and host not in REACHABLE_HOSTS:
            found = files.evidence("pom.xml", (url.text or "").strip())
            facts.repositories.append(found.model_copy(update={"text": (url.text or "").strip()}))


def _wrapper(files: RepoFiles, facts: JavaFacts) -> None:
    if not files.is_file("mvnw"):
        return
    for number, line in enumerate((files.text(WRAPPER_PROPERTIES) or "").splitlines(), 1):
        key, _, value = line.partition("=")
        if key.strip() == "distributionUrl" and value.strip():
            facts.wrapper = value.strip()
            facts.wrapper_evidence = Evidence(file=WRAPPER_PROPERTIES, line=number, text=line.strip()[:200])
    if facts.wrapper is None:
        facts.notes.append(f"mvnw without a distributionUrl in {WRAPPER_PROPERTIES}: Apache's Maven from Maven "
                           "Central is used")
        return
    host = urlparse(facts.wrapper).hostname or ""
    facts.wrapper_usable = host in REACHABLE_HOSTS
    if not facts.wrapper_usable:
        facts.notes.append(f"the Maven wrapper downloads from {host}, which these machines cannot reach: "
                           "Apache's Maven from Maven Central is used instead")


def _modules_and_tests(files: RepoFiles, facts: JavaFacts) -> None:
    for module in facts.modules:
        rel = f"{module}/pom.xml"
        if (pom := read_pom(files, rel)) is not None:
            _dependencies(files, pom, rel, facts, root=False)
    for path in files.walk((".java",), limit=MAX_JAVA_FILES):
        rel = files.rel(path)
        if "src/test/" in f"/{rel}" and _TEST_FILE.search(rel) and "/target/" not in f"/{rel}":
            facts.test_files += 1
            facts.first_test = facts.first_test or path.stem


def survey(repo: Path) -> JavaFacts:
    """The Maven facts of the checkout at `repo` (nothing is run)."""
    files = RepoFiles(repo)
    facts = JavaFacts(root=str(repo))
    pom = read_pom(files, "pom.xml")
    if pom is None:
        facts.notes.append("pom.xml could not be read")
    else:
        files.guarded("pom.xml", lambda: _root_pom(files, pom, facts))
        files.guarded("pom.xml", lambda: _java(files, pom, facts))
        files.guarded("pom.xml", lambda: _dependencies(files, pom, "pom.xml", facts, root=True))
    files.guarded("the Maven wrapper", lambda: _wrapper(files, facts))
    files.guarded("modules and tests", lambda: _modules_and_tests(files, facts))
    facts.ci_tests = files.lines_matching(_CI_TEST)
    facts.notes += files.notes
    return facts
