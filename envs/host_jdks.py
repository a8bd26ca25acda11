"""The host's JDKs, for envs/host_toolchains.py: where they are installed (Debian's and vendors' packages under
/usr/lib/jvm, SDKMAN!'s, IntelliJ's and Gradle's downloads, $JAVA_HOME), which Java each is (its `release`
file), what identifies a build, and what a build needs of it (not src.zip, the docs, man pages or demos).

A JDK counts only with `bin/java`, `bin/javac` and a `release` file: a JRE cannot compile. Vendors' Linux builds
(Temurin, Zulu, Corretto, Oracle's) link against glibc alone, so a copy runs on any suite as new as the one they
were built for; Debian's own JDKs link their configuration into /etc, which the copy takes as files
(envs/host_toolchains.py `write_tarball`).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

JDK_ROOTS = (Path("/usr/lib/jvm"),)
"""Where packages install JDKs (Debian's openjdk-N, Adoptium's temurin-N, Zulu's, Corretto's .debs)."""
HOME_ROOTS = (".sdkman/candidates/java", ".jdks", ".gradle/jdks")
"""Under the home folder: SDKMAN!'s, IntelliJ IDEA's and Gradle's toolchain downloads."""
WHERE = f"{', '.join(map(str, JDK_ROOTS))}, {', '.join('~/' + r for r in HOME_ROOTS)} and $JAVA_HOME"
"""Where JDKs are looked for, as error messages and notes say it."""
_SKIP_TOP = {"docs", "man", "demo", "sample"}
_SKIP_FILES = {("lib", "src.zip")}
"""The JDK's own sources (50 MB) and documentation: no build or test reads them."""
_VERSION = re.compile(r'^JAVA_VERSION="?([^"\s]+)"?\s*$', re.M)


def prefixes() -> list[Path]:
    """Every folder that holds a JDK, in the order of JDK_ROOTS, HOME_ROOTS, then $JAVA_HOME."""
    roots = [*JDK_ROOTS, *(Path.home() / r for r in HOME_ROOTS)]
    found: list[Path] = []
    for root in roots:
        try:
            found += sorted(root.iterdir()) if root.is_dir() else []
        except OSError:  # a folder this user cannot list: its JDKs are not there for us
            continue
    if os.environ.get("JAVA_HOME"):
        found.append(Path(os.environ["JAVA_HOME"]))
    return [p for p in found if all((p / rel).is_file() for rel in ("bin/java", "bin/javac", "release"))]


def version(prefix: Path) -> str | None:
    """From the `release` file: JAVA_VERSION="25.0.3" -> "25.0.3"; "1.8.0_412" -> "8.0.412"; an early-access
    build keeps its tag: "26-ea"."""
    try:
        found = _VERSION.search((prefix / "release").read_text(errors="replace"))
    except OSError:
        return None
    if found is None:
        return None
    number = found[1]
    if number.startswith("1."):
        number = number.removeprefix("1.").replace("_", ".")
    return number if re.match(r"\d+(?:\.\d+)*(?:-[\w.]+)?$", number) else None


def entry_points(prefix: Path) -> list[Path]:
    """What identifies a build, cheaply: its release file, launchers, the JVM and the module image (by size)."""
    return [prefix / rel for rel in ("release", "bin/java", "bin/javac", "lib/server/libjvm.so", "lib/modules")]


def keep(parts: tuple[str, ...]) -> bool:
    """Whether the copy keeps the path with these parts (relative to the JDK's folder)."""
    return not parts or (parts[0] not in _SKIP_TOP and tuple(parts) not in _SKIP_FILES)
