"""Tests that draw text or lay out Swing components need fonts, which a minimal image lacks: the JDK's font
manager finds no fontconfig configuration and no font files (`Fontconfig head is null`, a NullPointerException in
`sun.awt.FontConfiguration`, "Probable fatal error:No fonts found"), or cannot load its native library for want of
libfreetype or libharfbuzz (`UnsatisfiedLinkError ... libfontmanager.so`, Debian's headless JDK); later tests in
the same JVM then see `Could not initialize class sun.font...`. The repair, once: Debian's fontconfig, a font
package and the font libraries, a recorded system step (so the image and the replay Dockerfile carry it). A test
JVM told of a display it cannot reach (`Can't connect to X11 window server`) runs headless instead, through
JAVA_TOOL_OPTIONS (every JVM reads it, Surefire's forks too, and says so on stderr; recorded like any variable).
A test that needs a real display (`HeadlessException`) is not this class: nothing here gives it one. Such
failures often leave a suite over the threshold: the install loop still takes a system step for them
(autoinstall/install/passing.py).
"""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_names import APT
from envs.spec import Evidence, Repair, Step

FONTS = "fonts"
"""The subject of a diagnosis that the JDK found no fonts."""
DISPLAY = "display"
"""The subject of a diagnosis that a JVM tried a display it cannot reach."""
PACKAGES = ("fontconfig", "fonts-dejavu-core", "libfreetype6", "libharfbuzz0b")
"""Debian's fontconfig (its configuration and libfontconfig1) and the DejaVu fonts it configures by default, with
the libraries Debian's JDK recommends for its font manager (its libfontmanager.so links libfreetype and
libharfbuzz, which the headless JDK does not pull in); a JDK that bundles them (Temurin's) needs only the first
two."""
FONTS_MISSING = re.compile(
    r"Fontconfig head is null|\"sun\.awt\.FontConfiguration\.head\" is null|"
    r"at sun\.awt\.FontConfiguration\.(?:getVersion|readFontConfigFile|init)\b|"
    r"Probable fatal error: ?No fonts found|"
    r"UnsatisfiedLinkError:[^\n]*lib(?:fontmanager|freetype|fontconfig)\.so|"
    r"Could not initialize class (?:sun\.font|sun\.awt|java\.awt)\.\w*Font\w*|"
    r"at sun\.font\.FontManagerFactory\.getInstance")
"""The JDK's own failures when it finds no fonts or cannot load the native font libraries."""
DISPLAY_UNREACHABLE = re.compile(r"Can't connect to X11 window server|"
                                 r"UnsatisfiedLinkError:[^\n]*libawt_xawt\.so")
"""A JVM that was not headless and found no display (or no X11 libraries) to open."""
HEADLESS_VARIABLE = "JAVA_TOOL_OPTIONS"
HEADLESS = "-Djava.awt.headless=true"
STEP = f"{APT} {' '.join(PACKAGES)}"


def fonts_repair(ctx: RepairContext) -> Repair | None:
    """No fonts: fontconfig, fonts and the font libraries from Debian, once. A display the JVM cannot reach: the
    test JVMs headless, once. None otherwise (headless needs fonts as much; a display is not to be had here)."""
    evidence = f"{ctx.diagnosis.describe()} ({ctx.diagnosis.evidence[:120]})"
    if ctx.diagnosis.subject == FONTS:
        tried = [*ctx.plan.steps, *(r.step for r in ctx.tried if r.step is not None)]
        if any(s.command == STEP for s in tried):
            return None
        step = Step(command=STEP, kind="system", evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)],
                    why="the tests draw text, and the JDK finds no fonts: Debian's fontconfig, DejaVu fonts and the "
                        "font libraries")
        return Repair(kind="insert_before", step=step, reason=f"{evidence} -> Debian {', '.join(PACKAGES)}")
    if ctx.diagnosis.subject != DISPLAY or HEADLESS_VARIABLE in ctx.env:
        return None  # set already (by a build, or to something a repair would overwrite)
    return Repair(kind="set_env", env={HEADLESS_VARIABLE: HEADLESS},
                  reason=f"{evidence} -> the test JVMs run headless ({HEADLESS_VARIABLE}={HEADLESS})")
