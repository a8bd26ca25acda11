"""Leaving Node.js tests out for real: the test script's runner is found in package.json and given its own
flags, and deselected test files are moved aside for the run.

- jest, vitest: `-t '^(?!(?:full name|...)$)'` (a test's full name: its suites' and its own, space-joined;
  the runner skips it and says so);
- mocha: `--grep '^(?:full title|...)$' --invert`; node-tap the same for a file's top-level subtests (its
  --grep reaches no deeper in one pattern);
- ava: `--match '!title'` per test (its titles are unique within a file; the match ignores case, and a title
  with a `*`, ava's wildcard, is not filtered: it runs, recorded as skipped);
- node:test, uvu, tape, jasmine (and node-tap's nested subtests): no way to leave one test out that
  every version honours (Node 20 runs a suite's every subtest when the suite's own name matches a pattern):
  those tests still run and are recorded as skipped, saying so;
- a whole file (an id that is a file of the checkout), for every runner: renamed to `<file>.autoinstall-
  deselected` for the run (no runner's default glob matches it) and renamed back after; unless the command
  names it (the runner would fail on a missing file): then it runs, recorded as skipped.

Flags go where the runner reads them: appended to its part of the script (`mocha test/ && eslint .` gets
them after `test/`), or right after `--test` for node:test; the script then runs directly with
node_modules/.bin on PATH, as npm runs it (no pre/post hooks, as `--ignore-scripts`). A script the runner
cannot be found in (another program, yarn's Plug'n'Play) is left as it is. Running only given ids (`only`, the
same flags and the files that hold the ids): node_only.py.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from envs.base import Sandbox
from envs.spec import Deselection
from envs.testrun import node_only
from envs.testrun.node_only import ava_title, full_name, js_regex
from envs.testrun.node_output import SEP

ENV = {"CI": "true", "npm_config_update_notifier": "false"}
"""Run mode, not watch mode (jest, vitest), and no update check against the registry. Colour is left alone
(colour libraries test their own output; NO_COLOR would fail them): clean() strips the codes."""
HIDDEN_SUFFIX = ".autoinstall-deselected"
NAME_FILTERS = frozenset({"jest", "vitest", "mocha", "tap", "ava"})
"""Runners that can leave one test out by its name (node-tap: a file's top-level subtests only)."""
NEVER = r"^\b\B$"
"""A name pattern no test matches: jest, vitest and node:test then report every test as skipped, run none."""
_BINS = {"jest": "jest", "vitest": "vitest", "mocha": "mocha", "_mocha": "mocha", "tap": "tap", "ava": "ava",
         "uvu": "uvu", "tape": "tape", "jasmine": "jasmine"}
_SCRIPT_COMMAND = re.compile(r"^\s*(?P<manager>npm|pnpm|yarn)\s+(?:run(?:-script)?\s+)?(?P<name>[\w:.-]+)"
                             r"(?P<rest>(?:\s.*)?)$")
_SEGMENT_END = re.compile(r"&&|\|\||;|\||$")
_FILE = re.compile(r"\.[cm]?[jt]sx?$")
_REPEAT = re.compile(r" \[\d+\]$")


@dataclass
class TestScript:
    """The test script a command runs, and where its runner's flags go."""

    text: str
    """The script (or the command itself when it is not a package script)."""
    extra: str = ""
    """Arguments the command passes on (`npm test -- --verbose`): appended to the script, as npm does."""
    runner: str | None = None
    """jest, vitest, mocha, node:test, tap, ...; None when no known runner is in the script."""
    insert_at: int = -1
    """Where in `text` the runner's flags go (-1: nowhere, the script cannot be given flags)."""


@dataclass
class Selection:
    """How one run leaves the deselected tests out."""

    command: str
    runner: str | None = None
    hidden: list[str] = field(default_factory=list)
    """Deselected files moved aside for the run."""
    left_out: set[str] = field(default_factory=set)
    """Deselected ids the runner itself leaves out (by name, or their file is hidden)."""
    flagged: bool = False
    """The runner was given flags (the script runs directly)."""
    only: str = ""
    """What narrows the run to the chosen ids (node_only.Only.how); "": nothing (every test runs)."""

    @property
    def restore(self) -> str:
        return "; ".join(f"mv -f -- {shlex.quote(f + HIDDEN_SUFFIX)} {shlex.quote(f)}" for f in self.hidden)


def _scripts(sandbox: Sandbox) -> dict[str, str]:
    result = sandbox.exec("cat package.json", timeout=60)
    try:
        scripts = json.loads(result.stdout).get("scripts") if result.ok else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


def find_runner(text: str) -> tuple[str | None, int]:
    """The first known runner in a shell command line, and where its flags go (after node's `--test`, else at
    the end of the runner's own part of the line, before `&&`, `;` or a pipe)."""
    start = 0
    for end_match in _SEGMENT_END.finditer(text):
        segment = text[start:end_match.start()]
        words = [(m.group(0), m.end()) for m in re.finditer(r"\S+", segment)]
        names = [w.rsplit("/", 1)[-1].strip("'\"") for w, _ in words]
        if "--test" in names and any(n in ("node", "tsx") for n in names[:names.index("--test")]):
            return "node:test", start + words[names.index("--test")][1]
        if found := next((_BINS[n] for n in names if n in _BINS), None):
            return found, start + len(segment.rstrip())
        start = end_match.end()
        if start >= len(text):
            break
    return None, -1


def _resolve(command: str, scripts: dict[str, str], depth: int = 0) -> TestScript:
    m = _SCRIPT_COMMAND.match(command)
    if m is None:
        return TestScript(command, "", *find_runner(command))
    name = {"t": "test", "tst": "test"}.get(m.group("name"), m.group("name"))
    text = scripts.get(name)
    if text is None:
        return TestScript(command)
    words = m.group("rest").split()
    if m.group("manager") == "npm":  # npm's own flags before `--`, the script's after it
        words = words[words.index("--") + 1:] if "--" in words else []
    extra = " ".join(w for w in words if w != "--")
    runner, at = find_runner(text)
    if runner is None and depth < 3 and _SCRIPT_COMMAND.match(text) and not re.search(r"[;&|]", text):
        inner = _resolve(text, scripts, depth + 1)  # `"test": "npm run test:unit"`: that script's runner
        if inner.runner:
            return TestScript(inner.text, " ".join(e for e in (inner.extra, extra) if e), inner.runner,
                              inner.insert_at)
    return TestScript(text, extra, runner, at)


def test_script(sandbox: Sandbox, command: str) -> TestScript:
    """The script `command` runs (`npm test`, `yarn run test`, `pnpm test`..., and the script one that is just
    another script's call names), read from package.json, or the command itself; yarn's Plug'n'Play (no
    node_modules/.bin) cannot run a script directly."""
    script = _resolve(command, _scripts(sandbox) if _SCRIPT_COMMAND.match(command) else {})
    if command.lstrip().startswith("yarn") and sandbox.exec("test -e .pnp.cjs", timeout=30).ok:
        script.insert_at = -1
    return script


def filterable(runner: str | None, test_id: str) -> bool:
    """Whether `runner`'s name filter can leave this test out: node-tap's reaches only a file's top-level
    subtests (`file > name`)."""
    if runner == "tap":
        parts = _REPEAT.sub("", test_id).split(SEP)
        return len(parts) == 2 and bool(_FILE.search(parts[0]))
    if runner == "ava":
        return "*" not in ava_title(test_id) and not _REPEAT.search(test_id)
    return runner in NAME_FILTERS



def name_flags(runner: str | None, names: list[str]) -> str:
    """The runner's flags that leave out tests with these full names ("" when it has none)."""
    if not names or runner not in NAME_FILTERS:
        return ""
    if runner in ("mocha", "tap"):
        return f"--grep {shlex.quote('^' + js_regex(names) + '$')} --invert"
    if runner == "ava":
        return " ".join(f"--match {shlex.quote('!' + name)}" for name in dict.fromkeys(names))
    return f"-t {shlex.quote('^(?!' + js_regex(names) + '$)')}"


def with_flags(script: TestScript, flags: str, arguments: str = "") -> str | None:
    """A command running `script` with `flags` given to its runner (and positional `arguments` right after its
    word); None when it cannot take them."""
    if script.insert_at < 0:
        return None
    text = f"{script.text[:script.insert_at]} {flags}{script.text[script.insert_at:]}" if flags else script.text
    if arguments:
        at = node_only.arguments_at(script.runner, text, script.insert_at)
        if at < 0:
            return None
        text = f"{text[:at]} {arguments}{text[at:]}"
    if script.extra:
        text = f"{text} {script.extra}"
    return f'PATH="$PWD/node_modules/.bin:$PATH" sh -c {shlex.quote(text)}'


def existing_files(sandbox: Sandbox, candidates: list[str]) -> list[str]:
    if not candidates:
        return []
    quoted = " ".join(shlex.quote(c) for c in candidates)
    result = sandbox.exec(f'for f in {quoted}; do [ -f "$f" ] && printf "%s\\n" "$f"; done', timeout=60)
    found = set(result.stdout.splitlines())
    return [c for c in candidates if c in found]


def select(sandbox: Sandbox, command: str, deselected: list[Deselection], flags: str = "",
           by_name: bool = True, only: list[str] | None = None) -> Selection:
    """How to run `command` with `deselected` left out: files hidden, tests by the runner's name filter
    (unless not `by_name`), `flags` given to the runner too (a collection's); with `only`, just those ids
    where the runner can (node_only.py), else every test; nothing deselected, no flags, no `only`: the
    command as it is."""
    if not deselected and not flags and only is None:
        return Selection(command)
    script = test_script(sandbox, command)
    ids = [d.test for d in deselected]
    named_files = f"{script.text} {script.extra}".split()  # a file the command names must stay: the runner
    hidden = existing_files(sandbox, [t for t in ids if SEP not in t and _FILE.search(t)  # would fail on it
                                      and t not in named_files and f"./{t}" not in named_files])
    tests = [t for t in ids if t not in hidden and filterable(script.runner, t)]
    chosen = node_only.only(script.runner, script.text, only, [t for t in ids if t not in hidden]) \
        if only is not None and script.insert_at >= 0 else None
    arguments = node_only.file_arguments(script.runner, chosen.files) if chosen else ""
    if chosen and chosen.flags:
        named, left_out = chosen.flags, set(hidden) | chosen.left_out
    else:
        names = [ava_title(t) if script.runner == "ava" else full_name(t) for t in tests]
        named = name_flags(script.runner, names) if by_name else ""
        left_out = set(hidden) | (set(tests) if named else set())
    wanted = " ".join(f for f in (named, flags) if f)
    run = with_flags(script, wanted, arguments) if wanted or arguments else None
    if run is None and arguments:  # the files cannot be placed: names alone
        run, arguments = with_flags(script, wanted) if wanted else None, ""
    if run is None:
        left_out = set(hidden)
    selection = Selection(run or command, script.runner, hidden, left_out, flagged=run is not None,
                          only=_how(chosen, bool(chosen and chosen.flags), bool(arguments)) if run else "")
    if hidden:
        moves = " && ".join(f"mv -f -- {shlex.quote(f)} {shlex.quote(f + HIDDEN_SUFFIX)}" for f in hidden)
        selection.command = f"{moves} && {{ {selection.command}; }}"
    return selection


def _how(chosen: node_only.Only | None, names: bool, files: bool) -> str:
    """What narrowed the run to the chosen ids (names: the runner's name filter is the selection's)."""
    if chosen is None:
        return ""
    if names and chosen.how == "top-level tests":
        return chosen.how
    return " and ".join(w for w, on in (("names", names), ("files", files)) if on)
