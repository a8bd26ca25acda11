"""Lexers no regular expression can be, for the grader's screens (spelling.py `regions`): JavaScript's, and the
string templates of the JVM languages beside Java.

What a screen must never do is take live code for a comment: a comment's text is dropped before the screens
read the code, so a lexer that opens a comment where the language does not hides what follows. Where the
language is ambiguous to a lexer that does not parse, these lexers take the side that keeps text:

- JavaScript's `/` begins a regular expression where a value can begin, decided as its parsers decide it, by
  the token before it: after an operand (a name, a number, a literal, `)`, `]`, `}`) it divides, except after
  the `)` of an `if`, `while`, `for` or `with` and the `}` that ends a block; after an operator, a keyword that
  takes a value (`return`, `typeof`, ...) or nothing, it begins a regular expression (its character classes
  read whole: `/["/*]/`);
- a template literal's `${...}` holds code, lexed as code to its own closing brace (strings, comments,
  templates and braces inside it: `` `${`/*`}` `` is one template); the whole template is one literal;
- a `<` where a value can begin starts a JSX element, read to its matching close (attributes' strings and
  `{...}` code inside it): its text is no comment (`<p>/*</p>`). A TypeScript type argument there (`<T>(x) =>`)
  is read as an element too, to the end of the file if nothing closes it: text kept, never hidden;
- a hashbang is a comment; TypeScript's non-null `x!` ends an operand (`x! / 2` divides);
- where the language itself has two grammars (`of`, `yield`, `await` are keywords or names; `<!--` and a
  line's leading `-->` begin comments in a script, CommonJS, but not a module), each READING is lexed, and the
  screens drop only what every reading takes for a comment (spelling.py `in_every_reading`);
- JVM strings (Kotlin, Groovy, Scala) hold `${...}` code the same way (`"${"/*"}"` is one string).

Anything unterminated runs to the end of the text as the literal it began, never as a comment. Stdlib only.
"""
from __future__ import annotations

import re
from typing import NamedTuple

_JS = re.compile(r"""(?P<comment>/\*[\s\S]*?\*/|//[^\n]*)"""
                 r"""|(?P<string>'(?:\\[\s\S]|[^'\\\n])*'|"(?:\\[\s\S]|[^"\\\n])*")"""
                 r"""|(?P<tick>`)|(?P<slash>/)|(?P<lt><)"""
                 r"""|(?P<word>(?:[A-Za-z_$\x80-\uffff]|\\u)(?:[\w$\x80-\uffff]|\\u\{?[0-9A-Fa-f]+\}?)*)"""
                 r"""|(?P<number>\.?\d[\w.]*)|(?P<open>[({\[])|(?P<close>[)}\]])"""
                 r"""|(?P<punct>=>|\+\+|--|\?\.|\.(?!\d)|[^\s\w])""")
