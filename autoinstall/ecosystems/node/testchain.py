"""A test script that chains style or type checks with its runner (`xo && ava`, `eslint . && jest`,
`tsc --noEmit && vitest run`, `npm run lint && mocha`, `standard && tape test/*.js`): the checks are not the
tests. Here they fail for reasons that say nothing about behaviour (a rule the code breaks today, a plugin or
type package resolved at another version) and stop the chain before any test runs; in a task, the grade would
hang on code style. So the tests run the chain without them: every other step (`npm run build`, a `tsc` that
emits, `node build.js`) stays, in order, and what was left out is said, with why.

A step is a check when its program is a known linter, formatter or type checker (`CHECKERS`; `tsc`/`vue-tsc`
only with `--noEmit`), or when it runs a package script whose every step is one (`npm run lint` ->
`eslint .`): the proposal leaves those out. A script known only by its name (`npm run lint` runs a file of the
project's own) is left out by a repair, once the tests failed with no test run (`by_name`). Only `&&`
chains are split: a script with `||`, `;` or `&` at its top level stays as it is.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

CHECKERS = {
    "xo": "lints (ESLint with xo's rules)", "eslint": "lints", "standard": "lints (ESLint with standard's rules)",
    "semistandard": "lints", "ts-standard": "lints", "tslint": "lints", "jshint": "lints", "jscs": "checks code style",
    "oxlint": "lints", "biome": "lints and checks formatting", "prettier": "checks formatting",
    "dprint": "checks formatting", "stylelint": "lints stylesheets", "markdownlint": "lints Markdown",
    "markdownlint-cli2": "lints Markdown", "tsd": "checks the type definitions",
    "attw": "checks the package's type definitions", "publint": "lints the package's manifest",
    "type-coverage": "checks type coverage", "svelte-check": "checks types", "flow": "checks types",
    "tsc": "--noEmit checks types", "vue-tsc": "--noEmit checks types"}
"""Programs that check style, formatting or types, never behaviour, and what each does."""
EMITS_UNLESS_NOEMIT = ("tsc", "vue-tsc")
"""TypeScript compilers: a build (they write JavaScript) unless told `--noEmit`."""
CHECK_NAME = re.compile(r"(?:^|[:_-])(?:lint|eslint|xo|standard|prettier|format|fmt|style|typecheck|types?-?check"
                        r"|check-?types|types|typings|tsd)(?:$|[:_-])", re.I)
"""A package script whose name says it lints, formats or checks types (`lint`, `lint:js`, `typecheck`,
`test:types`, `format:check`)..."""
BUILD_NAME = re.compile(r"build|compile|bundle|dist|prepare|gen|emit|declaration", re.I)
"""...unless it also says it builds (`build:types` writes declarations)."""
RUNNER_WORDS = frozenset({"vitest", "jest", "mocha", "_mocha", "ava", "tap", "uvu", "tape", "jasmine", "c8", "nyc",
                          "karma", "qunit", "lab", "brittle", "borp", "zora", "wtr", "web-test-runner"})
"""Programs that run tests (or coverage wrappers around a runner)."""
SCRIPT_RUNNERS = frozenset({"node", "tsx", "ts-node"})
"""Programs that run a test file when one is named (`node --test`, `node test.js`, `tsx test/index.ts`)."""
_ENV_WORDS = frozenset({"cross-env", "env", "npx"})
_VALUE_FLAGS = frozenset({"-p", "--package"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PATH_BIN = 'export PATH="$PWD/node_modules/.bin:$PATH"'
"""What npm puts on PATH for a script: the remaining steps then run as the script ran them."""


@dataclass(frozen=True)
class LeftOut:
    """A step left out of the test command, and why it is not a test."""

    step: str
    why: str


@dataclass(frozen=True)
class RunnerPart:
    """A test script without its checks: the steps kept, in order, and those left out."""

    script: str
    kept: list[str]
    left_out: list[LeftOut] = field(default_factory=list)

    def command(self, manager: str, runner: str | None = None, args: str = "") -> str:
        """The kept steps as a command run where the package is: one package script through its manager, else
        the steps with node_modules/.bin on PATH; `args` given to the step that starts `runner`."""
        kept = [s for s in self.kept if s != PATH_BIN]  # a command made here before, split again
        if len(kept) == 1 and (ref := script_ref(kept[0])) is not None:
            return f"npm run {ref} --ignore-scripts" if manager == "npm" else f"{manager} run {ref}"
        steps = [f"{s} {args}" if args and runner and program(s) == runner and "|" not in s else s for s in kept]
        return " && ".join([PATH_BIN, *steps])

    def reason(self, where: str = "") -> str:
        """What was left out of `script` (at `where`, a file:line) and why, for the plan's notes and a repair."""
        out = "; ".join(f"`{o.step}` ({o.why})" for o in self.left_out)
        at = f" ({where})" if where else ""
        rest = " && ".join(s for s in self.kept if s != PATH_BIN)
        return (f"test script `{self.script[:120]}`{at}: {out} left out of the test command (checks of style or "
                f"types, not of behaviour: a failure there stops the runner before any test); the tests run "
                f"`{rest[:160]}`")


