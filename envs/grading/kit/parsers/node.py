"""Per-test results from what Node.js test runners print: TAP (node:test, node-tap, tape) and the marked
lines of the spec-like reporters (mocha's spec, jest --verbose, vitest's verbose, node:test's spec, ava),
ids `file > suite > test` as far as the output names them."""
from __future__ import annotations

import re

from dataclasses import replace

from .node_details import with_messages
from .results import Result, without_prefix, without_suffix

SEP = " > "
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAP_LINE = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok \d+(?: - |\s+)?(?P<name>.*?)"
                       r"(?:\s+#\s*(?P<directive>SKIP|TODO|skip|todo)\b.*)?$")
_TIME = re.compile(r"\s*#\s*time=\S+$|\s+\(\d+(?:\.\d+)?\s*m?s\)$|\s+\d+(?:\.\d+)?\s*m?s$|\s+\[\w+\]$")
_MARK = re.compile(r"^(?P<indent>\s*)(?P<mark>[✓✔√]|[✕✖×✗✘]|\d+\)|○|↓|﹣|-|✎)\s+(?P<name>\S.*)$")
_PASSED, _FAILED = set("✓✔√"), set("✕✖×✗✘")
_NOT_SUITES = ("at ", "Error", "{", "[", "#", "> ", "ℹ", "→")
"""Plain lines that are never a suite's name: stack frames, errors, data, comments, npm's script banner,
node:test's summary, vitest's failure reasons."""
_PROGRESS = re.compile(r"^[•✘✓✔✖·.\s]*(?:\(\d+ / \d+\))?$")
_FILE_HEADER = re.compile(r"^\s*(?:PASS|FAIL)\s+(?P<file>\S+)")
_VITEST_FILE = re.compile(r"^\s*[✓❯×↓]\s+(?P<file>\S+\.[cm]?[jt]sx?)\s+\(\d+ tests?\b")
"""vitest's line per file (` ❯ src/a.spec.ts (101 tests | 15 failed) 36654ms`): its tests' lines name
their suites themselves (`suite > test`), so no plain line is a suite after one."""
_JEST_BLOCK = re.compile(r"^\s*(?:● \S|console\.[a-z]+$)")
"""The head of a block jest prints beside its listing: a failure's details (`  ● suite › test`, then the
diff, the code frame and the stack) after a file's tests, or a test's console output (`  console.log`, then
what it printed) before its file's header. Every line of the block is indented deeper than its head: none of
them names a test (a diff's `- Expected` or a printed `✓ done` would read as one). Only in output with jest's
`PASS file`/`FAIL file` headers: mocha's suite may be named `console.log`."""
MAX_SUITES = 32
"""Suites an id names at most: no runner's listing nests deeper, while an output indented one more space a
line would make each id hold every line above it (ids of megabytes, and the square of the output in copying)."""
_END_OF_LISTING = re.compile(r"^\s*\d+ passing \(|^\s*✖ failing tests:|^\s*Summary of all failing tests|"
                             r"^\s*⎯+ Failed Tests|^\s*Failures:\s*$")


def clean(output: str) -> str:
    return _ANSI.sub("", output).replace("\r\n", "\n")


def _name(text: str) -> str:
    return _TIME.sub("", without_prefix(text.strip(), "▶ ")).strip()


def _tap_message(lines: list[str], start: int, indent: int) -> str:
    """The YAML block (`---` ... `...`) under a `not ok` line, if any."""
    if start >= len(lines) or lines[start].strip() != "---":
        return ""
    body = []
    for line in lines[start + 1:start + 200]:
        if line.strip() == "...":
            break
        body.append(line[indent + 2:] if len(line) > indent + 2 else line.strip())
    return "\n".join(body)[-2000:]


