"""What was installed, as constraints the replay Dockerfile pins every step to (uv and pip read them)."""
from __future__ import annotations

import re

from envs.base import Sandbox

PIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._,-]*\])?==[A-Za-z0-9][A-Za-z0-9.+!_-]*")
"""A pinned requirement (`name==version`, extras allowed) and nothing else: no option line (`--index-url`,
`--find-links`, `-r`), no URL, no marker. The freeze comes from a venv the project's code ran in."""


def freeze(sandbox: Sandbox) -> str:
    """`uv pip freeze` of the environment's venv, editable installs left out ("" when it fails)."""
    result = sandbox.exec(["uv", "pip", "freeze", "--exclude-editable"], timeout=120)
    return result.stdout if result.ok else ""


def constraints_from_freeze(freeze: str, project: str | None) -> str:
    """`uv pip freeze` output minus editable installs, local paths, anything that is not a `name==version`
    pin, and the project itself."""
    keep = []
    for line in freeze.splitlines():
        line = line.strip()
        if not PIN.fullmatch(line):
            continue  # editable installs, local paths, comments, and any option line a hostile build planted
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
    wanted = [line.strip() for line in constraints.splitlines() if PIN.fullmatch(line.strip())]
    if not wanted:
        return
    pins = f"{WARM_DIR}.txt"
    sandbox.write_file(pins, ("\n".join(wanted) + "\n").encode())
    sandbox.exec(WARM.format(dir=WARM_DIR, pins=pins), timeout=timeout_s)
