"""Apache's own Maven distribution, from Maven Central, in place of Debian's packaged Maven: the embedded model's
plans install it first (proposal.py), and this repair brings it to a plan without it (a chat model's) when a
plugin cannot be loaded by Debian's: Debian builds Maven against the Guice, Sisu and resolver libraries it
packages, and a plugin whose components are wired for Apache's distribution fails there with `Unable to load the
mojo ... (or one of its required components)` (google/gson's protobuf-maven-plugin 5.1.7 on trixie's Maven
3.9.9; Apache's 3.9.11 loads it and builds the module). Only when the build runs Debian's `mvn` (a project's
wrapper already is Apache's); when Apache's cannot load the plugin either, the module is left out (modules.py).
"""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java.pins import CENTRAL
from envs.spec import Evidence, Repair, Step

VERSION = "3.9.11"
"""The Apache Maven release installed: the Maven 3.9 line Debian packages (3.9.9), a release verified here."""
URL = f"{CENTRAL}/org/apache/maven/apache-maven/{VERSION}/apache-maven-{VERSION}-bin.tar.gz"
HOME = f"/opt/apache-maven-{VERSION}"
INSTALL = (f"curl -sSf -o /tmp/apache-maven.tgz {URL} && "
           f"echo \"$(curl -sSf {URL}.sha512)  /tmp/apache-maven.tgz\" | sha512sum -c - && "
           "tar -xzf /tmp/apache-maven.tgz --no-same-owner --no-same-permissions -C /opt && "
           f"rm /tmp/apache-maven.tgz && ln -sf {HOME}/bin/mvn /usr/local/bin/mvn && mvn -v")
"""Download the distribution from Maven Central, check it against Central's SHA-512, and put its `mvn` on PATH
ahead of Debian's (/usr/local/bin before /usr/bin): every later step, check, test run and the replay use it. It
reads the same ~/.m2/settings.xml, ~/.mavenrc, JAVA_HOME and MAVEN_ARGS. The files are root's with the umask's
modes whatever the archive says: a task's agent (another user) cannot change the Maven its tests run on."""
NOT_LOADED = re.compile(r"Unable to load the mojo '[^']+'(?: \(or one of its required components\))? from the "
                        r"plugin '(?P<plugin>[^']+)'")


def apache_maven(ctx: RepairContext) -> Repair | None:
    """Debian's `mvn` could not load a plugin: install Apache's Maven from Maven Central before the failing step,
    once; None for a wrapper build, another failure, or when Apache's Maven is in use already (a plan step)."""
    found = NOT_LOADED.search(ctx.output)
    in_use = any(s.command == INSTALL for s in ctx.plan.steps)
    if found is None or not ctx.failing.command.startswith("mvn ") or in_use:
        return None
    step = Step(command=INSTALL, kind="other", evidence=[Evidence(file="<output>", text=found.group(0)[:300])],
                why=f"Debian's Maven cannot load {found.group('plugin')}; Apache's Maven {VERSION} from Maven "
                    "Central, first on PATH, can")
    repair = Repair(kind="insert_before", step=step,
                    reason=f"{found.group(0)[:200]}: Debian's packaged Maven wires plugins with its own libraries "
                           f"-> Apache's Maven {VERSION} from Maven Central ({URL})")
    return None if ctx.already_tried(repair) else repair
