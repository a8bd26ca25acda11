r"""Code as the grader compares it with a policy's tokens: spelled as the language's lexer reads it, then
squeezed.

A lexer accepts other spellings of a name than the one a token holds, and the screens undo them (`spelled`):

- Java (and the JVM languages beside it): `\uXXXX` escapes are decoded before the lexer runs, anywhere in the
  source (`\u0053ystem.exit`, `\uuu0052untime`, `System\u002eexit`; `// \u000a exit(0);` is code on a line
  of its own, `/* *\u002f exit(0); /* */` too), by the JLS's rule (a backslash preceded by an odd number of
  backslashes begins none); a string's octal escapes (`"/pr\157c"`) are its characters; Kotlin's and
  Scala's backticked names (`` `exit` ``) and Groovy's quoted member names (`System."exit"`) are plain;
- Rust: a raw identifier is its name (`r#exit` -> `exit`); identifiers are NFC-normalised; a string's `\x`
  and `\u{...}` escapes are its characters;
- JavaScript and TypeScript: an identifier's `\uXXXX` / `\u{...}` escapes (`pr\u006fcess`), and a string's
  (also `\xXX`, legacy octal, an escaped ordinary character, a line continuation: `'child\x5fprocess'`), are
  the characters they stand for;
- Go: identifiers have no escapes (a backslash there is no Go); a string's `\x`, `\u`, `\U` and octal
  escapes are its characters, and a raw string that holds no quote, backslash or line break is the same
  string quoted (import paths are strings);
- C (beside Go): a backslash before a line break joins the lines; a universal character name is its letter;
- Python: identifiers are NFKC-normalised (`os._ｅxit` is `os._exit`); a line continuation joins its lines.

An escape is decoded only where the character it stands for cannot end the literal or line it is in (a
quote, a backslash, a line break, a template's `$`/`{`/`}` stay escaped), so the literals stay where the
lexer has them.

`squeezed` then drops comments, whitespace (one space kept between two words) and the seams of literals
joined by + (`System . exit`, `process\n  .exit`, `sys/**/.exit` and `"org.ju" + "nit"` spell what they
do); given a language, comments are those its lexer sees (`"a//"; System . exit(0)` hides nothing), else the
C family's markers anywhere but after a colon or a quote. Stdlib only (the kit runs in task images, Python
3.9 and up); the grader's text checks (changes.py) and each language's reader (*_reach.py,
blind_equality.py) read it.
"""
from __future__ import annotations

import io
import re
import tokenize
import unicodedata

from . import scanners

COMMENT = re.compile(r"/\*.*?\*/|(?<![:'\"`\\])//[^\n]*", re.S)
SPACE = re.compile(r"\s+")
WORD_GAP = re.compile(r"(?<=[\w$])\s+(?=[\w$])")
JOINED = re.compile(r"""(['"`])\+\1|(['"`])\)\+\(\2""")

LANGUAGES = ("java", "rust", "js", "go", "c", "python")
_C_COMMENT = r"(?P<comment>/\*[\s\S]*?\*/|//[^\n]*)"
_ONE_ESCAPE = r"\\(?:u\{[0-9a-fA-F_]{1,8}\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}" \
              r"|[\s\S])"