_VALUE_KEYWORDS = frozenset(("return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                             "yield", "await", "instanceof", "extends"))
"""Keywords after which a value begins (a `/` there begins a regular expression)."""
CONTEXTUAL = frozenset(("of", "yield", "await"))
"""Of those, the ones that can also be names (`var of = 1; of / 2` divides): a lexer that does not parse reads
them both ways (READINGS)."""


class Reading(NamedTuple):
    """One way to read JavaScript where a lexer that does not parse cannot tell."""

    values: frozenset
    """The keywords after which a value begins."""
    html: bool
    """Whether `<!--` and a line's leading `-->` begin a comment to the line's end (a script's, CommonJS's, by
    the language's Annex B; a module's are operators)."""


READINGS = tuple(Reading(values, html) for values in (_VALUE_KEYWORDS, _VALUE_KEYWORDS - CONTEXTUAL)
                 for html in (True, False))
"""The readings of JavaScript: what not every one of them takes for a comment (or a string) is not one to the
screens (spelling.py)."""
_CONTROL = frozenset(("if", "while", "for", "with"))
"""Keywords whose parenthesised condition is followed by a statement, not an operator."""
_REGEX_BODY = re.compile(r"(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])*/[A-Za-z]*")
_JSX_START = re.compile(r"<(?:[A-Za-z_$][\w$.:-]*(?![\w$.:-]|\s*,)|>)")
"""Where a JSX element starts (not a TypeScript type parameter list: `<T,>`)."""


def js_regions(text: str, reading: Reading | None = None) -> list:
    """(kind, text) of JavaScript or TypeScript source in order: `code`, `comment`, `string`, `template`,
    `regex`, `jsx` (see the module docstring), in one of its READINGS (by default the first)."""
    regions, _ = _js(text, 0, False, reading or READINGS[0])
    return regions


def _js(text: str, pos: int, nested: bool, reading: Reading) -> tuple:
    """Lex from `pos`; `nested` (inside `${` or a JSX `{`): stop after the `}` that closes it. Returns the
    regions and the end."""
    regions: list = []
    code_from = pos
    prev = ""  # the previous significant token's text ("" at the start)
    operand = False  # whether the previous token ends a value (a `/` after it divides)
    parens: list = []  # per open `(`: whether it holds a control keyword's condition
    braces: list = []  # per open `{`: whether it opens a block
    n = len(text)

    def literal(kind: str, start: int, end: int) -> None:
        nonlocal code_from
        if start > code_from:
            regions.append(("code", text[code_from:start]))
        regions.append((kind, text[start:end]))
        code_from = end

    line_start = not nested  # only blanks (or comments that hold a line break) before it on its line
    if pos == 0 and text.startswith("#!"):  # a hashbang: a comment, in a script and a module alike
        literal("comment", 0, _line_end(text, 0))
        pos = code_from
    while pos < n:
        m = _JS.search(text, pos)
        if m is None:
            pos = n
            break
        kind, start, end = m.lastgroup, m.start(), m.end()
        word = m.group(0)
        line_start = line_start or "\n" in text[pos:start]
        if reading.html and (text.startswith("<!--", start) or line_start and text.startswith("-->", start)):
            kind, end = "comment", _line_end(text, start)
        if kind == "comment":
            literal("comment", start, end)
            line_start = line_start and text.startswith("/*", start) or "\n" in text[start:end]
            pos = end
            continue
        line_start = False
        if kind == "string":
            literal("string", start, end)
            prev, operand, pos = word, True, end
            continue
        if kind == "tick":
            end = _template_end(text, start + 1, reading)
            literal("template", start, end)
            prev, operand, pos = "`", True, end
            continue
        if kind == "slash":
            body = None if operand else _REGEX_BODY.match(text, start + 1)
            if body is not None:
                literal("regex", start, body.end())
                prev, operand, pos = "/", True, body.end()
                continue
            operand = False
        elif kind == "lt" and not operand and _JSX_START.match(text, start):
            end = _jsx_end(text, start, reading)
            literal("jsx", start, end)
            prev, operand, pos = "<>", True, end
            continue
        elif kind == "open":
            if word == "(":
                parens.append(prev in _CONTROL)
            elif word == "{":
                braces.append(_opens_block(prev))
            operand = False
        elif kind == "close":
            if word == "}" and not braces and nested:
                pos = end
                break
            if word == ")":
                operand = not (parens.pop() if parens else False)
            elif word == "}":
                operand = not (braces.pop() if braces else True)
            else:
                operand = True
        elif kind == "word":
            operand = prev in (".", "?.") or word not in reading.values
        elif kind == "number":
            operand = True
        else:  # an operator, `=>`, a `<` that compares; `++`/`--` after an operand ends it (`a++ / 2`), before
            # one begins it (`++/x/`); TypeScript's non-null `x!` ends an operand too (a `!` after one on its line
            # is nothing else)
            operand = operand and (word in ("++", "--") or word == "!" and "\n" not in text[pos:start]
                                   and not text.startswith("!=", start))
        prev, pos = word, end
    if pos > code_from:
        regions.append(("code", text[code_from:pos]))
    return regions, pos


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _opens_block(prev: str) -> bool:
    """Whether a `{` after the token `prev` opens a block (a statement's, a function's or a class's body), not
    an object: after nothing, `;`, a brace, `)`, `=>`, `:`, a name (`class A extends B {`) or a keyword that
    takes a statement (`else`, `do`, `try`, `finally`)."""
    if prev in ("", ";", "{", "}", ")", "=>", ":"):
        return True
    return bool(re.match(r"[\\\w$\x80-\uffff]", prev)) and prev not in _VALUE_KEYWORDS - {"else", "do"}


def _template_end(text: str, pos: int, reading: Reading) -> int:
    """The end of a template literal whose body starts at `pos` (after its backtick): its `${...}` lexed as
    code; the end of the text when nothing closes it."""
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "\\":
            pos += 2
        elif c == "`":
            return pos + 1
        elif text.startswith("${", pos):
            _, pos = _js(text, pos + 2, True, reading)
        else:
            pos += 1
    return n


def _jsx_end(text: str, pos: int, reading: Reading) -> int:
    """The end of the JSX element that starts at `pos` (its `<`): nested elements counted, attributes'
    strings and `{...}` code skipped; the end of the text when nothing closes it."""
    n, depth = len(text), 0
    while pos < n:
        c = text[pos]
        if c == "{":
            _, pos = _js(text, pos + 1, True, reading)
        elif text.startswith("</", pos):
            close = text.find(">", pos)
            if close < 0:
                return n
            depth, pos = depth - 1, close + 1
            if depth <= 0:
                return pos
        elif c == "<":
            pos, closed = _tag_end(text, pos + 1, reading)
            if closed and depth == 0:
                return pos
            depth += 0 if closed else 1
        else:
            pos += 1
    return n


def _tag_end(text: str, pos: int, reading: Reading) -> tuple:
    """(the end, whether it closes itself) of an opening tag whose name starts at `pos`."""
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in "\"'":
            close = text.find(c, pos + 1)
            pos = n if close < 0 else close + 1
        elif c == "{":
            _, pos = _js(text, pos + 1, True, reading)
        elif text.startswith("/>", pos):
            return pos + 2, True
        elif c == ">":
            return pos + 1, False
        else:
            pos += 1
    return n, False


def jvm_string_end(text: str, start: int, quote: str) -> int:
    """The end of a JVM string literal (`"` or `\"\"\"`) whose opening quote is at `start`: its `${...}` read
    as code (JVM `regions`) to its closing brace; the end of the text when nothing closes it."""
    n, pos = len(text), start + len(quote)
    while pos < n:
        if text.startswith(quote, pos) and (quote == '"' or not text.startswith('""""', pos)):
            return pos + len(quote)
        c = text[pos]
        if c == "\\":
            pos += 2
        elif c == "\n" and quote == '"':
            return pos  # an ordinary string ends at its line (unterminated: the rest of the line)
        elif text.startswith("${", pos):
            pos = _jvm_code_end(text, pos + 2)
        else:
            pos += 1
    return n


_QUOTED = re.compile(r"'(?:\\.|[^'\\\n])*'")
"""A single-quoted JVM literal inside a template's code (Kotlin's char, Groovy's string)."""


def _jvm_code_end(text: str, pos: int) -> int:
    """After the `}` that closes a JVM template's `${` whose code starts at `pos`, braces inside counted."""
    depth, n = 0, len(text)
    while pos < n:
        c = text[pos]
        if c == '"':
            quote = '"""' if text.startswith('"""', pos) else '"'
            pos = jvm_string_end(text, pos, quote)
        elif c == "'":
            close = _QUOTED.match(text, pos)
            pos = close.end() if close else pos + 1
        elif text.startswith("/*", pos):
            close = text.find("*/", pos + 2)
            pos = n if close < 0 else close + 2
        elif text.startswith("//", pos):
            close = text.find("\n", pos)
            pos = n if close < 0 else close
        elif c == "{":
            depth, pos = depth + 1, pos + 1
        elif c == "}":
            if depth == 0:
                return pos + 1
            depth, pos = depth - 1, pos + 1
        else:
            pos += 1
    return n


def nested_comment_end(text: str, start: int) -> int | None:
    """The end of a block comment at `start` whose `/*`...`*/` nest (Rust, Kotlin, Scala), or None when nothing
    closes it (a compile error: the caller's flat reading stands)."""
    depth, pos, n = 0, start, len(text)
    while pos < n:
        if text.startswith("/*", pos):
            depth, pos = depth + 1, pos + 2
        elif text.startswith("*/", pos):
            depth, pos = depth - 1, pos + 2
            if depth == 0:
                return pos
        else:
            pos += 1
    return None
