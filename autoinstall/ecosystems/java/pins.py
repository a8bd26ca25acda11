"""What was resolved, for the shared cache: the release artifacts in the image's local Maven repository.

The pom files pin the versions (Maven has no lock file; version ranges are rare), so pin_env is empty. The
"constraints" are the paths of the jars and poms in ~/.m2/repository, in Maven Central's layout (snapshots,
such as the project's own modules, left out); `warm` downloads them from Maven Central into the shared cache,
which later builds read as a repository before Central (proposal.CACHE_REPOSITORY).
"""
from __future__ import annotations

import re

from envs.base import Sandbox

LOCAL_REPOSITORY = "/root/.m2/repository"
CACHE_DIR = "/cache/maven"
CENTRAL = "https://repo.maven.apache.org/maven2"
WARM_LIST = "/var/tmp/autoinstall-maven-warm.txt"
"""Not /tmp: a file put into the tmpfs there from outside is not seen inside."""
WARM_CONFIG = "/var/tmp/autoinstall-maven-warm.curl"
"""curl's config: a url and an output line for each file the cache lacks."""
CENTRAL_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+~/-]*")
"""A path of Maven Central's layout (group/artifact/version/file): no quote, space or backslash."""
LIST = (f"cd {LOCAL_REPOSITORY} 2>/dev/null && find . -type f \\( -name '*.jar' -o -name '*.pom' \\) "
        "| sed 's|^\\./||' | sort")


def freeze(sandbox: Sandbox) -> str:
    """Paths of the jars and poms of the local repository in the environment ("" when it cannot be read)."""
    result = sandbox.exec(LIST, timeout=120)
    if not result.ok:
        return ""
    lines = [ln.strip() for ln in result.stdout.splitlines() if ln.strip()]
    return "\n".join(lines) + ("\n" if lines else "")


def constraints(freeze: str, project: str | None) -> str:
    """The release artifacts: snapshots (the project's own modules among them) are never on Maven Central."""
    keep = [ln.strip() for ln in freeze.splitlines()
            if ln.strip() and "-SNAPSHOT" not in ln and ".." not in ln and not ln.startswith("/")]
    return "\n".join(keep) + ("\n" if keep else "")


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """Download the listed artifacts and their .sha1 files from Maven Central into the shared cache of the
    trusted `sandbox` (those already there are kept): registry files only, nothing is built or run.

    One curl fetches them all, 16 at a time over kept-alive connections: a curl per file paid a TLS handshake
    per file (javapoet's 690 files: 46 s -> 1.5 s, quiet). Only paths of Central's layout are asked for (the
    list comes from a project's sandbox: nothing in it may reach curl's config as anything but a path)."""
    paths = [ln for ln in constraints.splitlines() if CENTRAL_PATH.fullmatch(ln) and ".." not in ln.split("/")]
    if not paths:
        return
    listing = "".join(f"{p}\n{p}.sha1\n" for p in paths)
    sandbox.write_file(WARM_LIST, listing.encode())
    missing = (f'while IFS= read -r p; do [ -s "$p" ] || printf \'url = "{CENTRAL}/%s"\\noutput = "%s"\\n\' '
               f'"$p" "$p"; done < {WARM_LIST} > {WARM_CONFIG}')
    fetch = f"curl -sfL --create-dirs --remove-on-error --parallel --parallel-max 16 -K {WARM_CONFIG}"
    sandbox.exec(f"mkdir -p {CACHE_DIR} && cd {CACHE_DIR} && {missing} && {{ ! [ -s {WARM_CONFIG} ] || {fetch}; }}",
                 timeout=timeout_s)
