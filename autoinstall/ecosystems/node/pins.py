"""What was resolved, for the replay and the shared cache: the environment's lock file.

The lock file pins every package, so pin_env is empty. For npm the constraints file is package-lock.json: a
package that came without one gets it back in the replay Dockerfile (its install step copies the recorded
file and runs `npm ci`), and `warm` puts its registry tarballs into the shared npm cache (/cache/npm) that
later builds read through their own overlay.
"""
from __future__ import annotations

import hashlib
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


def registry_tarballs(lock: str) -> dict[str, str]:
    """`name@version` -> tarball URL of every package a package-lock.json (v1, v2 or v3) fetched from the npm
    registry."""
    try:
        data = json.loads(lock)
    except ValueError:
        return {}
    found: dict[str, str] = {}
    for key, entry in (data.get("packages") or {}).items():
        if isinstance(entry, dict) and str(entry.get("resolved", "")).startswith(REGISTRY):
            name = entry.get("name") or key.rsplit("node_modules/", 1)[-1]
            found.setdefault(f"{name}@{entry.get('version')}", entry["resolved"])
    stack = [data.get("dependencies") or {}] if not data.get("packages") else []
    while stack:
        for name, entry in stack.pop().items():
            if isinstance(entry, dict):
                if str(entry.get("resolved", "")).startswith(REGISTRY):
                    found.setdefault(f"{name}@{entry.get('version')}", entry["resolved"])
                stack.append(entry.get("dependencies") or {})
    return found


def registry_packages(lock: str) -> list[str]:
    """`name@version` of every package a package-lock.json fetched from the npm registry."""
    return list(registry_tarballs(lock))


CHECK_BATCH = 1000
"""Index paths per presence check (~80 characters each: one bash argument stays far below its 128 KiB cap)."""


def index_entry(url: str) -> str:
    """Where npm's cache (cacache) indexes a tarball fetched from `url`, under the cache folder: the key's
    sha256 split 2/2/rest under `_cacache/index-v5`."""
    digest = hashlib.sha256(f"make-fetch-happen:request-cache:{url}".encode()).hexdigest()
    return f"_cacache/index-v5/{digest[:2]}/{digest[2:4]}/{digest[4:]}"


def missing_from_cache(sandbox: Sandbox, tarballs: dict[str, str], timeout_s: float) -> list[str]:
    """The packages whose tarball the npm cache ($npm_config_cache, else ~/.npm) has no index entry for:
    file tests in one shell, no npm started. A check that cannot run counts every package as missing."""
    entries = {index_entry(url): spec for spec, url in tarballs.items()}
    paths = list(entries)
    missing: list[str] = []
    for start in range(0, len(paths), CHECK_BATCH):
        batch = paths[start:start + CHECK_BATCH]
        result = sandbox.exec('cd "${npm_config_cache:-$HOME/.npm}" && for f in ' + " ".join(batch) +
                              '; do [ -s "$f" ] || echo "$f"; done', timeout=timeout_s)
        missing += [entries[p] for p in result.stdout.split() if p in entries] if result.ok else \
            [entries[p] for p in batch]
    return missing


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """`npm cache add` of the locked registry packages the shared npm cache lacks, in the trusted `sandbox`:
    tarballs checked against the registry's integrity; nothing is installed or run. After a build whose
    packages all came from the cache (the common case once it is warm) this is one shell loop of file tests,
    not hundreds of registry requests (mime-types' 389 packages: 9.6 s -> under 1 s)."""
    packages = missing_from_cache(sandbox, registry_tarballs(constraints), timeout_s)
    for start in range(0, len(packages), WARM_BATCH):
        args = " ".join(shlex.quote(p) for p in packages[start:start + WARM_BATCH])
        sandbox.exec(f"cd /tmp && npm cache add --prefer-offline {args}", timeout=timeout_s)
