"""What was installed, as constraints the replay Dockerfile pins every step to (uv and pip read them)."""
from __future__ import annotations

from envs.base import Sandbox


def freeze(sandbox: Sandbox) -> str:
    """`uv pip freeze` of the environment's venv, editable installs left out ("" when it fails)."""
    result = sandbox.exec(["uv", "pip", "freeze", "--exclude-editable"], timeout=120)
    return result.stdout if result.ok else ""


def constraints_from_freeze(freeze: str, project: str | None) -> str:
    """`uv pip freeze` output minus editable installs, local paths and the project itself."""
    keep = []
    for line in freeze.splitlines():
        line = line.strip()
        if not line or line.startswith(("-e", "#")) or " @ " in line:
            continue
        name = line.split("==", 1)[0].lower().replace("_", "-")
        if project and name == project.lower().replace("_", "-"):
            continue
        keep.append(line)
    return "\n".join(keep) + ("\n" if keep else "")


WARM_DIR = "/tmp/autoinstall-warm"
WARM = ("uv pip install -q --no-deps --no-build --target {dir} -r {pins} || "
        "while read -r req; do uv pip install -q --no-deps --no-build --target {dir} \"$req\" || true; done < {pins}")
"""Wheels only (--no-build: no sdist's setup code runs), one by one when one of them has no wheel."""


def warm(sandbox: Sandbox, constraints: str, timeout_s: float = 600) -> None:
    """Download the pinned wheels into the cache the trusted `sandbox` shares with later builds."""
    if not constraints.strip():
        return
    pins = f"{WARM_DIR}.txt"
    sandbox.write_file(pins, constraints.encode())
    sandbox.exec(WARM.format(dir=WARM_DIR, pins=pins), timeout=timeout_s)
