"""Read a failed Maven command's output (dependency resolution, javac, Surefire) and say what went wrong."""
from __future__ import annotations

import re

from autoinstall.ecosystems.java.fonts import DISPLAY, DISPLAY_UNREACHABLE, FONTS, FONTS_MISSING
from autoinstall.ecosystems.java.staticanalysis import FAILED as ANALYSIS_FAILED
from autoinstall.ecosystems.rules import diagnose_by
from envs.spec import Diagnosis, DiagnosisKind

SERVICE_REFUSED = re.compile(r"java\.net\.ConnectException: Connection refused|Connection refused \(Connection "
                             r"refused\)|ECONNREFUSED|Connection to (?P<s>\S+) refused")
"""A service the test expects is not running."""
NETWORK_OFF = re.compile(r"java\.net\.UnknownHostException|java\.net\.NoRouteToHostException|"
                         r"Network is unreachable|Temporary failure in name resolution|"
                         r"nodename nor servname provided")
"""What Java code that needs the internet throws offline (as verification runs)."""
JDK_TOO_OLD = re.compile(
    r"release version (?P<s1>\d+) not supported|invalid (?:target|source) release:? (?P<s2>\d+)|"
    r"class file has wrong version (?P<c1>\d+)\.0, should be (?P<c0>\d+)\.0|"
    r"compiled by a more recent version of the Java Runtime "
    r"\(class file version (?P<c2>\d+)\.0\)")
"""The project or a plugin needs another JDK than the image's: a newer release, a dependency's newer class
files, or (the JDK's own class files too new) a compiler plugin that bundles an older javac."""
IMAGE_CLASS_VERSION = 65
"""Class file version of JDK 21, the image's Debian JDK: a reader that stops below it is no JDK of the image's
(a compiler plugin's own older javac), whichever JDK runs the build."""
OWN_JAVAC = "for the compiler plugin's own javac"
"""Ends the subject of a compiler that bundles an older javac than the image's JDK (which cannot read the
JDK's own class files): `jdk 9 for the compiler plugin's own javac`."""
ANALYSIS = "static analysis"
"""Starts the subject of a static-analysis javac plugin that fails on this JDK: `static analysis Error Prone`."""
SOURCE_TOO_OLD = re.compile(r"(?:Source|Target) option (?P<s>\d+(?:\.\d+)?) is no longer supported|"
                            r"error: (?:source|target) release (?P<s2>1\.[1-7]) ")
"""A source/target older than 8, which this JDK cannot compile for."""
OFFLINE_MISSING = re.compile(
    r"Cannot access \S+ \(\S+\) in offline mode and the artifact (?P<s>\S+) has not been downloaded")
"""An artifact first asked for offline (a plugin or provider the build never used): resolve it online."""
UNRESOLVED = re.compile(
    r"(?:Could not (?:find|resolve|transfer) artifact|Failure to find|The following artifacts could not be "
    r"resolved:|Non-resolvable parent POM for [^:]+:[^:]+:\S+: (?:Could not find artifact|The following "
    r"artifacts could not be resolved:)) (?P<s>[\w.-]+:[\w.-]+:[\w.:-]+)")
"""A dependency, plugin or parent no reachable repository serves (a snapshot, a private repository)."""

_RULES: list[tuple[DiagnosisKind, re.Pattern[str]]] = [
    ("missing_library", FONTS_MISSING),  # first: the JDK's own words, and a passing suite is repaired for them
    ("missing_library", DISPLAY_UNREACHABLE),
    ("missing_tool", ANALYSIS_FAILED),
    ("missing_tool", SOURCE_TOO_OLD),
    ("missing_tool", JDK_TOO_OLD),
    ("missing_module", OFFLINE_MISSING),
    ("no_distribution", UNRESOLVED),
    ("missing_tool", re.compile(r"Cannot run program \"(?P<s>[\w.+-]+)\"|(?P<s2>[\w.+-]+): command not found")),
    ("service_unavailable", SERVICE_REFUSED),
    ("network_required", NETWORK_OFF),
]


def _subject(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    if pattern in (FONTS_MISSING, DISPLAY_UNREACHABLE):
        return FONTS if pattern is FONTS_MISSING else DISPLAY
    subject = next((v for v in m.groupdict().values() if v), "")
    if pattern is JDK_TOO_OLD:
        if m.group("c0") and int(m.group("c0")) < IMAGE_CLASS_VERSION:
            # The JDK's own classes are too new for the compiler in use (a plugin's bundled javac).
            return f"jdk {int(m.group('c0')) - 44} {OWN_JAVAC}"
        if m.group("c1") or m.group("c2"):
            return f"jdk {int(subject) - 44}"  # class file version 65 is Java 21
        return f"jdk {subject}"
    if pattern is ANALYSIS_FAILED:
        return f"{ANALYSIS} {subject}"
    if pattern is SOURCE_TOO_OLD:
        return f"source {subject.removeprefix('1.')}"
    return subject.rstrip(".:,")


def _unknown(output: str) -> str:
    errors = [ln for ln in output.splitlines() if ln.startswith("[ERROR]") and len(ln) > 10]
    return "\n".join(errors[:2] or output.strip().splitlines()[-3:])


def diagnose(output: str, *, timed_out: bool = False) -> Diagnosis:
    """The first rule that matches `output`, with the line that shows it."""
    return diagnose_by(output, timed_out, _RULES, _subject, _unknown)
