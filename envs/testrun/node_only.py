"""Running only given Node.js test ids (the Node record's `select`, RunnerAbilities): the test script's runner is
given its own name filter, and the files that hold the ids where the ids name them.

- jest, vitest: `-t '^(?:full name|...)$'` (the deselected names left out by a lookahead in the same pattern),
  and the test files the ids name as positional arguments right after the runner's word (jest: a path
  pattern anchored at a `/`; vitest: a filter the path contains), so that no other file is even loaded;
- mocha: `--grep '^(?:full title|...)$'` (its spec reporter names no file, so every file is loaded);
- node:test: `--test-name-pattern='^(?:top-level name|...)$'`. Node 20 matches a pattern against each test's
  own name; a subtest (`t.test`) whose parent does not match never runs, and every test under a matching one
  runs (seen on Node 20.19 and 22.23; 22 also matches a name prefixed with its ancestors', and leaves the
  unmatched tests out of its output): the top-level tests holding the ids run whole, in every file (coarser
  units, as Go's `-run`);
- ava: `--match 'title'` per id (and `--match '!title'` per deselected one): ava matches a test's own title,
  ignoring case, `*` its wildcard, so a title shared by tests of other files, or differing only in case, runs
  those too (they are scored or passed over like any test the ids do not name); every file is loaded;
- tap, uvu, tape, jasmine, a script the runner cannot be given flags, or one that filters by name itself:
  the whole suite runs, and the ids are scored from its per-test results.

A name is matched as the runner's output printed it, read by the parser (envs/grading/kit/parsers/node.py),
which trims a timing suffix and splits at ` > `: a test whose real name the reading changed is matched by no
pattern, so an id must be seen to select itself before it is listed (autoinstall/tasks/make.py keeps only the
baseline ids a selecting run reports). A pattern past MAX_PATTERN characters (one argument) is not given: the
files alone narrow the run (jest, vitest), or the whole suite runs.

The selection travels in the command as `export AUTOINSTALL_NODE_SELECT=FILE; COMMAND` (`select_command`, what
`IdSelection.selecting` writes): node_runner.run reads the ids from FILE and builds the run; a shell that runs
the command as it is runs the whole suite.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from envs.base import Sandbox
from envs.grading.kit.parsers.node import SEP

SELECT_ENV = "AUTOINSTALL_NODE_SELECT"
MAX_PATTERN = 60_000
"""Characters of one name pattern at most (an argument of `sh -c` may hold 128 KiB)."""
_SELECTED = re.compile(rf"^export {SELECT_ENV}=(?P<file>'[^']*'|\S+); (?P<command>.*)$", re.DOTALL)
_REPEAT = re.compile(r" \[\d+\]$")
_FILE = re.compile(r"\.[cm]?[jt]sx?$")
_JS_SPECIAL = re.compile(r"[\\^$.*+?()[\]{}|/]")
_PATH_SPECIAL = re.compile(r"[\\^$.*+?()[\]{}|]")
OWN_FILTERS = {
    "jest": re.compile(r"(?:^|\s)(?:-t|--testNamePattern|--testPathPattern|--runTestsByPath|--findRelatedTests|"
                       r"-o|--onlyChanged|--changedSince|--listTests)(?:[\s=]|$)"),
    "vitest": re.compile(r"(?:^|\s)(?:-t|--testNamePattern|--changed|--related|related|bench|list)(?:[\s=]|$)"),
    "mocha": re.compile(r"(?:^|\s)(?:-g|--grep|-f|--fgrep|-i|--invert)(?:[\s=]|$)"),
    "node:test": re.compile(r"--test-name-pattern|--test-skip-pattern|--test-only"),
    "ava": re.compile(r"(?:^|\s)(?:-m|--match)(?:[\s=]|$)"),
}
"""A script that filters by name (or chooses files by another rule) itself: a second filter would meet its."""
_SUBCOMMANDS = {"vitest": ("run", "watch", "dev")}
"""Words after the runner's that are its subcommand: its files go after them."""


def select_command(command: str, select_file: str, folder: str) -> str:
    """`command` running only the ids listed in `select_file` (one a line), once node_runner.run reads it;
    `folder` is unused: the runner's own flags need no plug-in."""
    return f"export {SELECT_ENV}={shlex.quote(select_file)}; {command}"


def selected_ids(sandbox: Sandbox, command: str) -> tuple[list[str] | None, str]:
    """(the ids a `select_command` lists, the command it wraps); (None, command) for any other command."""
    m = _SELECTED.match(command)
    if m is None:
        return None, command
    path = shlex.split(m.group("file"))[0]
    text = sandbox.read_file(path).decode()
    return [line for line in text.splitlines() if line.strip()], m.group("command")


