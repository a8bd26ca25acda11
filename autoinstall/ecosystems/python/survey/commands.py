"""Shell commands: classifying them (install, test, system) and pulling apt package names out of them."""

from __future__ import annotations

import re
import shlex

from autoinstall.ecosystems.python.survey.facts import (
    Command,
    CommandPurpose,
    CommandSource,
    Named,
    RepoFacts,
)
from autoinstall.ecosystems.repofiles import RepoFiles

SYSTEM = re.compile(r"\bapt(-get)?\s+(-\S+\s+)*install\b")
BROWSERS = re.compile(r"\bplaywright install\b")
"""Browser builds (and their system libraries) for the tests: evidence that they drive a browser."""
INSTALL = re.compile(
    r"\b(pip3?|uv pip|python3? -m pip)\s+install\b|\buv sync\b|\b(poetry|pdm|pipenv) install\b|"
    r"\bsetup\.py (develop|install)\b|\bflit install\b"
)
TEST = re.compile(
    r"\b(py\.test|pytest|nosetests|nose2|stestr|trial)\b|-m (unittest|testtools\.run|pytest|tests?)\b|"
    r"\b(tox|nox)\b(?! *-e *(lint|docs|typing|mypy|style|pre-commit))|\b(make|just|poe|hatch) (run )?"
    r"test\w*\b|\bhatch test\b|\bsetup\.py test\b|\bpython3? \S*(run_?tests?|runtests)\w*\.py\b"
)
APT_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]+$")


def purpose_of(command: str) -> CommandPurpose:
    """What a command is for: installing system packages, Python packages, or running tests."""
    if SYSTEM.search(command) or BROWSERS.search(command):
        return "system"
    if INSTALL.search(command):
        return "install"
    if TEST.search(command):
        return "test"
    return "other"


def split_script(script: str) -> list[str]:
    """A shell script's commands: continuation lines joined, split at `&&` and `;`, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", script)
    commands = []
    for line in joined.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line.strip())
        if not line or line.startswith("#"):
            continue
        for part in re.split(r"\s*(?:&&|;)\s*", line):
            part = re.sub(r"^(sudo\s+(-\S+\s+)*|[A-Z_][A-Z0-9_]*=\S*\s+)+", "", part.strip())
            if part:
                commands.append(part)
    return commands


def apt_packages(command: str) -> list[str]:
    """Package names from an `apt-get install` command (versions and options dropped)."""
    match = SYSTEM.search(command)
    if not match:
        return []
    try:
        words = shlex.split(command[match.end() :])
    except ValueError:
        words = command[match.end() :].split()
    names = []
    for word in words:
        if word in ("|", "||", ">", "2>&1") or word.startswith((">", "|")):
            break
        name = word.split("=", 1)[0]
        if not word.startswith("-") and APT_NAME.match(name):
            names.append(name)
    return names


def add_script(
    files: RepoFiles,
    facts: RepoFacts,
    rel: str,
    script: str,
    source: CommandSource,
    context: str,
    after: int = 0,
) -> None:
    """Record the install, test and system commands of a script, and the apt packages it installs."""
    for command in split_script(script):
        purpose = purpose_of(command)
        if purpose == "other":
            continue
        evidence = files.evidence(rel, command[:60], after)
        if evidence.line is None:
            evidence = files.evidence(rel, command[:20], after)
        facts.commands.append(
            Command(text=command, source=source, purpose=purpose, context=context, evidence=evidence)
        )
        for name in apt_packages(command):
            if name not in {p.name for p in facts.apt_packages}:
                facts.apt_packages.append(Named(name=name, evidence=evidence))