_CHAR = rf"(?:{_ONE_ESCAPE}|[^'\\\n])"
"""One character of a character literal: itself, or one escape."""
LEXERS = {
    "java": re.compile(_C_COMMENT + r"""|(?P<string>\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\""""
                                    r"""|'''(?:\\[\s\S]|[^\\])*?'''|"(?:\\.|[^"\\\n])*\""""
                                    r"""|'(?:\\.|[^'\\\n])*')"""
                                    r"""|(?P<name>`[^`\n]+`)"""),
    "rust": re.compile(_C_COMMENT + r"""|(?P<raw>(?<![\w#])[bc]?r(?P<hashes>\#*)"[\s\S]*?"(?P=hashes))"""
                                    r"""|(?P<string>(?<![\w#])[bc]?"(?:\\[\s\S]|[^"\\])*")"""
                                    rf"""|(?P<char>(?<![\w#])b?'{_CHAR}')"""
                                    r"""|(?P<lifetime>'(?:r\#)?[A-Za-z_]\w*)"""),
    "go": re.compile(_C_COMMENT + rf"""|(?P<raw>`[^`]*`)|(?P<string>"(?:\\.|[^"\\\n])*")"""
                                  rf"""|(?P<char>'{_CHAR}')"""),
    "c": re.compile(_C_COMMENT + rf"""|(?P<string>"(?:\\.|[^"\\\n])*")|(?P<char>'{_CHAR}')"""),
}
"""Each C-family language's literals and comments, tried in this order at the first place one can start (the
code between them is `code`). Rust's `'a` is a lifetime, not a quote; a JVM string's `${...}` is code
(scanners.py). JavaScript's lexer is scanners.py's: no regular expression tells its `/`, templates or JSX."""
LEXED = (*LEXERS, "js")
_JVM_CHARS = re.compile(_C_COMMENT + r"""|(?P<string>\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\"|"(?:\\.|[^"\\\n])*\")"""
                        rf"""|(?P<char>'{_CHAR}')|(?P<name>`[^`\n]+`)""")
"""The JVM lexer where a single quote holds one character (Java, Kotlin, Scala, whose `'sym` is a symbol), not
a string as in Groovy (`'a // b'`)."""
UNSAFE = frozenset("'\"`\\${}\n\r\u2028\u2029\0")
"""Characters an escape keeps standing for: decoded, they could end the literal or the line they are in."""
_JAVA_UNICODE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9a-fA-F]{4})")
_SURROGATES = re.compile("([\ud800-\udbff])([\udc00-\udfff])")
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F_]{1,8}\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}|"
                     r"\r\n|[\s\S])")
_WORD = re.compile(r"\w+")
_NAME_ESCAPE = re.compile(r"\\u(?:\{([0-9a-fA-F]{1,8})\}|([0-9a-fA-F]{4}))|\\U([0-9a-fA-F]{8})")
"""An escape inside a name: JavaScript's `\\uXXXX` and `\\u{...}`, C's `\\uXXXX` and `\\UXXXXXXXX`."""
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def spelled(text: str, language: str) -> str:
    """The text with every name, and every string's characters, spelled the one way `language`'s lexer reads
    them (see the module docstring); `language` is one of LANGUAGES (any other: the text as it is)."""
    if language == "python":
        return _python(text)
    if language == "java":
        text = _java_unicode(text)
    if language == "c":  # C's first steps: a backslash before a line break joins the lines
        text = re.sub(r"\\\r?\n", "", text)
    if language not in LEXED:
        return text
    parts = [(kind, _DECODERS[language](kind, part)) for kind, part in regions(text, language)]
    if language == "java":  # Groovy's quoted member name (`System."exit"(0)`) is the name
        parts = [("code", part[1:-1]) if kind == "string" and i and parts[i - 1][1].rstrip().endswith(".")
                 and _NAME.fullmatch(part[1:-1]) else (kind, part) for i, (kind, part) in enumerate(parts)]
    return "".join(part for _, part in parts)


def regions(text: str, language: str, *, nested: bool | None = None, reading: int = 0, chars: bool = False,
            ) -> list:
    """(kind, text) of `text` in order: `code`, `comment`, or a literal's kind (`string`, `raw`, `char`,
    `template`, `regex`, Rust's `lifetime`, a backticked `name`), as `language`'s lexer splits it. `nested`:
    whether block comments nest (Rust's, Kotlin's and Scala's do; Java's and Groovy's do not); by default, as
    Rust and Java have them. `reading`: JavaScript's (scanners.READINGS). `chars`: a JVM single quote holds one
    character (`_JVM_CHARS`)."""
    if language == "js":
        return scanners.js_regions(text, scanners.READINGS[reading])
    nested = language == "rust" if nested is None else nested
    lexer = _JVM_CHARS if chars and language == "java" else LEXERS[language]
    found, pos = [], 0
    while pos < len(text):
        m = lexer.search(text, pos)
        if m is None:
            break
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw"
        start, end = m.start(), m.end()
        if language == "java" and kind == "string" and text[start] == '"':  # a template's ${...} is code
            end = scanners.jvm_string_end(text, start, '"""' if text.startswith('"""', start) else '"')
        elif nested and kind == "comment" and text.startswith("/*", start):
            end = scanners.nested_comment_end(text, start) or end
        if start > pos:
            found.append(("code", text[pos:start]))
        found.append((kind, text[start:end]))
        pos = end
    if pos < len(text):
        found.append(("code", text[pos:]))
    return found


