"""What a failing test shows a user, read from its source and its failure message: the call it checks, what
that call should give, what it gave, or the error it should raise. The issue and terse statements
(prose.py) are written from these, in every language: the assertion forms of pytest/unittest, Go, Rust's
assert macros, JUnit and the JavaScript runners are read by their shape, not by the language.
"""
from __future__ import annotations

import re

from pydantic import BaseModel, Field

from autoinstall.tasks.codeindex import CodeIndex, Function

MAX_VALUE = 60
_ASSERT_EQ = re.compile(r"\b(?:self\.|assert\.|t\.|Assert\.|Assertions\.)?(?:assert_?[Ee]quals?|assert_eq!|"
                        r"strictEqual|deepStrictEqual|deepEqual|equal|assertSame|is)\s*\((?P<args>.*)\)\s*;?\s*$")
_ASSERT_NE = re.compile(r"\b(?:self\.)?(?:assertNotEqual|assert_ne!|notStrictEqual|notEqual)\s*\(")
_EXPECT = re.compile(r"\bexpect\((?P<call>.+?)\)\.(?:to\.)?(?:toBe|toEqual|toStrictEqual|equal|eql|be\.equal)"
                     r"\((?P<expected>.*)\)\s*;?\s*$")
_PY = {name: re.compile(pattern) for name, pattern in (
    ("eq", r"^\s*assert\s+(?P<left>.+?)\s*==\s*(?P<right>.+?)$"),
    ("not", r"^\s*assert\s+not\s+(?P<call>.+?)$"),
    ("true", r"^\s*assert\s+(?P<call>[^=!<>]+?)$"))}
"""Python's bare `assert` statements."""
_TRUE = re.compile(r"\b(?:self\.)?(?:assertTrue|assert_true|assert\.ok|assert!|assert)\s*\((?P<call>.*)\)\s*;?\s*$")
_FALSE = re.compile(r"\b(?:self\.)?(?:assertFalse|assert_false)\s*\((?P<call>.*)\)\s*;?\s*$")
_RAISES = re.compile(r"\b(?:pytest\.raises|assertRaises|assertThrows|assert_raises)\s*\(\s*(?P<error>[\w.]+)")
_GO_IF = re.compile(r"^\s*if\s+(?:(?:\w+(?:,\s*\w+)*)\s*:=\s*(?P<init>.+?);\s*)?(?P<left>.+?)\s*!=\s*(?P<right>.+?)\s*\{")
_CALL = re.compile(r"[A-Za-z_][\w.]*\s*\(")
_POINTER = re.compile(r"^>\s+(?P<line>\S.*)$", re.MULTILINE)
_WHERE = re.compile(r"where (?P<actual>.+?) = (?P<call>[A-Za-z_][\w.]*\(.*\))\s*$", re.MULTILINE)
_GOT_WANT = re.compile(r"(?P<call>[A-Za-z_][\w.]*\([^()]*\)) = (?P<actual>.+?), want (?P<expected>.+?)$",
                       re.MULTILINE)
"""Go's convention: `Parse("x") = 1, want 2`."""
_MESSAGES = (
    (re.compile(r"^(?:AssertionError: )?assert (?P<actual>.+?) == (?P<expected>.+?)$", re.MULTILINE), False),
    (re.compile(r"expected:? ?<(?P<expected>.+?)> but was:? ?<(?P<actual>.+?)>"), False),
    (re.compile(r"\bgot:? (?P<actual>.+?),? want:? (?P<expected>.+?)$", re.MULTILINE | re.IGNORECASE), False),
    (re.compile(r"= (?P<actual>.+?), want (?P<expected>.+?)$", re.MULTILINE), False),
    (re.compile(r"left:\s*(?P<actual>.+?)\n\s*right:\s*(?P<expected>.+?)$", re.MULTILINE), False),
    (re.compile(r"Expected:\s*(?P<expected>.+?)\n\s*Received:\s*(?P<actual>.+?)$", re.MULTILINE), False),
    (re.compile(r"^(?P<actual>.+?) !== (?P<expected>.+?)$", re.MULTILINE), False),
)
_NOT_RAISED = re.compile(r"DID NOT RAISE <class '(?:[\w.]+\.)?(?P<error>\w+)'>|(?P<error2>\w+) not raised|"
                         r"[Ee]xpected (?P<error3>\w+) to be thrown")


class Symptom(BaseModel):
    """What one failing test shows: `call` should give `expected` (or raise `raises`) and gave `actual`."""

    call: str = ""
    expected: str = ""
    actual: str = ""
    raises: str = ""
    apis: list[str] = Field(default_factory=list)
    """The library's functions the call names (short names), for titles."""
    words: str = ""
    """The test's name as words (test_clamp_high -> clamp high): what is left when nothing else is known."""


def symptom(test_id: str, message: str, index: CodeIndex | None, reaching: set[str] | None = None) -> Symptom:
    """The symptom of one failing test; `reaching`: short names of the functions that lead to the change
    (an assertion calling one of them is preferred)."""
    test = index.test_function(test_id) if index else None
    words = _words(test.label or test.short if test else test_id)
    found, fallback = None, None
    lines = _assertion_lines(message, test, reaching or set())
    if not _POINTER.search(message) and (where := _from_where(message)):
        lines, found = [], where
    for line, following in lines:
        parsed = _parse_assertion(line, following)
        if parsed is not None and parsed.call:
            found = parsed
            break
        fallback = fallback or parsed
    found = (found or fallback or Symptom()).model_copy(update={"words": words})
    raised = _NOT_RAISED.search(message)
    if raised and not found.raises:
        found.raises = next(g for g in raised.groups() if g)
    _from_message(found, message)
    library = {f.short for f in index.functions if not f.test} if index else set()
    found.apis = [name for name in _called(found.call) if not library or name in library][:3]
    return found


