"""A reactor module whose build cannot complete here, for a reason no repair fixes (a plugin that downloads
`protoc`, Node or any binary from a host these machines cannot reach; an artifact no reachable repository
serves; a program the build runs that is not there), while the other modules can: leave it out, with what is
built on it, and build and test the rest.

The evidence is Maven's own line for the failing goal (`Failed to execute goal PLUGIN (EXECUTION) on project
X: MESSAGE`) with the cause in that message or the output; when Maven names no project (a plugin that cannot be
resolved fails the module before any goal: `Plugin P or one of its dependencies could not be resolved`), the
module is the reactor summary's FAILURE line, found by its name in the `< group:artifact >` header Maven prints
before building it, and the message is the error block after BUILD FAILURE. The modules go through `MAVEN_ARGS` (read by every
`mvn` of Maven 3.9+, so the build, the checks, the test runs, the replay Dockerfile and grading all leave them
out) as `-pl !:X,...`; each is a deselection `module:<folder>` whose tests (a static count) count against the
cap, so the verdict and the spec show what was not built.
"""
from __future__ import annotations

import re
import shlex
from typing import NamedTuple

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java.diagnosis import NETWORK_OFF, UNRESOLVED
from autoinstall.ecosystems.java.reactor import Module, built_on, read_reactor
from envs.spec import Deselection, Repair
from envs.testrun.maven_runner import MODULE_PREFIX

MAVEN_ARGS = "MAVEN_ARGS"
"""Arguments Maven (3.9+) adds to every command line: how a repair reaches every step, check and test run."""
REASON = "unbuildable_module"
"""The word a left-out module's deselection reason starts with."""
FAILED_GOAL = re.compile(r"Failed to execute goal (?:(?P<plugin>\S+) \((?P<execution>[^)]*)\) )?"
                         r"on project (?P<project>[\w.-]+): (?P<message>[^\n]*)")
UNAVAILABLE_HERE = re.compile(
    NETWORK_OFF.pattern + "|" + UNRESOLVED.pattern + "|"
    r"Unknown ?host|Name or service not known|Could not (?:download|get content|fetch)|"
    r"Connection (?:refused|timed out)|connect timed out|SocketTimeoutException|"
    r"Cannot run program \"[^\"]+\"|Unable to load the mojo", re.I)
"""What no repair fixes here: a host that cannot be reached, an artifact no reachable repository serves, a
program the plugin runs that is not installed, a plugin this Maven cannot load (once Apache's Maven, which
apache_maven.py installs in place of Debian's, cannot load it either)."""
_EXCLUDED = re.compile(r"(?:^|\s)-pl\s+(\S+)")
_HEADER = re.compile(r"^\[INFO\] -+< [\w.-]+:(?P<artifact>[\w.-]+) >-+\s*\n"
                     r"\[INFO\] Building (?P<name>.+?)\s*$", re.M)
"""The header Maven prints before building a module: its artifactId, then `Building NAME VERSION [i/n]`."""
_SUMMARY_FAILED = re.compile(r"^\[INFO\] (?P<name>\S.*?) \.+ FAILURE \[", re.M)
"""The reactor summary's line for the module that failed."""
_ERROR_BLOCK = re.compile(r"BUILD FAILURE.*?\n(?P<block>(?:\[ERROR\] (?!-> \[Help)[^\n]*\n)+)", re.S)
"""The [ERROR] lines after BUILD FAILURE, up to Maven's `-> [Help 1]`: what failed the module."""


class FailedProject(NamedTuple):
    """The module a failed reactor build stopped at, what failed in it (a goal, its build, resolving its plugins)
    and Maven's message."""

    project: str
    goal: str
    message: str