def uncommented(text: str, language: str = "") -> str:
    """The text with its comments replaced by a space: those `language`'s lexer sees (not a `//` inside a
    string) in every reading (READINGS), or, without a language, the C family's markers anywhere but after a
    colon or a quote."""
    if language == "python":
        return _python(text, drop_comments=True)
    if language not in LEXED:
        return COMMENT.sub(" ", text)
    return strip(text, in_every_reading(text, language, "comment"), " ")


READINGS = {"java": ({"nested": False}, {"nested": True}, {"nested": True, "chars": True}),
            "js": tuple({"reading": i} for i in range(len(scanners.READINGS)))}
"""Where one lexer cannot tell languages apart (Java's and Groovy's flat block comments, Kotlin's and Scala's
nested ones; Groovy's single-quoted strings, Scala's `'sym`) or parses (JavaScript's `of`, `yield`, `await`:
keywords or names; its `<!--` comments: a script's, not a module's), the readings it lexes."""


def in_every_reading(text: str, language: str, kind: str) -> list:
    """Per character of `text`, whether every reading of `language` lexes it as `kind`: a comment dropped, or a
    string emptied, where only one reading has it would hide the other's code."""
    masks = []
    for options in READINGS.get(language, ({},)):
        mask: list = []
        for found, part in regions(text, language, **options):
            mask += [found == kind] * len(part)
        masks.append(mask)
    return [all(at) for at in zip(*masks)]


def strip(text: str, mask: list, put: str) -> str:
    """The text with each run of masked characters replaced by `put`."""
    out, i, n = [], 0, len(text)
    while i < n:
        if mask[i]:
            while i < n and mask[i]:
                i += 1
            out.append(put)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def squeezed(text: str, language: str = "") -> str:
    """The text without comments (see `uncommented`), whitespace (one space kept between two words), or the
    seams of literals joined by + (`"ex"+"it"` -> `"exit"`)."""
    return tight(uncommented(text, language))


def tight(text: str) -> str:
    """The text without whitespace (one space kept between two words) or the seams of literals joined by +."""
    text = SPACE.sub("", WORD_GAP.sub("\0", text)).replace("\0", " ")
    previous = None
    while previous != text:
        previous, text = text, JOINED.sub("", text)
    return text


def added_code(before: str, after: str, language: str) -> tuple:
    """(the lines of `after` that `before` does not hold, squeezed; `before` squeezed), comments being those
    the language's lexer sees in the whole file (a fragment of lines could split a literal)."""
    old, new = uncommented(before, language), uncommented(after, language)
    lines = set(old.splitlines())
    return tight("\n".join(ln for ln in new.splitlines() if ln not in lines)), tight(old)


def _char(code: int) -> str | None:
    """The character of a code point, or None (none, or a lone surrogate: not text)."""
    return chr(code) if 0 <= code < 0x110000 and not 0xD800 <= code < 0xE000 else None


def _escape_value(body: str, octal: bool, ordinary: bool) -> str | None:
    """The character one escape (what follows its backslash) stands for, or None to keep it as written:
    `\\u{...}`, `\\uXXXX`, `\\UXXXXXXXX`, `\\xXX`, octal (when `octal`), a line continuation (nothing), or the
    escaped character itself (when `ordinary`: JavaScript's `\\_` is `_`)."""
    if body in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
        return ""
    value = None
    if body[0] in "uUx" and len(body) > 1:
        value = _char(int(body[1:].strip("{}").replace("_", ""), 16))
    elif body[0] in "01234567":
        value = _char(int(body, 8)) if octal and int(body, 8) < 256 else None
    elif ordinary and body not in "bfnrtv":
        value = body
    return value if value is not None and value not in UNSAFE else None


