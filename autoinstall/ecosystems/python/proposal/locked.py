"""Install from the project's lock: its versions become constraints of every install step.

One step writes the lock's versions to LOCK_CONSTRAINTS (`uv export` for uv.lock, the pins read from
poetry.lock, pdm.lock or Pipfile.lock, the pinned lines of a pip-tools lock for this interpreter); each uv
install after it adds `-c LOCK_CONSTRAINTS`, so the packages the project needs come at the locked versions
and nothing the lock names for other platforms is installed. A stale lock is not used (a note says why);
a lock that cannot be installed on this interpreter is emptied by a repair (repairs.py), recorded.
"""

from __future__ import annotations

import shlex

from autoinstall.ecosystems.python.survey.facts import LockFile, RepoFacts
from envs.spec import Step

LOCK_CONSTRAINTS = "/opt/autoinstall-lock.txt"
"""Where the lock step writes the locked versions (in the image, outside the checkout)."""
USE_LOCK = f" -c {LOCK_CONSTRAINTS}"
PREFERENCE = ("uv", "poetry", "pdm", "pipenv", "pip-tools")
UV_EXPORT = ("uv export --frozen --no-hashes --no-header --no-emit-workspace --no-emit-local --all-extras "
             f"--all-groups -q -o {LOCK_CONSTRAINTS}")
PINNED_LINES = r"s/^([A-Za-z0-9][A-Za-z0-9._-]*(\[[^]]*\])?==[^ ;\\#]+( *;[^\\#]*[^\\# ])?).*/\1/p"
"""sed: keep `name==version[; marker]` of each pinned line, without hashes, comments and continuations."""


def choose_lock(facts: RepoFacts, python: str) -> tuple[LockFile | None, list[str]]:
    """The lock to install from (None when there is none or all are stale) and notes saying why."""
    notes = []
    usable = []
    for lock in sorted(facts.locks, key=lambda lk: PREFERENCE.index(lk.kind)):
        if lock.stale:
            notes.append(f"{lock.path} is out of sync with the manifest ({lock.stale}): resolving afresh "
                         "instead of installing from it")
        elif lock.python in (None, python) and (lock.pins or lock.kind in ("uv", "pip-tools")):
            usable.append(lock)
    if not usable:
        return None, notes
    return usable[0], notes + [f"installing the locked versions of {usable[0].path} (constraints of every "
                               "install step)"]


def lock_step(lock: LockFile) -> Step:
    """The step that writes the lock's versions to LOCK_CONSTRAINTS."""
    if lock.kind == "uv":
        command = UV_EXPORT
    elif lock.kind == "pip-tools":
        command = f"sed -n -E {shlex.quote(PINNED_LINES)} {shlex.quote(lock.path)} > {LOCK_CONSTRAINTS}"
    else:
        command = "printf '%s\\n' " + " ".join(shlex.quote(p) for p in lock.pins) + f" > {LOCK_CONSTRAINTS}"
    why = (f"the versions {lock.path} locks ({lock.kind}), as constraints of the install steps below: "
           "what the project's own CI installs")
    return Step(command=command, why=why, kind="python", evidence=[lock.evidence])


def constrained(step: Step) -> Step:
    """The step with the lock's constraints added to its uv install."""
    if "uv pip install" not in step.command or USE_LOCK in step.command:
        return step
    return step.model_copy(update={"command": step.command + USE_LOCK})
