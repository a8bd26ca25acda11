"""What was resolved, for the replay and the shared cache: the environment's lock file.

The lock file pins every package, so pin_env is empty. For npm the constraints file is package-lock.json: a
package that came without one gets it back in the replay Dockerfile (its install step copies the recorded
file and runs `npm ci`), and `warm` puts its registry tarballs into the shared npm cache (/cache/npm) that
later builds read through their own overlay.
"""
from __future__ import annotations

import json
import shlex

from envs.base import Sandbox

REGISTRY = "https://registry.npmjs.org/"
WARM_BATCH = 200
"""Packages per `npm cache add` (one command line each)."""


def freeze(sandbox: Sandbox) -> str:
    """The package-lock.json of the environment ("" when there is none, e.g. yarn or pnpm)."""
    result = sandbox.exec("cat package-lock.json", timeout=60)
    return result.stdout if result.ok and '"lockfileVersion"' in result.stdout else ""


def constraints(freeze: str, project: str | None) -> str:
    """The whole lock file: npm takes it only as it is (the project's own root entry included)."""
    return freeze


def registry_packages(lock: str) -> list[str]:
    """`name@version` of every package a package-lock.json (v1, v2 or v3) fetched from the npm registry."""
    try:
        data = json.loads(lock)
    except ValueError:
        return []
    found: dict[str, None] = {}
    for key, entry in (data.get("packages") or {}).items():
        if isinstance(entry, dict) and str(entry.get("resolved", "")).startswith(REGISTRY):
            name = entry.get("name") or key.rsplit("node_modules/", 1)[-1]
            found[f"{name}@{entry.get('version')}"] = None
    stack = [data.get("dependencies") or {}] if not data.get("packages") else []
    while stack:
        for name, entry in stack.pop().items():
            if isinstance(entry, dict):
                if str(entry.get("resolved", "")).startswith(REGISTRY):
                    found[f"{name}@{entry.get('version')}"] = None
                stack.append(entry.get("dependencies") or {})
    return list(found)


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """`npm cache add` of the locked registry packages in the trusted `sandbox`: tarballs into the shared
    npm cache, checked against the registry's integrity; nothing is installed or run."""
    packages = registry_packages(constraints)
    for start in range(0, len(packages), WARM_BATCH):
        args = " ".join(shlex.quote(p) for p in packages[start:start + WARM_BATCH])
        sandbox.exec(f"cd /tmp && npm cache add {args}", timeout=timeout_s)