def parse_tap(output: str) -> list:
    """Leaf tests of (nested) TAP: a result line whose deeper result lines came just before it is their
    suite, so they are named under it; a failing suite none of whose tests failed is one error itself."""
    lines = clean(output).splitlines()
    buffers: dict = {}
    for number, line in enumerate(lines):
        m = _TAP_LINE.match(line)
        if not m or line.lstrip().startswith("#"):
            continue
        indent = len(m.group("indent").expandtabs(4))
        name = _name(m.group("name")) or f"test {number}"
        directive = (m.group("directive") or "").upper()
        outcome: str = "skipped" if directive else "failed" if m.group("not") else "passed"
        children = [r for deeper in sorted(k for k in buffers if k > indent) for r in buffers.pop(deeper)]
        mine = buffers.setdefault(indent, [])
        for child in children:
            mine.append(replace(child, test_id=f"{name}{SEP}{child.test_id}"))
        if not children or (outcome == "failed" and not any(c.outcome in ("failed", "error") for c in children)):
            kind: str = "error" if children else outcome
            message = _tap_message(lines, number + 1, indent) if outcome == "failed" else ""
            mine.append(Result(name, kind, 0.0, message))
    return [r for level in sorted(buffers) for r in buffers[level]]


def parse_marks(output: str) -> list:
    """Tests from lines that start with a pass/fail/skip mark, named under the plain lines (suites) above
    them at a lesser indentation, and under the file a `PASS file`/`FAIL file` header names (jest); jest's
    failure details and console output are passed over (_JEST_BLOCK)."""
    results: list = []
    stack: list[tuple[int, str]] = []
    root, vitest = "", False
    block: int | None = None  # the indentation of the jest block (_JEST_BLOCK) being passed over
    lines = clean(output).splitlines()
    jest = any(_FILE_HEADER.match(line) for line in lines)
    for line in lines:
        if _END_OF_LISTING.match(line):
            break
        if not line.strip():
            continue
        if header := _FILE_HEADER.match(line) or _VITEST_FILE.match(line):
            root, stack, block = header.group("file"), [], None
            vitest = vitest or header.re is _VITEST_FILE
            continue
        indent = len(line) - len(line.lstrip())
        if block is not None and indent > block:
            continue
        block = indent if jest and _JEST_BLOCK.match(line) else None
        if block is not None:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        m = _MARK.match(line)
        if m is None:
            if (not vitest and len(stack) < MAX_SUITES and len(line.strip()) < 200
                    and not line.strip().startswith(_NOT_SUITES)):
                stack.append((indent, _name(line)))
            continue
        mark, name = m.group("mark"), _name(m.group("name"))
        if _PROGRESS.match(name):
            continue  # uvu's progress line (`✘ ✘ •   (1 / 3)`), no test's name
        if mark == "-" and (not stack or name.startswith("-")):
            continue  # a list item in ordinary output, not mocha's pending test
        outcome: str = ("passed" if mark in _PASSED else "failed" if mark in _FAILED or mark.endswith(")")
                            else "skipped")
        name = re.sub(r"^\[(?:fail|skip|todo)\]:\s*", "", without_suffix(without_suffix(name, " # SKIP"), " # TODO"))
        if mark in "○✎":  # jest's `○ skipped name` and `✎ todo name`
            name = re.sub(r"^(?:skipped|todo) ", "", name)
        parts = [root] if root and not name.startswith(root) else []
        parts += [s for _, s in stack] + [name.replace(" › ", SEP)]
        results.append(Result(SEP.join(p for p in parts if p), outcome))
    return with_messages(lines, _closing_suites_removed(results))


def _closing_suites_removed(results: list) -> list:
    """node:test's spec reporter closes a suite with a marked line of its own name after its tests: drop a
    result whose id prefixes the tests just before it (their outcome already counts)."""
    out: list = []
    for result in results:
        if out and out[-1].test_id.startswith(result.test_id + SEP):
            continue
        out.append(result)
    return out


