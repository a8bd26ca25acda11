"""The Java ecosystem: Maven projects (single or multi-module) built with Debian trixie's JDK 21 and Maven
(or the project's Maven wrapper when Maven Central serves it), the local repository kept in the image, tested
offline with `mvn -o test` read per test from Surefire's XML reports.

Files: `survey.py` (JavaFacts from pom.xml, the modules, the Java release, the wrapper, test sources, CI),
`proposal.py` (facts -> plan), `diagnosis.py` + `repairs.py` (failure -> fix: sources older than Java 8, an
artifact first needed offline, deselecting tests that need a service or the internet), `staticanalysis.py`
(error-prone, which cannot run on this JDK, taken out of the poms' compiler configuration by a recorded step),
`pins.py` (the local repository's artifacts as the pins, the shared cache warm-up).
"""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.java.diagnosis import NETWORK_OFF, SERVICE_REFUSED, diagnose
from autoinstall.ecosystems.java.grading import RULES as GRADING
from autoinstall.ecosystems.java.pins import constraints, freeze, warm
from autoinstall.ecosystems.java.proposal import propose_plan
from autoinstall.ecosystems.java.repairs import repair
from autoinstall.ecosystems.java.survey import JavaFacts, survey
from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.rules import LockPinned
from envs.spec import Plan

PACKAGES = ("maven", "openjdk-21-jdk-headless")
"""Debian trixie's Maven (3.9) and JDK 21, added to the base image (trixie has no other JDK)."""


class JavaEcosystem(LockPinned):
    """Maven projects: dependencies into ~/.m2 in the image, `mvn -o test`, Surefire's reports per test."""

    name = "java"
    manifests = ("pom.xml",)
    """Files that make a folder a project of its own (subprojects.py: a monorepo's packages)."""
    toolchains = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian JDK is 21."""
    chat_environment = (
        "Commands run with bash in /workspace (a Maven project) inside a Debian container with Debian's "
        "OpenJDK 21 and Maven; artifacts come from Maven Central. Resolve while online by a build that runs "
        "one test class (`mvn -B test -Dtest=SomeTest`, so Surefire's provider is fetched too; "
        "dependency:go-offline misses it); tests run offline with `mvn -B -o test` (test_runner maven).")
    PACKAGES = PACKAGES
    REGISTRY = "Maven Central"
    SERVICE_REFUSED = SERVICE_REFUSED
    NETWORK_OFF = NETWORK_OFF
    pin_env = ()
    grading = GRADING
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""
    """The poms pin every version: the replay Dockerfile needs no constraints file."""

    def detect(self, repo: Path) -> bool:
        return is_file(repo, repo / "pom.xml")

    # The protocol methods that are this package's functions as they are.
    survey = staticmethod(survey)
    diagnose = staticmethod(diagnose)
    repair = staticmethod(repair)
    freeze = staticmethod(freeze)
    warm = staticmethod(warm)
    constraints = staticmethod(constraints)

    def propose(self, facts: JavaFacts, repo: Path, toolchains: tuple[str, ...]) -> Plan:  # type: ignore[override]
        # `toolchains` are the model's Python versions, not Java's: the image is always this ecosystem's.
        return propose_plan(facts, Path(repo), self.toolchains[0])


__all__ = ["JavaEcosystem", "JavaFacts"]
