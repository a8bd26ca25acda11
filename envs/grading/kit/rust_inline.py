"""Rust's tests inside source files: the items under a `#[cfg(test)]` (or `#[test]`) attribute, found by a
small lexer that skips comments, strings, raw strings and char literals, so the grader can keep the agent's
change to the code around them while the test items stay the task's."""
from __future__ import annotations

import re

_CFG_TEST = re.compile(r"^cfg\s*\((?P<body>.*)\)\s*$", re.S)
_NOT_TEST = re.compile(r"not\s*\(\s*test\s*\)")
_TEST_ATTR = re.compile(r"^(?:[\w:]+::)?test\s*(?:\(.*\))?\s*$", re.S)
_WHOLE_FILE = re.compile(r"#!\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")


def _skip_string(text: str, i: int) -> int:
    """Index after the string literal starting at i (at `"`, or at r/b/br prefixes)."""
    j = i
    while j < len(text) and text[j] in "br":
        j += 1
    if text[i:j].endswith("r"):  # raw: r#*"..."#*
        hashes = 0
        while j < len(text) and text[j] == "#":
            hashes += 1
            j += 1
        end = text.find('"' + "#" * hashes, j + 1)
        return len(text) if end < 0 else end + 1 + hashes
    j += 1  # past the opening quote
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return len(text)


def _skip_quote(text: str, i: int) -> int:
    """Index after a char literal at i, or after the `'` of a lifetime."""
    if text[i + 1:i + 2] == "\\":
        end = text.find("'", i + 2)
        while end > 0 and text[end - 1] == "\\" and text[end - 2] != "\\":
            end = text.find("'", end + 1)
        return len(text) if end < 0 else end + 1
    if text[i + 2:i + 3] == "'":
        return i + 3
    return i + 1


def _code_positions(text: str):
    """(index, char) of every character that is code: not inside a comment, string or char literal."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            continue
        if c == '"' or (c in "br" and re.match(r'(?:b?r#*"|b")', text[i:i + 4]) and
                        (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            i = _skip_string(text, i)
            continue
        if c == "'":
            i = _skip_quote(text, i)
            continue
        yield i, c
        i += 1


def _is_test_attribute(body: str) -> bool:
    body = body.strip()
    cfg = _CFG_TEST.match(body)
    if cfg:
        inner = _NOT_TEST.sub("", cfg.group("body"))
        return bool(re.search(r"\btest\b", inner))
    return bool(_TEST_ATTR.match(body))


def test_items(text: str) -> list:
    """(start, end) spans of the items a test attribute introduces, outermost only, in order."""
    code = list(_code_positions(text))
    spans: list = []
    k = 0
    while k < len(code):
        i, c = code[k]
        if c == "#" and k + 1 < len(code) and code[k + 1][1] == "[":
            depth, m = 0, k + 1
            while m < len(code):
                ch = code[m][1]
                depth += ch == "["
                depth -= ch == "]"
                if depth == 0:
                    break
                m += 1
            if m >= len(code):
                break
            body = text[code[k + 1][0] + 1:code[m][0]]
            if _is_test_attribute(body):
                end = _item_end(code, m + 1)
                spans.append((i, code[end][0] + 1 if end < len(code) else len(text)))
                while k < len(code) and code[k][0] < spans[-1][1]:
                    k += 1
                continue
            k = m + 1
            continue
        k += 1
    return spans


def _item_end(code: list, k: int) -> int:
    """Index in `code` of the `;` or the closing `}` that ends the item starting at code[k]."""
    parens = 0
    while k < len(code):
        c = code[k][1]
        if c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif c == ";" and parens == 0:
            return k
        elif c == "{" and parens == 0:
            depth = 0
            while k < len(code):
                depth += code[k][1] == "{"
                depth -= code[k][1] == "}"
                if depth == 0:
                    return k
                k += 1
            return k
        k += 1
    return k


def whole_file_is_tests(text: str) -> bool:
    """`#![cfg(test)]`: the file itself is a test module."""
    return bool(_WHOLE_FILE.search(text))


def keep_tests(start: str, agent: str) -> tuple:
    """The agent's text with its test items replaced by the start's, in order (when both have as many) or
    the start's appended at the end (when the agent added or removed some); and whether anything changed."""
    theirs, ours = test_items(agent), test_items(start)
    items = [start[a:b] for a, b in ours]
    if [agent[a:b] for a, b in theirs] == items:
        return agent, False
    if len(theirs) == len(ours):
        out, last = [], 0
        for (a, b), item in zip(theirs, items):
            out += [agent[last:a], item]
            last = b
        return "".join(out) + agent[last:], True
    out, last = [], 0
    for a, b in theirs:
        out.append(agent[last:a])
        last = b
    text = "".join(out) + agent[last:]
    if items:
        text = text.rstrip("\n") + "\n\n" + "\n\n".join(items) + "\n"
    return text, True
