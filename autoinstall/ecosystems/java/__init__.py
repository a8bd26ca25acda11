"""The Java ecosystem: Maven projects (single or multi-module) built with Debian trixie's JDK 21 (or the host's
newer JDK the poms or javac ask for) and Maven (or the project's Maven wrapper when Maven Central serves it),
the local repository kept in the image, tested offline with `mvn -o test` read per test from Surefire's XML
reports.

Files: `survey.py` (JavaFacts from pom.xml, the modules, the Java release, the wrapper, test sources, CI),
`proposal.py` (facts -> plan), `diagnosis.py` + `repairs.py` (failure -> fix: sources older than Java 8, an
artifact first needed offline, deselecting tests that need a service or the internet), `staticanalysis.py`
(error-prone, which cannot run on this JDK, taken out of the poms' compiler configuration by a recorded step),
`pins.py` (the local repository's artifacts as the pins, the shared cache warm-up), `toolchain.py` (which
JDK: Debian's, or the host's newer one copied into the image), `apache_maven.py` (Apache's Maven from Maven
Central for a plugin Debian's cannot load), `modules.py` + `reactor.py` (a module that cannot be built here left
out with what is built on it), `fonts.py` (tests that draw text: Debian's fontconfig and fonts, or a headless JVM).
"""
from __future__ import annotations

from autoinstall.ecosystems.compiled import CompiledEcosystem, Language
from autoinstall.ecosystems.java import diagnosis, pins
from autoinstall.ecosystems.java.grading import RULES as GRADING
from autoinstall.ecosystems.java.proposal import CHAT_ENVIRONMENT, propose_plan
from autoinstall.ecosystems.java.repairs import repair
from autoinstall.ecosystems.java.survey import JavaFacts, survey
from autoinstall.ecosystems.java.toolchain import IMAGE_JDK

PACKAGES = ("maven", "openjdk-21-jdk-headless")
"""Debian trixie's Maven (3.9) and JDK 21, added to the base image (trixie has no other JDK)."""


class JavaEcosystem(CompiledEcosystem):
    """Maven projects: dependencies into ~/.m2 in the image, `mvn -o test`, Surefire's reports per test. The
    base image is trixie's, whose Debian JDK is 21. The poms pin every version: the replay Dockerfile needs no
    constraints file."""

    language = Language(name="java", manifests=("pom.xml",), survey=survey, propose=propose_plan,
                        chat_environment=CHAT_ENVIRONMENT, packages=PACKAGES, diagnosis=diagnosis,
                        repair=repair, registry="Maven Central", pins=pins, grading=GRADING)
    host_toolchain = ("java", IMAGE_JDK)
    """The host's newer JDKs can replace Debian's 21 (toolchain.py; a chat model's switch_python names one)."""


__all__ = ["JavaEcosystem", "JavaFacts"]
