"""Java facts -> plan: Java's trust in the machine's CA bundle and the shared cache as a Maven repository,
one build that also runs a test class (so every plugin and Surefire provider lands in ~/.m2 in the image),
an offline compile check, and `mvn -o test` read per test from Surefire's reports."""
from __future__ import annotations

import shlex
from pathlib import Path

from autoinstall.ecosystems.java.apache_maven import INSTALL as APACHE_MAVEN
from autoinstall.ecosystems.java.apache_maven import VERSION as APACHE_MAVEN_VERSION
from autoinstall.ecosystems.java.survey import JavaFacts
from autoinstall.ecosystems.java.toolchain import IMAGE_JDK, TOOLCHAINS_XML, planned
from envs.spec import Check, Evidence, Plan, Step

CHAT_ENVIRONMENT = (
    "Commands run with bash in /workspace (a Maven project) inside a Debian container with Debian's "
    f"OpenJDK 21 and Maven (install Apache's Maven {APACHE_MAVEN_VERSION} first with `{APACHE_MAVEN}`: Debian's "
    "cannot load some plugins), or a newer JDK copied from the host as JAVA_HOME (switch_python to one of "
    "available_pythons that names it, e.g. 3.13+java-25.0.3); artifacts come from Maven Central. Resolve while "
    "online by a build that runs "
    "one test class (`mvn -B test -Dtest=SomeTest`, so Surefire's provider is fetched too; "
    "dependency:go-offline misses it); tests run offline with `mvn -B -o test` (test_runner maven).")
"""For chat models: Debian's JDK 21, Apache's Maven, Maven Central, and `mvn -o test` offline."""
CACHE_REPOSITORY = "file:///cache/maven"
"""The shared package cache, read through as a Maven repository (layout of Maven Central) before Central:
what a build downloads still lands in ~/.m2/repository, inside the image."""
_REPO = (f"<repository><id>autoinstall-cache</id><url>{CACHE_REPOSITORY}</url>"
         "<snapshots><enabled>false</enabled></snapshots></repository>")
SETTINGS = ("<settings><profiles><profile><id>autoinstall-cache</id>"
            f"<repositories>{_REPO}</repositories>"
            f"<pluginRepositories>{_REPO.replace('repository>', 'pluginRepository>')}</pluginRepositories>"
            "</profile></profiles><activeProfiles><activeProfile>autoinstall-cache</activeProfile>"
            "</activeProfiles></settings>")
TRUST = ("openssl pkcs12 -export -nokeys -jdktrust anyExtendedKeyUsage -certpbe NONE -nomac -passout pass: "
         "-in /etc/ssl/certs/ca-certificates.crt -out /etc/ssl/certs/java/cacerts")
"""Java's truststore from the system CA bundle (which holds the machine's own CA): Debian's cacerts keeps only
the first certificate of a bundle file, so Maven would refuse the registry's TLS certificate."""
MAVEN_JVM = "-XX:TieredStopAtLevel=1"
"""Maven's own JVM (and the javac it runs in-process) JIT-compiles with C1 only: a build of a few hundred
sources takes half the time (jackson-core's test-compile 14.4 s -> 7.5 s on 2 cores). Surefire forks the tests
into JVMs of their own, which this leaves alone; `~/.mavenrc` is read by Debian's mvn and by Maven wrappers."""
MAVEN_RESOLVER = ("-Daether.dependencyCollector.impl=bf -Daether.dependencyCollector.bf.skipper=false "
                  "-Daether.connector.basic.threads=16")
"""Maven's resolver collects a dependency graph breadth first, fetching a level's poms side by side, and downloads
16 artifacts at a time (Maven 3.9's defaults: depth first, one pom after another, 5 downloads): every request to
Central waits on a round trip, here through a TLS-intercepting proxy, so a cold resolution takes half the time
(javapoet's test-compile on an empty ~/.m2: 23 s -> 12 s; gson's 64 s -> 52.5 s, where compiling is most of it).
Without the skipper it fetches every pom the depth-first collector does (the skipper would leave out those of
versions that lose, which a Maven run without these settings needs offline): the same local repository, file for
file. A Maven before 3.9 ignores the properties."""
MAVENRC = f'MAVEN_OPTS="{MAVEN_JVM} {MAVEN_RESOLVER} ${{MAVEN_OPTS:-}}"'
SETUP = (f"{TRUST} && mkdir -p ~/.m2 && printf '%s\\n' {shlex.quote(SETTINGS)} > ~/.m2/settings.xml && "
         f"printf '%s\\n' {shlex.quote(MAVENRC)} > ~/.mavenrc && {TOOLCHAINS_XML}")
FLAGS = "-B -ntp"
"""Batch mode, no transfer progress: logs a diagnosis can read."""
GATES_OFF = ("-Dcheckstyle.skip -Denforcer.skip -Drat.skip -Dspotless.check.skip -Danimal.sniffer.skip "
             "-Djacoco.skip")
"""Quality gates that are not tests (style, licence headers, the Maven/JDK versions CI pins, API signatures,
coverage agents): each can stop a build on this JDK or slow every test, and none decides whether a test
passes. Unknown properties are ignored, so projects without these plugins are unaffected."""
OFFLINE_TEST = f"-o test -Dmaven.test.failure.ignore=true {GATES_OFF}"
"""Every test runs (a failing one does not stop the reactor); the reports say which failed."""