def _assertion_lines(message: str, test: Function | None, reaching: set[str]) -> list[tuple[str, str]]:
    """Candidate assertion lines with the line after each, best first: the one the runner pointed at, then
    the test's own lines that call a function leading to the change, then its other assertion lines."""
    pointed = [(m.group("line"), "") for m in _POINTER.finditer(message)]
    body = [line.strip() for line in (test.text.splitlines()[1:] if test else [])]
    asserting = [(line, body[i + 1] if i + 1 < len(body) else "") for i, line in enumerate(body)
                 if _is_assertion(line)]
    preferred = [pair for pair in asserting if reaching and set(_called(pair[0])) & reaching]
    return [*pointed, *preferred, *asserting]


def _from_where(message: str) -> Symptom | None:
    """pytest's `where X = call(...)` line: the call that gave the wrong value."""
    where = _WHERE.search(message)
    if where is None:
        return None
    first = message.strip().splitlines()[0] if message.strip() else ""
    expected = "false" if first.startswith("assert not ") else "true" if first.startswith("assert ") and \
        "==" not in first else ""
    return Symptom(call=where.group("call"), expected=expected)


def _is_assertion(line: str) -> bool:
    text = line.strip()
    return bool(re.match(r"(assert|self\.assert|expect\(|t\.|if .*!=.*\{|with pytest\.raises|Assert)", text)
                or "assert" in text.lower()) and not text.startswith(("#", "//", "def ", "fn "))


def _parse_assertion(line: str, following: str = "") -> Symptom | None:
    """The symptom one assertion line states; `following`: the next line (the call a `with raises` block
    makes)."""
    text = line.strip().rstrip(";")
    if _ASSERT_NE.search(text):
        return None
    if match := _RAISES.search(text):
        rest = text[match.end():]
        call = _first_call(rest.split(",", 1)[1] if "," in rest else "") or \
            (_first_call(following) if text.endswith((":", "{")) else "")
        return Symptom(call=call, raises=match.group("error").rsplit(".", 1)[-1])
    if match := _EXPECT.search(text):
        return Symptom(call=match.group("call"), expected=match.group("expected"))
    if match := _ASSERT_EQ.search(text):
        args = _split_args(match.group("args"))
        if len(args) >= 2:
            first, second = args[0], args[1]
            junit = text.startswith(("assertEquals", "Assert.", "Assertions.", "assertSame"))
            call, expected = (second, first) if junit or (_CALL.search(second) and not _CALL.search(first)) \
                else (first, second)
            return Symptom(call=call, expected=expected)
    if match := _FALSE.search(text):
        return Symptom(call=match.group("call"), expected="false")
    text = _without_message(text)
    if match := _PY["eq"].match(text):
        left, right = match.group("left"), match.group("right")
        call, expected = (right, left) if _CALL.search(right) and not _CALL.search(left) else (left, right)
        return Symptom(call=call, expected=expected)
    if match := _PY["not"].match(text):
        return Symptom(call=match.group("call"), expected="false")
    if match := _TRUE.search(text) or _PY["true"].match(text):
        call = match.group("call")
        negated = call.startswith("!")
        return Symptom(call=call.lstrip("!"), expected="false" if negated else "true")
    if match := _GO_IF.match(text):
        left, right, init = match.group("left"), match.group("right"), match.group("init") or ""
        call = left if _CALL.search(left) else init if _CALL.search(init) else ""
        return Symptom(call=call, expected=right) if call else None  # `if err != nil {` checks no result
    return None


def _without_message(text: str) -> str:
    """`assert a == (3, 8), "why"` -> `assert a == (3, 8)`: Python's assertion message (after a top-level
    comma) is no part of what is checked."""
    if not text.startswith("assert ") or "(" in text[:7]:
        return text
    return _split_args(text)[0]


def _from_message(found: Symptom, message: str) -> None:
    """The actual value (and the call, when the source gave none) from the runner's failure message."""
    where = _WHERE.search(message)
    if where and not found.call:
        found.call = where.group("call")
    if (said := _GOT_WANT.search(message)) and not found.call:
        found.call = said.group("call")
    for pattern, _ in _MESSAGES:
        if match := pattern.search(message):
            actual = match.group("actual").strip()
            if not found.expected:
                found.expected = _short(match.group("expected"))
            found.actual = _short(where.group("actual") if where else actual)
            break
    found.call, found.expected = _short(found.call, 100), _short(found.expected)
    if found.actual == found.expected:
        found.actual = ""


def _short(text: str, limit: int = MAX_VALUE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else ""


def _first_call(text: str) -> str:
    match = _CALL.search(text)
    if not match:
        return ""
    depth, end = 0, match.end() - 1
    for i in range(end, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[match.start():i + 1]
    return ""


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments."""
    out, depth, current = [], 0, []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    out.append("".join(current).strip())
    return [a for a in out if a]


def _called(text: str) -> list[str]:
    """The short names of the functions a piece of code calls, in order."""
    return list(dict.fromkeys(m.group(0).rstrip("( ").rsplit(".", 1)[-1] for m in _CALL.finditer(text)))


def _words(name: str) -> str:
    """test_clamp_high -> clamp high; TestParseURL -> parse url; the last segment of an id otherwise."""
    name = re.split(r"::|#|/| > ", name)[-1].split("[", 1)[0]
    name = re.sub(r"^(test_?|Test)", "", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ")
    return " ".join(name.lower().split())