def failed_project(output: str) -> FailedProject | None:
    """The module a failed reactor build stopped at: Maven's `Failed to execute goal ... on project X` line, else
    the reactor summary's FAILURE module (its artifactId from its build header) with the error block after BUILD
    FAILURE as the message (a plugin no repository serves fails a module before any goal, naming no project)."""
    if found := FAILED_GOAL.search(output):
        goal = f"{found.group('plugin')} ({found.group('execution')})" if found.group("plugin") else "its build"
        return FailedProject(found.group("project"), goal, found.group("message"))
    summary, block = _SUMMARY_FAILED.search(output), _ERROR_BLOCK.search(output)
    if summary is None or block is None:
        return None
    name = summary.group("name").strip()
    artifact = next((h.group("artifact") for h in reversed(list(_HEADER.finditer(output)))
                     if h.group("name") == name or h.group("name").startswith(f"{name} ")), None)
    if artifact is None:
        return None
    lines = [line.removeprefix("[ERROR]").strip() for line in block.group("block").splitlines()]
    return FailedProject(artifact, "resolving its plugins", " ".join(line for line in lines if line))


def excluded(args: str) -> list[str]:
    """The `!:artifactId` entries of the `-pl` in MAVEN_ARGS, as artifactIds."""
    found = _EXCLUDED.search(args)
    return [e.removeprefix("!:") for e in found.group(1).split(",") if e.startswith("!:")] if found else []


def with_excluded(args: str, artifacts: list[str]) -> str:
    """MAVEN_ARGS with `artifacts` added to its `-pl` exclusions (one `-pl` for all)."""
    names = list(dict.fromkeys([*excluded(args), *artifacts]))
    rest = _EXCLUDED.sub("", args).strip()
    return f"{rest} -pl {','.join('!:' + n for n in names)}".strip()


def _cause(output: str, message: str) -> str:
    """The line that shows why the goal cannot complete here: its message, else the output's first such line."""
    if UNAVAILABLE_HERE.search(message):
        return message.strip()
    found = UNAVAILABLE_HERE.search(output)
    if found is None:
        return ""
    return output[output.rfind("\n", 0, found.start()) + 1:].split("\n", 1)[0].strip()


def leave_out_module(ctx: RepairContext) -> Repair | None:
    """Leave out the module whose goal failed for a reason no repair fixes, and what is built on it, when the
    reactor keeps a module with tests; None otherwise (a single module, the root, or nothing would be left)."""
    failed = failed_project(ctx.output)
    if failed is None or ctx.repo is None or not (cause := _cause(ctx.output, failed.message)):
        return None
    modules, already = read_reactor(ctx.repo), excluded(ctx.env.get(MAVEN_ARGS, ""))
    if failed.project in already:  # left out already, yet built: this Maven does not read MAVEN_ARGS
        return None
    gone = [m for m in built_on(modules, failed.project) if m.artifact not in already]
    kept = [m for m in modules if m not in gone and m.artifact not in already]
    if not gone or not any(m.tests for m in kept):
        return None
    goal, first = failed.goal, next(m for m in gone if m.artifact == failed.project)
    why = f"{goal} on project {first.artifact} cannot complete here: {cause[:300]}"
    left_out = [_deselection(m, why if m is first else f"built on {first.path}, which cannot be built here "
                                                          f"({goal}: {cause[:200]})") for m in gone]
    args = with_excluded(ctx.env.get(MAVEN_ARGS, ""), [m.artifact for m in gone])
    names = ", ".join(m.path for m in gone)
    tests = sum(m.tests for m in gone)
    return Repair(kind="set_env", env={MAVEN_ARGS: args}, left_out=left_out,
                  reason=f"{why} -> module(s) {names} left out ({tests} tests, counted as deselected; "
                         f"{MAVEN_ARGS}={shlex.quote(args)}); the other {len(kept)} are built and tested")


def _deselection(module: Module, why: str) -> Deselection:
    return Deselection(test=f"{MODULE_PREFIX}{module.path}", reason=f"{REASON}: {why}",
                       uncollected=module.tests or None)
