"""System headers the project's own compiled sources include, and the Debian packages that provide them.

An optional compiled extension (built when its library is there, left out otherwise) does not fail the
build when a header is missing, so no diagnosis ever sees it: the plan installs what the hand-kept header map
knows up front, and notes the headers it cannot place (the extension may then be left out, which the optional
import check of its private package records).
"""
from __future__ import annotations

import re
from pathlib import Path

from autoinstall.ecosystems.debian_names import HEADERS
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

SOURCES = (".c", ".cc", ".cpp", ".cxx", ".pyx", ".pxd", ".h", ".hpp")
INCLUDE = re.compile(r'^\s*(?:#\s*include\s*[<"](?P<c>[\w./+-]+\.h(?:pp)?)[>"]|'
                     r'cdef\s+extern\s+from\s+["\'](?P<pyx>[\w./+-]+\.h(?:pp)?)["\'])', re.M)
STANDARD = re.compile(
    r"^(?:(?:sys|netinet|arpa|bits|linux|asm|net)/.*|assert|complex|ctype|errno|fenv|float|inttypes|iso646|"
    r"limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|"
    r"stdnoreturn|string|strings|tgmath|threads|time|uchar|wchar|wctype|unistd|fcntl|dirent|dlfcn|pthread|"
    r"poll|pwd|grp|sched|semaphore|spawn|syslog|termios|utime|netdb|endian|alloca|malloc|getopt|glob|"
    r"libgen|regex|search|iconv|langinfo|nl_types|wordexp|ftw|fnmatch|memory|features|"
    r"structmember|frameobject|numpy/.*|pybind11/.*|Python|pythread|pymem|.*object)\.h(?:pp)?$")
"""The C library's, POSIX's and Python's own headers: the image has them."""
OPTIONAL_BUILD = re.compile(
    r"\boptional\s*=\s*True|except\s*\(?\s*(?:\w+\.)*(?:CCompilerError|DistutilsExecError|DistutilsPlatformError|"
    r"CompileError|LinkError|BuildFailed)\b|--without-\w+")
"""setup.py builds its extensions optionally: a failed compile is caught (or `Extension(optional=True)`)."""
READ_CAP = 256 * 1024
"""Bytes read of each source: includes come first."""


def _includes(repo: Path, rel: str) -> list[tuple[str, int]]:
    text = (RepoFiles(repo).text(rel) or "")[:READ_CAP]  # nothing across a link out, no FIFO, under a cap
    return [(m.group("c") or m.group("pyx"), text.count("\n", 0, m.start()) + 1) for m in INCLUDE.finditer(text)]


def _shipped(repo: Path) -> set[str]:
    """Names of the header files the project ships (its own includes are not system packages)."""
    return {p.name for p in RepoFiles(repo).walk((".h", ".hpp", ".pxd"), limit=5000)}


def optional_build(repo: Path) -> bool:
    """True when setup.py leaves out an extension whose compile fails instead of failing the build."""
    return bool(OPTIONAL_BUILD.search(RepoFiles(repo).text("setup.py") or ""))


def header_packages(facts: RepoFacts, repo: Path) -> tuple[dict[str, Evidence], list[str]]:
    """For optionally built extensions (a required one fails the build, and the missing header is diagnosed
    from its output): Debian packages for the headers their sources include (those the hand-kept map names),
    and a note naming the headers it has no package for."""
    packages: dict[str, Evidence] = {}
    unplaced: list[str] = []
    sources = [c.name for c in facts.c_extensions if c.name.endswith(SOURCES)]
    if not sources or not optional_build(repo):
        return packages, []
    shipped = _shipped(repo) if sources else set()
    for rel in sources:
        for header, line in _includes(repo, rel):
            package = HEADERS.get(header)
            if package == "python3-dev":
                continue
            if package is not None:
                packages.setdefault(package, Evidence(file=rel, line=line, text=f"#include <{header}>"))
            elif not STANDARD.match(header) and Path(header).name not in shipped and header not in unplaced:
                unplaced.append(header)
    notes = [f"compiled sources include {', '.join(unplaced[:5])}, which no hand-kept map places in a Debian "
             "package: if the build fails on one it is diagnosed, if an optional extension is left out without "
             "it the optional import check records that"] if unplaced else []
    return packages, notes
