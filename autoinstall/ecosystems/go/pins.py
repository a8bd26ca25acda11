"""What was downloaded, for the shared cache: go.sum already pins every version, so nothing else is pinned.

The "constraints" of a Go environment are the `module@version` list of its module cache: pin_env is empty
(the replay Dockerfile points nothing at it; go.sum does the pinning), and `warm` downloads that list into
the shared cache, which later builds read as their first module proxy.
"""
from __future__ import annotations

import shlex

from envs.base import Sandbox

LIST = ('cd "$(go env GOMODCACHE)/cache/download" 2>/dev/null && find . -name "*.zip" -path "*/@v/*" | sort')
"""Every module zip the build downloaded (the toolchain GOTOOLCHAIN fetched included)."""


def _unescape(path: str) -> str:
    """The module cache writes an upper-case letter as `!` + lower case."""
    out, bang = [], False
    for ch in path:
        if ch == "!":
            bang = True
            continue
        out.append(ch.upper() if bang else ch)
        bang = False
    return "".join(out)


def freeze(sandbox: Sandbox) -> str:
    """`module@version` lines of the module cache in the environment ("" when it cannot be read)."""
    result = sandbox.exec(LIST, timeout=120)
    if not result.ok:
        return ""
    lines = []
    for path in result.stdout.splitlines():
        module, _, zip_name = path.removeprefix("./").partition("/@v/")
        if module and zip_name.endswith(".zip"):
            lines.append(f"{_unescape(module)}@{_unescape(zip_name.removesuffix('.zip'))}")
    return "\n".join(lines) + ("\n" if lines else "")


def constraints(freeze: str, project: str | None) -> str:
    """The module list minus the project's own module (never in the cache; kept for symmetry)."""
    mine = f"{project}@" if project else None
    keep = [ln.strip() for ln in freeze.splitlines() if ln.strip() and not (mine and ln.startswith(mine))]
    return "\n".join(keep) + ("\n" if keep else "")


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """`go mod download` of the listed modules into the shared cache of the trusted `sandbox`: archives
    from the module proxy, checked against the checksum database; nothing is built or run."""
    modules = [ln.strip() for ln in constraints.splitlines() if "@" in ln]
    if not modules:
        return
    args = " ".join(shlex.quote(m) for m in modules)
    command = f"cd /tmp && GOFLAGS=-modcacherw GOTOOLCHAIN=local go mod download {args}"
    sandbox.exec(command, timeout=timeout_s)
