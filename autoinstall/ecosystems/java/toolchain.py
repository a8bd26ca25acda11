"""Which JDK a Maven build uses: Debian trixie's 21, a newer JDK of this host copied into the image as JAVA_HOME
(envs/host_jdks.py finds them), else Debian's openjdk-N-jdk-headless (trixie's own 25, testing's and unstable's
newer ones) as JAVA_HOME (autoinstall/ecosystems/toolchains.py holds the token and the order), chosen from the
root pom (maven.compiler.release/source/target and the like, the compiler plugin's <release>, the enforcer's
requireJavaVersion) before the build, or from javac's or the JVM's own error (`release version 25 not
supported`, `invalid target release: 25`, class files too new) during it. When neither has one new enough, the
build stops with the release it needs and where a JDK can come from."""
from __future__ import annotations

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java.diagnosis import OWN_JAVAC
from autoinstall.ecosystems.java.survey import JavaFacts, least_java
from envs import host_jdks
from envs.debian_toolchains import SUITES_ENV, DebianToolchain
from envs.host_toolchains import HostToolchain, host_toolchains
from envs.spec import Repair

IMAGE_JDK = "21"
"""Debian trixie's default JDK (openjdk-21; a point release added openjdk-25, which the Debian source serves):
what a release the project asks for has to fit."""
SOURCES = ("a vendor's build such as Eclipse Temurin's, Azul Zulu's or Amazon Corretto's (a .deb or a tarball), "
           "or a newer Debian suite's openjdk-N-jdk-headless (name the suite in AUTOINSTALL_DEBIAN_SUITES)")
"""Where a newer JDK can come from, for the message that asks for one."""

TOOLCHAINS_XML = (
    "{ echo '<toolchains>'; for h in /usr/lib/jvm/* \"${JAVA_HOME:-}\"; do "
    "v=$(sed -n 's/^JAVA_VERSION=\"\\([0-9]*\\).*/\\1/p' \"$h/release\" 2>/dev/null); "
    "if [ -n \"$v\" ] && [ ! -L \"$h\" ] && [ -x \"$h/bin/javac\" ]; then "
    "echo \"<toolchain><type>jdk</type><provides><version>$v</version></provides>"
    "<configuration><jdkHome>$h</jdkHome></configuration></toolchain>\"; fi; done; "
    "echo '</toolchains>'; } > ~/.m2/toolchains.xml")
"""Every JDK of the image (Debian's, and the host's copied in as JAVA_HOME) in ~/.m2/toolchains.xml, each
providing its feature release ("21", "25"): what maven-toolchains-plugin's `<jdk><version>` looks up."""


def jdk_of(token: str) -> str:
    """The Java a toolchain token gives: the host JDK it names, else Debian's."""
    return toolchains.current(token, "java") or IMAGE_JDK


def wanted(facts: JavaFacts) -> tuple[str, str] | None:
    """(the least Java release the root pom asks for, where it says so): the release it compiles for, the
    enforcer's requireJavaVersion or the JDK maven-toolchains-plugin looks up, whichever is highest."""
    asks = []
    if facts.java_release and facts.java_release.isdigit():
        where = facts.java_evidence
        asks.append((facts.java_release, f"{where.file}:{where.line}" if where and where.line else "pom.xml"))
    if facts.java_required:
        where = facts.java_required_evidence
        asks.append((facts.java_required, f"{where.file}:{where.line}" if where and where.line else "pom.xml"))
    if facts.toolchain_jdk and (least := least_java(facts.toolchain_jdk)):
        asks.append((least, "maven-toolchains-plugin in pom.xml"))
    return max(asks, key=lambda a: int(a[0])) if asks else None


def _pick(need: str, now: str, python: str) -> tuple[HostToolchain | DebianToolchain | None, list[str]]:
    """The oldest host JDK release that meets `need` (newer than `now`), else Debian's; None when none does: an
    older javac cannot compile for a newer release, so nothing less will do."""
    pick, refused = toolchains.source_for("java", need, now, python)
    return (None if pick is None or toolchains.newer(need, pick.version) else pick), refused


def _how(pick: HostToolchain | DebianToolchain) -> str:
    if isinstance(pick, DebianToolchain):
        return f"{toolchains.origin(pick)} as JAVA_HOME"
    return f"the host's JDK {pick.version} from {pick.prefix}, copied into the image as JAVA_HOME"


def unavailable(need: str, who: str) -> str:
    """Why a build that needs Java `need` cannot have it here, and what to do about it."""
    have = ", ".join(t.version for t in host_toolchains("java")) or "none"
    return (f"{who} needs Java {need}, newer than the image's JDK {IMAGE_JDK} (Debian trixie's), and neither this "
            f"host (its JDKs: {have}; looked for in {host_jdks.WHERE}) nor Debian's suites ({SUITES_ENV}) have a JDK "
            f"{need} or newer: install one on the host, {SOURCES}, and build again")


def planned(facts: JavaFacts, python: str) -> tuple[str, list[str]]:
    """The toolchain token a plan starts on, and the note that says why."""
    asked = wanted(facts)
    if asked is None or not toolchains.newer(asked[0], IMAGE_JDK):
        return python, []
    pick, refused = _pick(asked[0], IMAGE_JDK, python)
    if pick is None:
        return python, [*refused, f"{unavailable(asked[0], asked[1])}; the build is expected to fail"]
    if isinstance(pick, DebianToolchain):
        return toolchains.with_host(python, pick), [
            *refused, f"{asked[1]} asks for Java {asked[0]}, newer than the image's JDK {IMAGE_JDK}: {_how(pick)}"]
    return toolchains.with_host(python, pick), [
        f"{asked[1]} asks for Java {asked[0]}, newer than the image's JDK {IMAGE_JDK}: the host's JDK "
        f"{pick.version} ({pick.prefix}) is copied into the image as JAVA_HOME"]


def toolchain_repair(ctx: RepairContext) -> Repair | None:
    """javac or the JVM needs a newer Java than the one in use (`jdk 25`): start over on the oldest host JDK
    that meets it, once; when none does, give up saying which release is needed and where one comes from.
    None for a need the JDK in use meets (another rule's) or a compiler plugin's own older javac."""
    subject = ctx.diagnosis.subject
    need = subject.removeprefix("jdk ").strip()
    if not subject.startswith("jdk ") or subject.endswith(OWN_JAVAC) or not need.isdigit():
        return None
    now = jdk_of(ctx.python)
    if not toolchains.newer(need, now):
        return None
    pick, _ = _pick(need, now, ctx.python)
    if pick is None:
        return Repair(kind="give_up", reason=f"{ctx.diagnosis.describe()}: {unavailable(need, 'the build')}")
    return toolchains.switch(ctx.python, ctx.tried, pick, f"{ctx.diagnosis.describe()}; the image has JDK {now} -> "
                             f"{_how(pick)}")
