"""The tool calls a bench makes inside an environment, taken from that environment's own workspace, whatever
its language: a file that is there (source code the tools parse first, 4-40 kB first), read within its real
line count, a pattern that occurs in it, an edit of a scratch file that applies and is undone, and a terminal
command. `discover` picks them and plays every kind of call once, so that an environment that cannot serve
the load stops the bench before it starts, saying why, never with a tool error in the middle of a run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tools.lint import GRAMMARS

SOURCE_SUFFIXES = tuple(sorted(GRAMMARS))
"""Source files: those the tools parse (tools/lint.py), in every language they know."""
DOC_SUFFIXES = (".md", ".rst", ".txt")
BAND = (4000, 40000)
"""Bytes of the file read, bounds excluded: what a model reads, neither a stub nor a generated blob."""
PER_GROUP = 30
"""Candidates the listing gives of each kind (source, docs) and each size group (in, under, over the band)."""
TRIES = 10
"""Candidates read before the bench gives up on an environment."""
READ_SPAN, READ_SLIDE = 80, 50
"""read_file shows 80 lines from a first line that moves over the first 50 (fewer in a shorter file)."""
SEARCH_PATTERN = "def |class |import |func |fn "
SCRATCH = "bench_scratch.txt"
TERMINAL_COMMAND = "ls | head -5"
"""Two process start-ups, as most of an agent's shell commands are; every image has them."""
TOOLS = ("read_file", "search", "edit_file", "terminal")

LISTING = (
    "f=$(mktemp); {{ git ls-files 2>/dev/null | grep . || find . -type f -not -path '*/.git/*' "
    "-not -path '*/node_modules/*' | sed 's|^\\./||'; }} | head -5000 | tr '\\n' '\\0' "
    "| xargs -0 -r stat -c '%s %n' 2>/dev/null > \"$f\"; "
    "for kind in '{source}' '{docs}'; do "
    "grep -E \"$kind\" \"$f\" | awk '$1 > {low} && $1 < {high}' | head -{n}; "
    "grep -E \"$kind\" \"$f\" | awk '$1 > 0 && $1 <= {low}' | sort -n -r | head -{n}; "
    "grep -E \"$kind\" \"$f\" | awk '$1 >= {high}' | sort -n | head -{n}; done; rm -f \"$f\""
)
"""`size path` of the workspace's first 5,000 files (tracked ones when git knows them) of each kind: those in
the band in the listing's order, then the largest under it and the smallest over it. The list is kept in a
file of its own (mktemp): on a LocalSandbox /tmp is the host's, shared with other benches and test runs."""


class Result(Protocol):
    """What a tool call gives back (tools' ToolResult, the runtime's Observation)."""

    output: str
    is_error: bool
    data: dict[str, Any] | None


Call = Callable[[str, dict[str, Any]], Result]
"""One tool call by name, e.g. `Environment.step` or `lambda n, a: call_tool(session, n, a)`."""


def listing_command() -> str:
    def alternatives(suffixes: tuple[str, ...]) -> str:
        return "(" + "|".join(re.escape(s) for s in suffixes) + ")$"

    return LISTING.format(source=alternatives(SOURCE_SUFFIXES), docs=alternatives(DOC_SUFFIXES),
                          low=BAND[0], high=BAND[1], n=PER_GROUP)


@dataclass(frozen=True)
class Candidate:
    path: str
    size: int


def parse_listing(output: str) -> list[Candidate]:
    """The `size path` rows of the listing's output, in order, each path once."""
    seen: dict[str, Candidate] = {}
    for line in output.splitlines():
        m = re.fullmatch(r"(\d+) (.+)", line.strip())
        if m and m[2] not in seen:
            seen[m[2]] = Candidate(m[2], int(m[1]))
    return list(seen.values())


def ranked(files: list[Candidate]) -> list[Candidate]:
    """The files in the order a bench tries them: source code before docs; in the band (in the listing's
    order) before the largest under it and the smallest over it; empty files never."""
    def key(f: Candidate) -> tuple[int, int, int]:
        kind = 0 if f.path.lower().endswith(SOURCE_SUFFIXES) else 1
        if BAND[0] < f.size < BAND[1]:
            return kind, 0, 0
        return (kind, 1, -f.size) if f.size <= BAND[0] else (kind, 2, f.size)

    return sorted((f for f in files if f.size > 0), key=key)  # stable: the band keeps the listing's order


