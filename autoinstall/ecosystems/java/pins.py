"""What was resolved, for the shared cache: the release artifacts in the image's local Maven repository.

The pom files pin the versions (Maven has no lock file; version ranges are rare), so pin_env is empty. The
"constraints" are the paths of the jars and poms in ~/.m2/repository, in Maven Central's layout (snapshots,
such as the project's own modules, left out); `warm` downloads them from Maven Central into the shared cache,
which later builds read as a repository before Central (proposal.CACHE_REPOSITORY).
"""
from __future__ import annotations

from envs.base import Sandbox

LOCAL_REPOSITORY = "/root/.m2/repository"
CACHE_DIR = "/cache/maven"
CENTRAL = "https://repo.maven.apache.org/maven2"
WARM_LIST = "/var/tmp/autoinstall-maven-warm.txt"
"""Not /tmp: a file put into the tmpfs there from outside is not seen inside."""
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
    trusted `sandbox` (those already there are kept): registry files only, nothing is built or run."""
    paths = [ln for ln in constraints.splitlines() if ln and ".." not in ln and not ln.startswith("/")]
    if not paths:
        return
    listing = "".join(f"{p}\n{p}.sha1\n" for p in paths)
    sandbox.write_file(WARM_LIST, listing.encode())
    fetch = (f"test -s \"$0\" || curl -sfL --create-dirs -o \"$0\" \"{CENTRAL}/$0\" || rm -f \"$0\"")
    sandbox.exec(f"mkdir -p {CACHE_DIR} && cd {CACHE_DIR} && xargs -P 8 -n 1 sh -c '{fetch}' < {WARM_LIST}",
                 timeout=timeout_s)
