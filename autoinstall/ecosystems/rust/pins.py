"""What was resolved, for the replay and the shared cache: the environment's Cargo.lock.

Cargo.lock pins every crate, so pin_env is empty. The constraints file is that Cargo.lock: a crate that came
without one gets it back in the replay Dockerfile (its lock step copies the recorded file instead of resolving
again), and `warm` downloads its registry crates into the shared cache that later builds' `cargo vendor` reads.
"""
from __future__ import annotations

import json
import tomllib

from envs.base import Sandbox

WARM_DIR = "/var/tmp/autoinstall-cargo-warm"
"""Not /tmp: a file put into the tmpfs there from outside is not seen inside."""


def freeze(sandbox: Sandbox) -> str:
    """The workspace's Cargo.lock ("" when it cannot be read)."""
    result = sandbox.exec("cat Cargo.lock", timeout=60)
    return result.stdout if result.ok and "[[package]]" in result.stdout else ""


def constraints(freeze: str, project: str | None) -> str:
    """The whole Cargo.lock: the project's own entries stay, or cargo would not take the file as it is."""
    return freeze


def registry_crates(lock: str) -> list[tuple[str, str]]:
    """(name, version) of every crates.io package a Cargo.lock pins (git and path packages are not cached)."""
    try:
        data = tomllib.loads(lock)
    except tomllib.TOMLDecodeError:
        return []
    return [(p["name"], p["version"]) for p in data.get("package") or []
            if isinstance(p, dict) and str(p.get("source", "")).startswith(("registry+", "sparse+"))]


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """`cargo fetch` of a throwaway manifest that depends on exactly the locked crates (`=version`, no default
    features) in the trusted `sandbox`: registry archives into the shared CARGO_HOME, nothing is built."""
    crates = registry_crates(constraints)
    if not crates:
        return
    deps = "".join(f"c{i} = {{ package = {json.dumps(name)}, version = \"={version}\", default-features = false }}\n"
                   for i, (name, version) in enumerate(crates))
    manifest = f'[package]\nname = "autoinstall-warm"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n{deps}'
    sandbox.exec(f"mkdir -p {WARM_DIR}/src && touch {WARM_DIR}/src/lib.rs", timeout=30)
    sandbox.write_file(f"{WARM_DIR}/Cargo.toml", manifest.encode())
    sandbox.exec(f"cd {WARM_DIR} && cargo fetch", timeout=timeout_s)