def _literal(part: str, *, octal: bool = False, ordinary: bool = False) -> str:
    """A string literal with its escapes decoded where safe (`_escape_value`)."""
    def one(m: re.Match) -> str:
        value = _escape_value(m.group(1), octal, ordinary)
        return m.group(0) if value is None else value
    return _ESCAPE.sub(one, part)


def _java_unicode(text: str) -> str:
    """Java's first step: every `\\u+XXXX` whose backslash is preceded by an even number of backslashes is the
    character it names, whatever it is (a surrogate pair is one character; a lone surrogate stays escaped)."""
    def one(m: re.Match) -> str:
        return m.group(1) + chr(int(m.group(2), 16))
    decoded = _JAVA_UNICODE.sub(one, text)
    decoded = _SURROGATES.sub(_pair, decoded)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", decoded)


def _pair(m: re.Match) -> str:
    """The one character a high and a low surrogate make."""
    return m.group(0).encode("utf-16", "surrogatepass").decode("utf-16")


def _java(kind: str, part: str) -> str:
    if kind == "name":  # Kotlin's and Scala's `exit`
        return part[1:-1]
    return _literal(part, octal=True) if kind == "string" else part


def _rust(kind: str, part: str) -> str:
    if kind == "code":
        part = re.sub(r"(?<![\w#])r#(?=[^\W\d])", "", part)
        return _WORD.sub(lambda m: unicodedata.normalize("NFC", m.group(0)), part)
    if kind in ("string", "char"):
        return _literal(part)
    if kind == "lifetime":
        return part.replace("r#", "", 1)
    return part


def _js(kind: str, part: str) -> str:
    if kind == "code":
        return _NAME_ESCAPE.sub(_name_char, part)
    if kind == "string":
        return _literal(part, octal=True, ordinary=True)
    if kind == "template":
        return _literal(part, ordinary=True)
    return part


def _go(kind: str, part: str) -> str:
    if kind == "string":
        return _literal(part, octal=True)
    if kind == "raw" and not re.search(r'["\\\n\r]', part):
        return '"' + part[1:-1] + '"'
    return part


def _c(kind: str, part: str) -> str:
    if kind == "code":  # a universal character name in an identifier
        return _NAME_ESCAPE.sub(_name_char, part)
    return _literal(part, octal=True) if kind == "string" else part


def _name_char(m: re.Match) -> str:
    """What a `_NAME_ESCAPE` stands for, if a name can hold it, else the escape as written."""
    return _word(m.group(1) or m.group(2) or m.group(3)) or m.group(0)


def _word(hex_digits: str) -> str | None:
    """The character of a code point given in hex when it can be part of a name, else None."""
    value = _char(int(hex_digits, 16))
    return value if value is not None and (re.match(r"[\w$]", value) or value in "\u200c\u200d") else None


_DECODERS = {"java": _java, "rust": _rust, "js": _js, "go": _go, "c": _c}


def _python(text: str, *, drop_comments: bool = False) -> str:
    """Python's names NFKC-normalised and its line continuations joined (and, with `drop_comments`, its
    comments replaced by a space), as its tokenizer reads them; text it cannot tokenize gets its names
    normalised and its continuations joined by pattern, its comments kept."""
    lines = io.StringIO(text).readlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return _WORD.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), re.sub(r"\\\r?\n", " ", text))
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        return starts[row - 1] + col if row <= len(lines) else len(text)

    edits, previous = [], 0
    for tok in tokens:
        start, end = offset(*tok.start), offset(*tok.end)
        if "\\" in text[previous:start]:  # a line continuation between two tokens
            edits.append((previous, start, re.sub(r"\\\r?\n", " ", text[previous:start])))
        if tok.type == tokenize.NAME and not tok.string.isascii():
            edits.append((start, end, unicodedata.normalize("NFKC", tok.string)))
        elif tok.type == tokenize.COMMENT and drop_comments:
            edits.append((start, end, " "))
        previous = max(previous, end)
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text