@dataclass
class Only:
    """How one run runs only the chosen ids."""

    flags: str = ""
    """The runner's name filter ("" for none: the files alone narrow the run)."""
    files: list[str] = field(default_factory=list)
    """Test files given as positional arguments (empty: the runner's own)."""
    left_out: set[str] = field(default_factory=set)
    """Deselected ids the name filter leaves out."""
    how: str = ""
    """What narrows the run: names, files, names and files, top-level tests."""


def js_regex(names: list[str]) -> str:
    return "(?:" + "|".join(_JS_SPECIAL.sub(lambda c: "\\" + c.group(0), n) for n in sorted(set(names))) + ")"


def _names(test_id: str) -> list[str]:
    """An id's suites and test, the file (if the id starts with one) and a repeat's ` [n]` left off."""
    parts = _REPEAT.sub("", test_id).split(SEP)
    return parts[1:] if len(parts) > 1 and _FILE.search(parts[0]) and " " not in parts[0] else parts


def ava_title(test_id: str) -> str:
    """The title ava matches: an id's last part (ava's reporter puts the file's path before it, ` › `-joined,
    when more than one file ran)."""
    return test_id.rsplit(SEP, 1)[-1]


def full_name(test_id: str) -> str:
    """The name jest, vitest and mocha match: suites and test space-joined."""
    return " ".join(_names(test_id))


def top_level(test_id: str) -> str:
    """The top-level test that holds an id (node:test's unit)."""
    return _names(test_id)[0]


def file_of(test_id: str) -> str | None:
    """The test file an id names first, if it does."""
    first = test_id.split(SEP, 1)[0]
    return first if SEP in test_id and _FILE.search(first) and " " not in first else None


def only(runner: str | None, script_text: str, ids: list[str], deselected: list[str]) -> Only | None:
    """How `runner` runs only `ids` with the deselected tests (ids it could leave out by name) left out; None
    when it cannot (the whole suite runs)."""
    own = OWN_FILTERS.get(runner or "")
    if own is None or own.search(script_text) or not ids:
        return None
    if runner == "node:test":
        tops = sorted({top_level(t) for t in ids})
        pattern = "^" + js_regex(tops) + "$"
        if len(pattern) > MAX_PATTERN:
            return None
        left_out = {t for t in deselected if top_level(t) not in tops}
        return Only(flags=f"--test-name-pattern={shlex.quote(pattern)}", left_out=left_out, how="top-level tests")
    if runner == "ava":
        titles = sorted({ava_title(t) for t in ids})
        if any(t.startswith("!") for t in titles):  # `--match '!x'` is ava's negation: it would run all but x
            return None
        chosen = set(titles)
        kept = sorted({ava_title(t) for t in deselected} - chosen)
        flags = " ".join([*(f"--match {shlex.quote(t)}" for t in titles),
                          *(f"--match {shlex.quote('!' + t)}" for t in kept if "*" not in t)])
        if len(flags) > MAX_PATTERN:
            return None
        return Only(flags=flags, left_out={t for t in deselected if ava_title(t) not in chosen}, how="names")
    names = sorted({full_name(t) for t in ids})
    chosen = set(names)
    kept_out = sorted({full_name(t) for t in deselected} - chosen)
    left_out = {t for t in deselected if full_name(t) not in chosen}
    if runner == "mocha":
        pattern = "^" + js_regex(names) + "$"
        if len(pattern) > MAX_PATTERN:
            return None
        return Only(flags=f"--grep {shlex.quote(pattern)}", left_out=left_out, how="names")
    files = [file_of(t) for t in ids]
    paths = sorted({f for f in files if f}) if all(files) else []
    exclude = f"(?!{js_regex(kept_out)}$)" if kept_out else ""
    pattern = f"^{exclude}{js_regex(names)}$"
    if len(pattern) <= MAX_PATTERN:
        return Only(flags=f"-t {shlex.quote(pattern)}", files=paths, left_out=left_out,
                    how="names and files" if paths else "names")
    if not paths:
        return None
    return Only(files=paths, how="files")


def file_arguments(runner: str | None, files: list[str]) -> str:
    """The positional arguments that run only `files`: jest's are path patterns (a regular expression
    searched in the absolute path), vitest's filters a path contains."""
    if runner == "jest":
        return " ".join(shlex.quote("(?:^|/)" + _PATH_SPECIAL.sub(lambda c: "\\" + c.group(0), f) + "$")
                        for f in files)
    return " ".join(shlex.quote(f) for f in files)


def arguments_at(runner: str | None, text: str, insert_at: int) -> int:
    """Where in the script `text` the runner's positional arguments go: right after its word (and its
    subcommand), before any option that could take them as its values; -1 when its word is not found."""
    word = re.escape(runner or "")
    found = [m for m in re.finditer(rf"(?:^|(?<=[\s/]))(?:{word})(?=\s|$)", text) if m.end() <= insert_at]
    if not found:
        return -1
    at = found[-1].end()
    for sub in _SUBCOMMANDS.get(runner or "", ()):
        if m := re.match(rf"\s+{sub}(?=\s|$)", text[at:]):
            return at + m.end()
    return at