def maven(facts: JavaFacts) -> str:
    """The project's Maven wrapper when Maven Central serves its distribution, else `mvn`: Apache's Maven,
    which the plan installs first (`apache_maven_steps`)."""
    return "sh ./mvnw" if facts.wrapper_usable else "mvn"


def apache_maven_steps(facts: JavaFacts, where: Evidence) -> list[Step]:
    """Apache's Maven from Maven Central, first on PATH, unless the project's wrapper brings its own: the Maven
    projects build with upstream. Debian's packaged Maven wires plugins with the Guice and Sisu libraries Debian
    packages, and a plugin wired for Apache's distribution fails to load there (`Unable to load the mojo`: the
    whole reactor stops at that module, google/gson's 124 s lost before the repair, apache_maven.py, swapped)."""
    if facts.wrapper_usable:
        return []
    return [Step(command=APACHE_MAVEN, kind="other", evidence=[where],
                 why=f"Apache's Maven {APACHE_MAVEN_VERSION} from Maven Central, checked against Central's SHA-512, "
                     "as upstream builds run it: Debian's packaged Maven cannot load some plugins")]


def build_command(facts: JavaFacts) -> str:
    """Compile everything and run one test class (network on): Surefire resolves its test-framework provider
    only when tests run, and the offline runs need it in the local repository. A reactor is installed, so
    every module finds its siblings in ~/.m2 as well."""
    phase = "install" if facts.modules else "test"
    if not facts.first_test:
        return f"{maven(facts)} {FLAGS} {'install -DskipTests' if facts.modules else 'test-compile'} {GATES_OFF}"
    return (f"{maven(facts)} {FLAGS} {phase} -Dtest={facts.first_test} -Dsurefire.failIfNoSpecifiedTests=false "
            f"-DfailIfNoTests=false -Dmaven.test.failure.ignore=true {GATES_OFF}")


def test_command(facts: JavaFacts) -> str:
    """`mvn -o test` over the project (every module, to the end: -fae)."""
    return f"{maven(facts)} {FLAGS} {OFFLINE_TEST}" + (" -fae" if facts.modules else "")


def _notes(facts: JavaFacts, toolchain: list[str]) -> list[str]:
    notes = [*facts.notes, *toolchain]
    if facts.java_release and facts.java_release.isdigit() and int(facts.java_release) < 8:
        notes.append(f"Java {facts.java_release} is asked for; JDK {IMAGE_JDK} compiles 8 and later only")
    if facts.modules:
        notes.append(f"multi-module reactor ({len(facts.modules)} modules: {', '.join(facts.modules[:6])}): "
                     "installed into ~/.m2, tested with -fae")
    if facts.wrapper:
        notes.append(f"Maven wrapper: {'used' if facts.wrapper_usable else 'not used'} ({facts.wrapper})")
    notes += [f"repository outside Maven Central, unreachable here: {e.text} ({e.file}:{e.line})"
              for e in facts.repositories[:3]]
    notes += [f"CI runs: {e.text} ({e.file}:{e.line})" for e in facts.ci_tests[:3]]
    return notes


def propose_plan(facts: JavaFacts, repo: Path, python: str) -> Plan:
    """Two or three steps (Apache's Maven without a usable wrapper) and the checks (an offline compile of main
    and test sources, the tests), on the JDK the poms need (`python` plus a host JDK: toolchain.py)."""
    python, toolchain = planned(facts, python)
    where = facts.artifact_evidence or Evidence(file="pom.xml", line=1, text="pom.xml")
    steps = [Step(command=SETUP, kind="other", evidence=[where],
                  why="Java must trust the machine's CA to reach Maven Central; the shared cache is read as a "
                      "repository first, while downloads land in ~/.m2 inside the image; toolchains.xml lists "
                      "the image's JDKs"),
             *apache_maven_steps(facts, where),
             Step(command=build_command(facts), kind="project", evidence=[facts.java_evidence or where],
                  why="resolve every dependency and plugin into ~/.m2 and compile main and test sources; "
                      "one test class resolves Surefire's provider for the offline runs")]
    compile_offline = f"{maven(facts)} {FLAGS} -o -q test-compile {GATES_OFF}"
    checks = [Check(name="collect", kind="collect", command=compile_offline,
                    why="main and test sources compile offline from what ~/.m2 holds: the classes Surefire "
                        "scans (Maven cannot list tests without running them; the count comes from a run)")]
    test_command = test_command_for(facts)
    if test_command:
        checks.append(Check(name="tests", kind="tests", command=test_command,
                            why=f"{facts.test_files} test classes under src/test, Surefire reports per test"))
    return Plan(ecosystem="java", python=python, steps=steps, checks=checks, test_command=test_command,
                test_runner="maven" if test_command else "none", notes=_notes(facts, toolchain))


def test_command_for(facts: JavaFacts) -> str | None:
    """The offline test command, or None when no test sources exist."""
    return test_command(facts) if facts.test_files else None
