"""The embedded model's phase-2 rules for Maven: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

import re
import shlex

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java.apache_maven import apache_maven
from autoinstall.ecosystems.java.diagnosis import ANALYSIS, NETWORK_OFF, OWN_JAVAC, SERVICE_REFUSED
from autoinstall.ecosystems.java.fonts import fonts_repair
from autoinstall.ecosystems.java.modules import MAVEN_ARGS, leave_out_module
from autoinstall.ecosystems.java.pins import CENTRAL
from autoinstall.ecosystems.java.staticanalysis import disable_step
from autoinstall.ecosystems.java.toolchain import jdk_of, toolchain_repair
from autoinstall.ecosystems.rules import deselecting, first_repair
from envs.spec import Evidence, Repair, Step

OLDEST_RELEASE = "8"
"""The oldest source/target JDK 21's javac compiles for."""
RAISE_SOURCE = (f"-Dmaven.compiler.source={OLDEST_RELEASE} -Dmaven.compiler.target={OLDEST_RELEASE} "
                f"-Djava.version={OLDEST_RELEASE}")


def _tool(ctx: RepairContext) -> Repair | None:
    """A source/target older than 8: compile for 8 (the oldest the JDK compiles for), once. A compiler that
    bundles an older javac, or a static-analysis javac plugin failing on this JDK: static analysis off
    (_no_analysis). A newer Java than the JDK in use: the host's newer JDK, else give up naming the release
    and where a JDK comes from (toolchain.py)."""
    subject = ctx.diagnosis.subject
    if subject.endswith(OWN_JAVAC) or subject.startswith(ANALYSIS):
        return _no_analysis(ctx)
    if subject.startswith("jdk "):
        return toolchain_repair(ctx)
    if not subject.startswith("source ") or RAISE_SOURCE in ctx.env.get(MAVEN_ARGS, ""):
        return None
    args = f"{ctx.env.get(MAVEN_ARGS, '')} {RAISE_SOURCE}".strip()
    return Repair(kind="set_env", env={MAVEN_ARGS: args},
                  reason=f"Java {subject.removeprefix('source ')} sources: JDK {jdk_of(ctx.python)} compiles for "
                         f"{OLDEST_RELEASE} and later only, so the build targets {OLDEST_RELEASE}")


def _no_analysis(ctx: RepairContext) -> Repair | None:
    """Compile with the JDK's own javac, the static analysis that cannot run on it removed from the poms (a
    recorded step; the step fails, and the build with it, when no pom configures such an analyser)."""
    subject, jdk = ctx.diagnosis.subject, jdk_of(ctx.python)
    cause = (f"the pom's compiler bundles its own javac, which needs a "
             f"{subject.removesuffix(OWN_JAVAC).strip().replace('jdk', 'JDK')} runtime"
             if subject.endswith(OWN_JAVAC) else f"{subject.removeprefix(ANALYSIS).strip()} fails on JDK {jdk}")
    why = (f"{cause}: compile with the JDK's own javac (JDK {jdk}) and leave the static analysis (error-prone), "
           "which decides no test, out of the build")
    return Repair(kind="insert_before", step=disable_step(ctx.diagnosis.evidence, why),
                  reason=f"{ctx.diagnosis.describe()} -> static analysis disabled in the poms ({cause})")


def _resolve_online(ctx: RepairContext) -> Repair | None:
    """An artifact first needed offline (a plugin or provider the build did not use): run the same Maven
    command once with the network on, before the failing one, so it lands in ~/.m2."""
    command = ctx.failing.command
    if not command.startswith(("mvn ", "sh ./mvnw ")):
        command = ctx.plan.test_command or ""
    if " -o " not in f"{command} ":
        return None  # online already: no reachable repository has it
    online = command.replace(" -o ", " ", 1).replace(" -q ", " ", 1)
    if re.search(r"\s(?:test|package|verify|install)(?:\s|$)", online) and "test.failure.ignore" not in online:
        online += " -Dmaven.test.failure.ignore=true"  # a failing test must not stop the downloads
    step = Step(command=online,
                kind="other", why=f"{ctx.diagnosis.subject} was never downloaded: fetch it with the network on",
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> the same Maven run online once")


def release_parent_step(coordinates: str) -> str | None:
    """A step that makes pom.xml's <parent> the release of its SNAPSHOT version, after checking Maven Central
    has that release (`group:artifact:pom:X-SNAPSHOT` -> X); None for anything else."""
    parts = coordinates.split(":")
    if len(parts) != 4 or not parts[3].endswith("-SNAPSHOT"):
        return None
    group, artifact, _, version = parts
    release = version.removesuffix("-SNAPSHOT")
    url = f"{CENTRAL}/{group.replace('.', '/')}/{artifact}/{release}/{artifact}-{release}.pom"
    edit = ("import pathlib, re; p = pathlib.Path('pom.xml'); p.write_text(re.sub("
            f"r'(<parent>.*?<version>){re.escape(release)}-SNAPSHOT(</version>)', r'\\g<1>{release}\\g<2>', "
            "p.read_text(), count=1, flags=re.S))")
    return f"curl -sfI {url} > /dev/null && python3 -c {shlex.quote(edit)}"


def _release_parent(ctx: RepairContext) -> Repair | None:
    """A SNAPSHOT parent pom no reachable repository serves (only Maven Central is reachable, and it has no
    snapshots): build against the release of that version, when Central has it (recorded; pom.xml changes)."""
    if "parent POM" not in ctx.diagnosis.evidence or ctx.phase != "install":
        return None
    command = release_parent_step(ctx.diagnosis.subject)
    if command is None:
        return None
    step = Step(command=command, kind="other", evidence=[Evidence(file="pom.xml", text=ctx.diagnosis.subject)],
                why=f"the parent {ctx.diagnosis.subject} is a snapshot no reachable repository serves; its "
                    "release from Maven Central stands in for it")
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> the parent's release version (pom.xml edited)")


RULES = {
    "missing_tool": _tool,
    "missing_library": fonts_repair,
    "missing_module": _resolve_online,
    "no_distribution": _release_parent,
    **deselecting(SERVICE_REFUSED, NETWORK_OFF),
}


def repair(ctx: RepairContext) -> Repair | None:
    """The diagnosis's rule if it proposes something not tried yet, else skipping an auxiliary step (the
    setup, never the build), else Apache's Maven for a plugin Debian's cannot load (apache_maven.py), else
    leaving out a reactor module that cannot be built here (modules.py); None means give up (an artifact no
    reachable repository serves included)."""
    return first_repair(ctx, RULES, essential=("project",)) or apache_maven(ctx) or leave_out_module(ctx)

