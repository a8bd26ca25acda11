"""Static analysis that runs inside javac (error-prone, as a plexus compiler or as a `-Xplugin`): when it cannot
run on the image's JDK, the build compiles with the JDK's own javac and the analysis is left out.

Static analysis decides no test's outcome, so the suite stays the same; the edit is a recorded step (replayed by
the Dockerfile) that rewrites the poms' compiler configuration: `<compilerId>` of a javac that bundles an
analyser becomes `<fork>true</fork>` (plexus's javac-with-errorprone puts its own, older javac on the compiler
plugin's class path, where an in-process javac would still be found: a forked one is the JDK's `javac`), and the
`-Xplugin:` arguments that load an analyser go, with the `-XDcompilePolicy` argument those analysers require.
Maven offers no property for this: an explicit `<configuration>` wins over `-Dmaven.compiler.compilerId`.
"""
from __future__ import annotations

import re
import shlex

from envs.spec import Evidence, Step

ANALYSERS = ("ErrorProne",)
"""Names javac plugins that analyse (`-Xplugin:NAME`) are loaded by."""
ANALYSING_COMPILERS = ("errorprone",)
"""What the `<compilerId>` of a plexus compiler that wraps javac with an analyser contains."""
FAILED = re.compile(
    r"An unhandled exception was thrown by the (?P<s>Error Prone) static analysis plugin|"
    r"IllegalAccessError: class com\.google\.(?P<s2>errorprone)\.\S+ .*cannot access class com\.sun\.tools\.javac")
"""error-prone itself failing on this JDK (too old for it, or the JDK's compiler internals not opened to it)."""

_SCRIPT = r"""
import pathlib, re, sys
compilers, plugins = sys.argv[1].split(","), sys.argv[2].split(",")
tags = "arg|compilerArg|compilerArgument"
changed = []
for pom in sorted(pathlib.Path(".").rglob("pom.xml")):
    if {"target", "node_modules"} & set(pom.parts) or any(p.startswith(".") for p in pom.parts[:-1]):
        continue
    text = before = pom.read_text()
    fork = "" if "<fork>" in text else r"\1<fork>true</fork>"
    for c in compilers:
        text = re.sub(r"([ \t]*)<compilerId>[^<]*" + re.escape(c) + r"[^<]*</compilerId>", fork, text)
    for p in plugins:
        text, n = re.subn(r"[ \t]*<(" + tags + r")>\s*-Xplugin:" + re.escape(p) + r"\b.*?</\1>[ \t]*\n?", "",
                          text, flags=re.S)
        if n:
            text = re.sub(r"[ \t]*<(" + tags + r")>\s*-XDcompilePolicy=\w+\s*</\1>[ \t]*\n?", "", text)
    if text != before:
        pom.write_text(text)
        changed.append(str(pom))
if not changed:
    sys.exit("no pom.xml configures a static-analysis compiler (compilerId " + "|".join(compilers)
             + ", -Xplugin:" + "|".join(plugins) + "): nothing to disable")
print("static analysis disabled in: " + ", ".join(changed))
"""


def disable_command() -> str:
    """A command (run in the checkout) that removes the analysing compiler and javac plugins from every pom,
    and fails when no pom configures one."""
    return (f"python3 -c {shlex.quote(_SCRIPT.strip())} "
            f"{shlex.quote(','.join(ANALYSING_COMPILERS))} {shlex.quote(','.join(ANALYSERS))}")


def disable_step(evidence: str, why: str) -> Step:
    """The recorded step that compiles with the JDK's own javac, static analysis left out."""
    return Step(command=disable_command(), kind="other", why=why,
                evidence=[Evidence(file="<output>", text=evidence[:300])])
