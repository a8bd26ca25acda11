"""A project's own way of running its tests, read so that the plan runs the same tests: a unittest discovery
(under a wrapper such as `coverage run` too) as pytest arguments, and a runner script's subcommands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from autoinstall.ecosystems.repofiles import RepoFiles, kind_of

UNITTEST_DEFAULT_PATTERN = "test*.py"
_DISCOVER_VALUE = {"-s": "start", "--start-directory": "start", "-p": "pattern", "--pattern": "pattern",
                   "-t": "top", "--top-level-directory": "top", "-k": None, "--durations": None}
"""unittest discover's options that take a value (None: a value this adaptation does not carry over)."""


def _unittest_words(command: str) -> list[str] | None:
    """The arguments after `-m unittest` (whatever runs it: python, coverage run, python -m coverage run)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i + 1] == "unittest":
            rest = words[i + 2:]
            return rest[:next((j for j, w in enumerate(rest) if w in ("&&", "||", ";", "|")), len(rest))]
    return None


def discover(command: str, repo: Path) -> tuple[str, str] | None:
    """The start folder and file pattern of a unittest discovery (unittest's default `test*.py` when it names
    none); None when `command` is not one (a list of test modules, or no `-m unittest` at all) or its start
    folder is not one of the checkout's."""
    words = _unittest_words(command)
    if words is None or (words and words[0] != "discover" and not words[0].startswith("-")):
        return None
    found: dict[str, str] = {}
    positional: list[str] = []
    rest = words[1:] if words and words[0] == "discover" else words
    i = 0
    while i < len(rest):
        word = rest[i]
        option, _, inline = word.partition("=")
        if option in _DISCOVER_VALUE:
            value = inline or (rest[i + 1] if i + 1 < len(rest) else "")
            if (key := _DISCOVER_VALUE[option]) is not None:
                found[key] = value
            i += 1 if inline else 2
            continue
        if not word.startswith("-"):
            positional.append(word)
        i += 1
    for key, value in zip(("start", "pattern", "top"), positional, strict=False):
        found.setdefault(key, value)
    start = found.get("start", ".").rstrip("/").removeprefix("./") or "."
    if "{" in start or "$" in start or kind_of(repo, repo / start) != "dir":
        return None
    return start, found.get("pattern") or UNITTEST_DEFAULT_PATTERN


TEST_SUBCOMMANDS = ("test", "tests", "unittest", "unittests", "unit", "pytest", "run-tests", "run_tests", "testall",
                    "test-all", "test_all", "alltests", "all-tests")
"""Subcommand names of a runner script that run the suite, preferred first."""
_SUBCOMMAND = re.compile(
    r"""add_parser\(\s*['"](?P<argparse>[\w-]+)['"]"""
    r"""|@[\w.]*command\(\s*(?:name\s*=\s*)?['"](?P<named>[\w-]+)['"]"""
    r"""|@[\w.]*command\([^)'"]*\)\s*\n(?:\s*@.*\n)*\s*def\s+(?P<click>\w+)"""
    r"""|(?:argv\[1\]|\b(?:command|cmd|action|task|subcommand)\b)\s*==\s*['"](?P<argv>[\w-]+)['"]"""
    r"""|^\s*['"](?P<table>[\w-]+)['"]\s*:\s*(?:run_|do_|cmd_)?\w+\s*,?\s*$""", re.MULTILINE)
"""Where a script declares its subcommands: argparse subparsers, click/typer commands, `argv[1] == "x"`
dispatch, and a table of names to functions."""


def script_subcommands(repo: Path, script: str) -> list[str]:
    """The subcommands a runner script declares, in order (empty when it has none, or cannot be read)."""
    text = RepoFiles(repo).text(script)
    if not text:
        return []
    names = []
    for match in _SUBCOMMAND.finditer(text[:200_000]):
        name = next(v for v in match.groupdict().values() if v)
        names.append(name.replace("_", "-") if match.group("click") else name)
    return list(dict.fromkeys(names))


def with_test_subcommand(command: str, script: str, subcommands: list[str]) -> tuple[str | None, str]:
    """`command` running the script's test subcommand, and a note saying what changed ("" when nothing did).

    Returns (None, why) when the script has subcommands and none runs tests: it is not the test command."""
    if not subcommands:
        return command, ""
    try:
        words = shlex.split(command)
    except ValueError:
        return command, ""
    at = next((i for i, w in enumerate(words) if w.endswith(script)), None)
    if at is None:
        return command, ""
    given = next((i for i in range(at + 1, len(words)) if not words[i].startswith("-")), None)
    name = words[given] if given is not None else None
    if name in TEST_SUBCOMMANDS and (name in subcommands or not any(s in TEST_SUBCOMMANDS for s in subcommands)):
        return command, ""
    wanted = next((s for s in TEST_SUBCOMMANDS if s in subcommands), None)
    if wanted is None:
        return None, (f"`{command}` runs {script}'s {f'subcommand `{name}`' if name else 'default'}, and none of its "
                      f"subcommands ({', '.join(subcommands[:8])}) runs tests: not the test command")
    if name is not None and name in subcommands:
        words[given] = wanted  # type: ignore[index]
    else:
        words.insert(at + 1, wanted)
    new = shlex.join(words)
    what = f"its subcommand `{name}`" if name in subcommands else "no subcommand"
    return new, f"`{command}` gives {script} {what}, which runs no tests; its `{wanted}` subcommand does: `{new}`"