def unique(results: list) -> list:
    """Ids made unique (a repeated name gets ` [2]`, ` [3]`...) so every result keeps its own outcome."""
    seen: dict[str, int] = {}
    out = []
    for result in results:
        seen[result.test_id] = seen.get(result.test_id, 0) + 1
        n = seen[result.test_id]
        out.append(result if n == 1 else replace(result, test_id=f"{result.test_id} [{n}]"))
    return out


_DEAD = re.compile(r"failureType: '?testCodeFailure'?,?[ \t]*\n?(?:[^\n]*\n){0,3}?[^\n]*?"
                   r"\b(?:exitCode: (?P<code>[1-9]\d*)|signal: '?(?P<signal>SIG\w+))")
"""node:test's failure of a test file's own process (in TAP's YAML or the spec reporter's error): it ended
with a non-zero status or a signal, though none of its tests said it failed."""


def dead_processes(output: str) -> list[str]:
    """How each test process the runner reports as ended abnormally ended (`exit 1`, `SIGKILL`): node:test
    runs each file in a child and fails the file when the child's status is not 0. What such a process
    reported before it ended is not trusted: the product's code ran in it, and may have written the runner's
    protocol for tests that never ran before ending it."""
    return [f"exit {m.group('code')}" if m.group("code") else m.group("signal")
            for m in _DEAD.finditer(clean(output))]


def looks_like_tap(output: str) -> bool:
    return bool(re.search(r"^TAP version \d+|^\s*(?:not )?ok 1\b", clean(output), re.M))


_SUMMARIES = [
    ("passed", re.compile(r"^\s*(\d+) passing\b|^[#ℹ] pass(?:ed)?\s+(\d+)|^\s*Passed:\s+(\d+)|"
                          r"^\s*(\d+) tests? passed", re.M)),
    ("failed", re.compile(r"^\s*(\d+) failing\b|^[#ℹ] fail(?:ed)?\s+(\d+)|^\s*(\d+) tests? failed", re.M)),
    ("skipped", re.compile(r"^\s*(\d+) pending\b|^[#ℹ] skip(?:ped)?\s+(\d+)|^\s*Skipped:\s+(\d+)|"
                           r"^\s*(\d+) tests? skipped", re.M)),
]
_TESTS_LINE = re.compile(r"^\s*Tests:?\s+(.*)$", re.M)
"""jest's `Tests:       1 failed, 3 passed, 4 total` and vitest's ` Tests  2 failed | 10 passed (12)`."""
_UVU_TOTAL = re.compile(r"^\s*Total:\s+(\d+)", re.M)
_JASMINE = re.compile(r"^(\d+) specs?, (\d+) failures?(?:, (\d+) pending specs?)?", re.M)


def parse_node_summary(output: str) -> dict[str, int]:
    """Counts from the last summary line the runner printed (mocha, jest, vitest, uvu, ava, TAP comments)."""
    text = clean(output)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if lines := _TESTS_LINE.findall(text):
        for n, word in re.findall(r"(\d+) (passed|failed|skipped|todo|pending)", lines[-1]):
            counts[{"todo": "skipped", "pending": "skipped"}.get(word, word)] += int(n)
        return counts
    if jasmine := _JASMINE.findall(text):
        specs, failures, pending = (int(v or 0) for v in jasmine[-1])
        return dict(counts, passed=specs - failures - pending, failed=failures, skipped=pending)
    for key, pattern in _SUMMARIES:
        found = [next(g for g in m if g) for m in pattern.findall(text)]
        counts[key] = int(found[-1]) if found else 0
    if (total := _UVU_TOTAL.findall(text)) and not _SUMMARIES[1][1].search(text):
        counts["failed"] = max(0, int(total[-1]) - counts["passed"] - counts["skipped"])
    return counts


def parse_node_output(output: str) -> list:
    """Per-test results: TAP when the output is TAP, else the marked lines of a spec-like reporter."""
    results = parse_tap(output) if looks_like_tap(output) else []
    return unique(results or parse_marks(output))