def split_chain(script: str) -> list[str] | None:
    """The steps of an `&&` chain (a pipe stays inside its step); None when the script has `||`, `;`, `&` or a
    line break at its top level, or unbalanced quotes or parentheses."""
    steps, start, depth, quote, i = [], 0, 0, "", 0
    while i < len(script):
        c = script[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and script.startswith("&&", i):
            steps.append(script[start:i].strip())
            start, i = i + 2, i + 2
            continue
        elif c == "&" and (script[i - 1:i] == ">" or script[i + 1:i + 2] == ">"):
            pass  # a redirection (`2>&1`, `&>`)
        elif depth == 0 and (c in ";&\n" or script.startswith("||", i)):
            return None
        elif depth == 0 and c == "|":
            i += 1
            continue
        i += 1
    if quote or depth:
        return None
    steps.append(script[start:].strip())
    return steps if all(steps) else None


def _words(step: str) -> list[str]:
    try:
        words = shlex.split(step)
    except ValueError:
        return []
    i = 0
    while i < len(words) and (_ASSIGN.match(words[i]) or words[i] in _ENV_WORDS or words[i].startswith("-")):
        i += 2 if words[i] in _VALUE_FLAGS else 1
    if words[i:i + 2] in (["pnpm", "exec"], ["npm", "exec"], ["yarn", "exec"]):
        return _words(shlex.join(words[i + 2:]).removeprefix("-- "))
    return words[i:]


def program(step: str) -> str:
    """The program a step starts, past variable assignments, cross-env, npx and a path (`./node_modules/.bin/`)."""
    words = _words(step)
    return words[0].rsplit("/", 1)[-1] if words else ""


def script_ref(step: str) -> str | None:
    """The package script a step runs (`npm run lint`, `npm run-script lint`, `yarn lint`, `pnpm run lint`)."""
    words = [w for w in _words(step) if w not in ("-s", "--silent")]
    if len(words) >= 3 and words[0] == "npm" and words[1] in ("run", "run-script"):
        return words[2]
    if len(words) >= 2 and words[0] in ("yarn", "pnpm"):
        name = words[2] if words[1] == "run" and len(words) >= 3 else words[1]
        return None if name.startswith("-") or name in ("install", "add", "exec", "dlx") else name
    return None


def _check(step: str, scripts: dict[str, str], by_name: bool, depth: int = 0) -> str | None:
    """Why `step` checks style or types and is no test (None when it may be anything else)."""
    words = _words(step)
    name = program(step)
    if name in EMITS_UNLESS_NOEMIT and not any(w.lower() == "--noemit" for w in words):
        return None  # it compiles: a build
    if name in CHECKERS:
        return f"{name} {CHECKERS[name]}"
    ref = script_ref(step)
    if ref is not None and ref not in scripts and words[0] in ("yarn", "pnpm") and depth <= 3:
        return _check(shlex.join(words[2:] if words[1] == "run" else words[1:]), scripts, by_name, depth + 1)
    body = scripts.get(ref or "")
    if ref is None or body is None or depth > 3:
        return None
    inner = split_chain(body) or []
    whys = [_check(s, scripts, by_name, depth + 1) for s in inner]
    if inner and all(whys):
        return f"the `{ref}` script runs `{body[:80]}`: " + "; ".join(dict.fromkeys(w for w in whys if w))
    if by_name and CHECK_NAME.search(ref) and not BUILD_NAME.search(ref) and not _runs_tests(body, scripts, depth + 1):
        return f"the `{ref}` script (`{body[:80]}`): its name says it checks style or types"
    return None


def _runs_tests(step: str, scripts: dict[str, str], depth: int = 0) -> bool:
    """Whether `step` (or a script it runs) starts a test runner: `node --test`, a runner, a coverage wrapper."""
    if depth > 3:
        return False
    for part in split_chain(step) or [step]:
        words = _words(part)
        name = program(part)
        if name in RUNNER_WORDS or (name in SCRIPT_RUNNERS and any("test" in w for w in words[1:])):
            return True
        if (ref := script_ref(part)) and ref in scripts and _runs_tests(scripts[ref], scripts, depth + 1):
            return True
    return False


def runner_part(script: str, scripts: dict[str, str], *, by_name: bool = False) -> RunnerPart | None:
    """`script` without its style and type checks (known by their program, or, `by_name`, by their script's
    name); None when it has none, cannot be split, or nothing that runs tests would remain."""
    steps = split_chain(script)
    if not steps or len(steps) < 2:
        return None
    whys = [_check(s, scripts, by_name) for s in steps]
    kept = [s for s, why in zip(steps, whys) if not why]
    if not kept or len(kept) == len(steps) or not any(_runs_tests(s, scripts) for s in kept):
        return None
    return RunnerPart(script, kept, [LeftOut(s, why) for s, why in zip(steps, whys) if why])


def script_of(command: str, scripts: dict[str, str]) -> tuple[str, str]:
    """The manager and the script a test command runs (`npm test --ignore-scripts` -> npm and the `test`
    script); a command that runs no single package script is itself the script."""
    words = _words(command)
    manager = words[0] if words and words[0] in ("npm", "yarn", "pnpm") else "npm"
    if len(words) >= 2 and words[:2] in (["npm", "test"], ["npm", "t"], ["yarn", "test"], ["pnpm", "test"]):
        return manager, scripts.get("test", command)
    if split_chain(command) == [command.strip()] and (ref := script_ref(command)) in scripts:
        return manager, scripts[ref or ""]
    return manager, command