def read_window(k: int, lines: int) -> tuple[int, int]:
    """(start_line, end_line) of the k-th read of a file of `lines` lines: 80 lines from line 1 + k % 50 (from
    1 + k % lines in a file of fewer than 50 lines, so the first line is always in the file)."""
    start = 1 + k % max(1, min(READ_SLIDE, lines))
    return start, start + READ_SPAN - 1


def pattern_for(text: str, preferred: str) -> str | None:
    """`preferred` when it occurs in the text, else a word of the text (an identifier of 3+ characters, the
    most frequent); None when the text has none."""
    if re.search(preferred, text):
        return preferred
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", text)
    return max(words, key=words.count) if words else None


@dataclass(frozen=True)
class Mix:
    """One environment's calls: read_file, search, edit_file, terminal, round and round."""

    path: str
    lines: int
    """Lines of the file the server reports (at least; a read stops at 2,000 lines or 100 KB)."""
    pattern: str
    command: str = TERMINAL_COMMAND

    def call(self, k: int, value: int) -> tuple[str, dict[str, Any]]:
        """The k-th call, the scratch file holding `value = {value}`."""
        start, end = read_window(k, self.lines)
        calls = [("read_file", {"path": self.path, "start_line": start, "end_line": end}),
                 ("search", {"pattern": self.pattern, "path": self.path}),
                 ("edit_file", {"path": SCRATCH, "old_str": f"value = {value}", "new_str": f"value = {1 - value}"}),
                 ("terminal", {"command": self.command})]
        return calls[k % len(calls)]


SCRATCH_ARGS = {"path": SCRATCH, "content": "value = 0\n", "overwrite": True}


def _text(read_output: str) -> str:
    """The lines of a read_file answer without their `cat -n` numbers."""
    return "\n".join(m[1] for m in re.finditer(r"(?m)^\s*\d+\t(.*)$", read_output))


def _choose(call: Call, files: list[Candidate], preferred: str) -> Mix | None:
    for f in files[:TRIES]:
        read = call("read_file", {"path": f.path})
        data = read.data or {}
        if read.is_error or data.get("kind") != "text" or not data.get("last_line"):
            continue
        pattern = pattern_for(_text(read.output), preferred)
        if pattern is not None:
            return Mix(f.path, int(data["last_line"]), pattern)
    return None


def _check(call: Call, name: str, args: dict[str, Any], env: str) -> None:
    r = call(name, args)
    failed = r.is_error or (name == "terminal" and (r.data or {}).get("exit_code") != 0) \
        or (name == "search" and not (r.data or {}).get("total"))
    if failed:
        msg = (f"{env} cannot serve the bench's load: {name} {args} gave {r.output[:300]!r}; pick another "
               "environment (--env ID)" + (" or --terminal-command" if name == "terminal" else ""))
        raise SystemExit(msg)


def discover(call: Call, env: str, *, pattern: str = SEARCH_PATTERN, command: str = TERMINAL_COMMAND) -> Mix:
    """The mix for the environment `call` reaches, every kind of call played once (the scratch file is left
    holding `value = 0`). SystemExit saying what to do when the workspace has no readable text file, or a
    call of the mix fails there."""
    listing = call("terminal", {"command": listing_command()})
    mix = None if listing.is_error else _choose(call, ranked(parse_listing(listing.output)), pattern)
    if listing.is_error:
        raise SystemExit(f"{env} cannot serve the bench's load: listing its workspace failed: "
                         f"{listing.output.strip()[:300]}; check the environment's tool server or pick another (--env ID)")
    if mix is None:
        kinds = ", ".join(SOURCE_SUFFIXES + DOC_SUFFIXES)
        msg = (f"{env} cannot serve the bench's load: no readable, non-empty text file with a word in it ({kinds}) "
               f"among its workspace's first {TRIES} candidates; pick another environment (--env ID)")
        raise SystemExit(msg)
    mix = Mix(mix.path, mix.lines, mix.pattern, command)
    last_line = ("read_file", {"path": mix.path, "start_line": mix.lines})  # no read of the mix starts further
    for name, args in (("create_file", SCRATCH_ARGS), mix.call(0, 0), last_line, mix.call(1, 0),
                       mix.call(2, 0), mix.call(2, 1), mix.call(3, 0)):  # the edit made, then undone
        _check(call, name, args, env)
    return mix
