"""What each failed test printed, from the failure details the spec-like reporters print after their listing:
the message the install loop reads its evidence in (a test that needs the internet, a service, a browser build
no source here has). Outcomes and ids come from the listing (node.py); this only adds messages, and fixes
ava's failed ids, whose listing line runs the failure's summary on after the title.

- jest:   `  ● suite › test` then the block, to the next `●` or the summary (`Test Suites:`);
- mocha:  `  1) suite` then the title's lines (the last ends in `:`), then the block, to the next `N) `;
- vitest: ` FAIL  file > suite > test` then the block, to the `⎯` line;
- ava:    after its `─` line, `  title` (with `file › ` when several files ran), then the block, to the next
          title or `─`.
"""
from __future__ import annotations

import re
from dataclasses import replace

SEP = " > "
MESSAGE_CAP = 2000
TITLE_CAP = 1000
_JEST = re.compile(r"^\s*● (?P<title>\S.*)$")
_MOCHA = re.compile(r"^(?P<indent>\s*)\d+\) (?P<title>\S.*)$")
_VITEST = re.compile(r"^\s*FAIL\s+(?P<title>\S.* > .+)$")
_END = re.compile(r"^\s*(?:─+|⎯+.*|Test Suites:.*|Tests:.*|\d+ tests? failed|\d+ passing \(.*|\d+ failing)\s*$")
"""A line that closes every block: a separator, or a runner's closing summary."""
_AVA_FAIL = re.compile(r"^\s*✘ \[fail\]: ")


def _title(text: str) -> str:
    return SEP.join(part.strip() for part in text.strip().split(" › "))


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(title, the lines after it) for each failure block of jest, mocha or vitest."""
    found: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _JEST.match(line) or _VITEST.match(line)
        title = _title(m.group("title")) if m else ""
        if not m and (mocha := _MOCHA.match(line)) and not line.rstrip().endswith(("passing", "failing")):
            parts, j = [mocha.group("title").strip()], i + 1
            while j < len(lines) and j - i < 6 and not parts[-1].endswith(":"):
                parts.append(lines[j].strip())
                j += 1
            if parts[-1].endswith(":"):
                title, i = SEP.join(p.rstrip(":") for p in parts if p), j - 1
        if title:
            body: list[str] = []
            for nxt in lines[i + 1:i + 200]:
                if _END.match(nxt) or _JEST.match(nxt) or _VITEST.match(nxt) or _MOCHA.match(nxt):
                    break
                body.append(nxt.strip())
            found.append((title, body))
        i += 1
    return found


def _prefixes(name: str) -> list[str]:
    """`name` and each part of it that ends before a space: the titles an ava listing name may start with
    (none for a name past TITLE_CAP characters: no title is that long, and its prefixes would fill memory)."""
    if len(name) > TITLE_CAP:
        return [name]
    return [name, *(name[:i] for i, c in enumerate(name) if c == " ")]


def _ava_blocks(lines: list[str], failed: list[str]) -> list[tuple[str, list[str]]]:
    """ava's blocks: after the first `─`, a line that is exactly a failed test's title (or a prefix of its
    listing name, which runs the summary on) starts one. Linear in the output: a title is looked up, never
    compared with every failed name."""
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"─"})
    except StopIteration:
        return []
    wanted = {prefix for name in failed for prefix in _prefixes(name)}
    titles = {i: text for i in range(start + 1, len(lines)) if (text := _title(lines[i])) and text in wanted}
    found = []
    for i, title in titles.items():
        body = []
        for j in range(i + 1, min(len(lines), i + 200)):
            if j in titles or _END.match(lines[j]):
                break
            body.append(lines[j].strip())
        found.append((title, body))
    return found


def _best(test_id: str, blocks: dict[str, list[str]], ava: bool) -> tuple[str, list[str]] | None:
    """The block of `test_id`: its own title, or (jest) a tail of its parts; for ava, whose listing runs the
    summary on after the title, else the longest title the id starts with."""
    parts = test_id.split(SEP)
    for k in range(len(parts)):
        if (title := SEP.join(parts[k:])) in blocks:
            return title, blocks[title]
    if not ava:
        return None
    for prefix in _prefixes(test_id)[1:][::-1]:
        if prefix in blocks:
            return prefix, blocks[prefix]
    return None


def with_messages(lines: list[str], results: list) -> list:
    """`results` with each failed test's block as its message (ava's failed ids cut back to the title)."""
    failed = [r.test_id for r in results if r.outcome == "failed" and not r.message]
    if not failed:
        return results
    ava = any(_AVA_FAIL.match(line) for line in lines)
    blocks: dict[str, list[str]] = {}
    for title, body in _ava_blocks(lines, failed) if ava else _blocks(lines):
        blocks.setdefault(title, body)  # the first block of a title (a repeated title: the first's details)
    if not blocks:
        return results
    out = []
    for r in results:
        if r.outcome != "failed" or r.message:
            out.append(r)
            continue
        match = _best(r.test_id, blocks, ava)
        if match is None:
            out.append(r)
            continue
        title, body = match
        test_id = title if ava and r.test_id.startswith(title + " ") else r.test_id
        out.append(replace(r, test_id=test_id, message="\n".join(body).strip()[:MESSAGE_CAP]))
    return out
