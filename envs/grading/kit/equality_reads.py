"""Whether an equality's body reads the other side (blind_equality.py finds the bodies): once the forms that
name it without reading its value are taken out, the other side, or a name bound from it, must still be named.

Taken out (DISCARDS, `ITSELF`, UNREAD, `SHORTCUT`), each with what a refusal says of the other side:

- dropped: `let _ = other;`, Go's `_ = o`, `drop(other)`, a Rust statement `other;`;
- compared with itself: `o == o`, `o.equals(o)`;
- checked against null: `o == null`, `null != o`, `Objects.isNull(o)`, a statement `Objects.requireNonNull(o);`,
  Go's `o != nil`;
- tested for its type: `o instanceof Foo`, `o.getClass()`, `Foo.class.isInstance(o)`, Go's `reflect.TypeOf(o)`,
  `_, ok := o.(Foo)` and `switch o.(type)`, Rust's `matches!(other, _)`, `match other { _ => ...`,
  `other.type_id()`;
- compared with `this` (Go's receiver, Rust's `self` by `ptr::eq`) in an identity shortcut, one that only
  answers "equal": `if (this == o) return true;`, `this == o || ...` (`return o == this;` alone reads it).

A name bound from the other side is the other side (BOUND, TESTS_THAT_BIND): `Foo that = (Foo) o;`, Java 16's
`o instanceof Foo that` and a record pattern's components, Go's `that, ok := o.(Foo)`, `that := o.(*Foo)`,
`switch t := o.(type)`, Rust's `let Self(x) = other;`. Whatever else names it reads it: a member access
(`that.x`), an argument (`Objects.equals(a, that.a)`, `compareTo(o)`), an operand compared with something else
(`self.0 == *other`, `return o == this;`), a match on it. A Rust `eq` must read `self` too. In the forms below,
`OTHER` stands for any of the names. Stdlib only.
"""
from __future__ import annotations

import re

DISCARDS = re.compile(r"\blet\s+_\w*\s*(?::[^=;]*)?=[^;]*;|\b(?:std::mem::|mem::)?drop\s*\([^;]*\)\s*;?|"
                      r"(?<![\w.!=<>])_\s*=(?![=>])[^;\n]*|\(\s*void\s*\)\s*\w+\s*;")
"""Statements that only name a value to drop it (`let _ = other;`, Go's `_ = o`, `drop(other)`, `(void) o;`);
not a match arm's `_ =>`."""
_ARGS = r"(?:\s*<(?:[^<>;{}()]|<[^<>;{}()]*>)*>)?"
_TYPE = rf"[\w.$]+{_ARGS}(?:\s*\.\s*[\w$]+{_ARGS})*(?:\s*\[\s*\])*"
"""A Java type as a cast or `instanceof` names it: `Foo`, `a.Foo<?>`, `Map<K, List<V>>`, `Outer<?>.Inner`,
`int[]`."""
_CAST = rf"(?:\(\s*(?:final\s+)?{_TYPE}\s*\)\s*)*"
_STATEMENT = r"(?:^|(?<=[;{}]))\s*"
"""Where a statement starts: the body's start or after `;`, `{` or `}`."""
_GO_STATEMENT = r"(?:^|(?<=[;{\n])|(?<=\bif\s)|(?<=\bvar\s))\s*"
BOUND = {
    "java": rf"\b(\w+)\s*=\s*{_CAST}(?:OTHER|[\w.$]+\s*\.\s*class\s*\.\s*cast\s*\(\s*OTHER\s*\))\s*;",
    "go": rf"{_GO_STATEMENT}(?!_\b)(\w+)\s*(?:,\s*\w+\s*)?:?=\s*[&*]*OTHER"
          r"(?:\s*\.\s*\(\s*\*?[\w.]+(?:\[[^\]]*\])?\s*\))?\s*(?=[;\n}])",
    "rust": r"\blet\s+(?:mut\s+)?([^=;]+?)\s*=\s*[&*\s]*OTHER\s*;",
}
"""A statement binding a name (group 1; a Rust pattern's lower-case names) to the other side: the name is the
other side from there on, and the statement is taken out."""
TESTS_THAT_BIND = {"java": rf"\bOTHER\s+instanceof\s+(?:final\s+)?{_TYPE}\s+(\w+)",
                   "go": r"\bswitch\s+(\w+)\s*:=\s*OTHER\s*\.\s*\(\s*type\s*\)"}
"""A type test binding a name to the other side (`o instanceof Foo that`): the test stays, taken out as one."""
_RECORD = rf"\bOTHER\s+instanceof\s+(?:final\s+)?{_TYPE}\s*\("
_RUST_KEYWORDS = frozenset(("ref", "mut", "_", "box"))
_IRREFUTABLE = r"(?:Self|ref|mut|[_\s&|.,(){}\[\]])*"
"""A Rust pattern any value of the type matches: `_`, `&_`, `Self { .. }`, `Self(..)`."""
ITSELF = (r"(?:[*&]\s*)*OTHER\s*(?:==|!=)\s*(?:[*&]\s*)*OTHER|"
          r"OTHER\s*\.\s*(?:equals|eq|ne|cmp|partial_cmp|Equal)\s*\(\s*&?\s*OTHER\s*\)")
_NULL = r"OTHER\s*[!=]=\s*NULL\b|\bNULL\s*[!=]=\s*OTHER"
UNREAD = {
    "java": (("checked against null", _NULL.replace("NULL", "null") + "|"
              r"\b(?:java\.util\.)?Objects\s*\.\s*(?:isNull|nonNull)\s*\(\s*OTHER\s*\)|"
              rf"{_STATEMENT}(?:java\.util\.)?Objects\s*\.\s*requireNonNull\s*\(\s*OTHER\s*(?:,[^;]*)?\)\s*;"),
             ("tested for its type", rf"OTHER\s+instanceof\s+(?:final\s+)?{_TYPE}(?:\s+\w+)?|"
              r"OTHER\s*\.\s*getClass\s*\(\s*\)|\.\s*isInstance\s*\(\s*OTHER\s*\)")),
    "go": (("checked against nil", _NULL.replace("NULL", "nil")),
           ("tested for its type", r"\breflect\s*\.\s*TypeOf\s*\(\s*OTHER\s*\)|"
            r"\bswitch\s+(?:\w+\s*:=\s*)?OTHER\s*\.\s*\(\s*type\s*\)|"
            r"(?<![\w.])_\s*,\s*\w+\s*:?=\s*OTHER\s*\.\s*\([^()]*\)")),
    "rust": (("dropped", rf"{_STATEMENT}[&*(\s]*OTHER[)\s]*;"),
             ("tested for its type", rf"\bmatches!\s*\(\s*[&*]*OTHER\s*,\s*{_IRREFUTABLE}\)|"
              r"(?<=\bmatch)\s+[&*(]*OTHER\)*\s*(?=\{\s*_\s*=>)|OTHER\s*\.\s*type_id\s*\(\s*\)")),
}
"""Per language, (what a refusal says of the other side, forms naming it that do not read its value)."""
SHORTCUT = (r"\bif\s*\(?\s*\(?\s*(?:IDENT)\s*\)?\s*\)?\s*(?:\{\s*return\s+true\s*;?\s*\}|return\s+true\s*;)|"
            r"\(?\s*(?:IDENT)\s*\)?\s*\|\|")
"""An identity test that can only answer "equal": `if (this == o) return true;`, `this == o || ...`."""
_IDENT = {"java": r"this\s*==\s*OTHER|OTHER\s*==\s*this", "go": r"THIS\s*==\s*OTHER|OTHER\s*==\s*THIS",
          "rust": r"(?:(?:std|core)\s*::\s*)?ptr\s*::\s*eq\s*\(\s*self\s*,\s*OTHER\s*\)"}


def unread(language: str, other: str, this: str, body: str) -> str | None:
    """What `body` answers without looking at ("what it is compared with: o is only checked against null"),
    else None; `this` names the receiver (`this`, Go's receiver, `self`)."""
    said: list = []
    body = _drop(DISCARDS, body, _any(language, [other]), said, "dropped")
    names, body = _bound(language, other, body)
    for what, form in (("compared with itself", ITSELF), *_unread_forms(language, this)):
        body = _drop(re.compile(form.replace("OTHER", _any(language, names))), body, _any(language, names), said,
                     what)
    if not re.search(_any(language, names), body):
        return "what it is compared with: " + _phrase(other, names[1:], said)
    if language == "rust" and not re.search(r"\bself\b", body):
        return f"self, the value {other} is compared with"
    return None


def _unread_forms(language: str, this: str) -> list:
    """(what, form) of each form naming the other side in `language` without reading it."""
    forms = list(UNREAD[language])
    if this:
        ident = _IDENT[language].replace("THIS", re.escape(this))
        forms.append((f"compared with {this} in an identity shortcut", SHORTCUT.replace("IDENT", ident)))
    return forms


def _bound(language: str, other: str, body: str) -> tuple:
    """([other, the names bound from it...], the body without the statements that bind them)."""
    names, i = [other], 0
    while i < len(names):
        n = _any(language, [names[i]])
        for form in (BOUND[language], TESTS_THAT_BIND.get(language)):
            for match in re.finditer((form or "(?!)").replace("OTHER", n), body):
                names += [a for a in _bound_names(language, match.group(1)) if a not in names]
        body = re.sub(BOUND[language].replace("OTHER", n), " ", body)
        if language == "java":
            body = _record_pattern(n, body, names)
        i += 1
    return names, body


def _bound_names(language: str, bound: str) -> list:
    """The names a binding gives: a Rust pattern's lower-case names (`Self(x)`, `R { a, b: c }`), else its one."""
    if language != "rust":
        return [] if bound == "_" else [bound]
    return [w for w in re.findall(r"(?<![\w:'])[a-z_]\w*", bound) if w not in _RUST_KEYWORDS]


def _record_pattern(n: str, body: str, names: list) -> str:
    """The body without `o instanceof Point(int x, var y)`, its components' names added to `names`."""
    pattern = re.compile(_RECORD.replace("OTHER", n))
    match = pattern.search(body)
    while match:
        end = _close(body, match.end())
        names += [a for a in re.findall(r"(\w+)\s*(?=[,)])", body[match.end():end]) if a not in names]
        body = body[:match.start()] + " " + body[end:]
        match = pattern.search(body)
    return body


def _close(text: str, pos: int) -> int:
    """After the `)` that closes the parenthesis open before `pos` (the end of the text if none does)."""
    depth = 1
    while pos < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[pos], 0)
        pos += 1
    return pos


def _drop(form: re.Pattern, body: str, named: str, said: list, what: str) -> str:
    """The body without `form`'s matches; `what` added to `said` when one matched `named`."""
    def one(match: re.Match) -> str:
        if re.search(named, match.group(0)) and what not in said:
            said.append(what)
        return " "
    return form.sub(one, body)


def _any(language: str, names: list) -> str:
    """A regular expression matching any of `names` as a whole name: a Java name may hold `$`, while a Rust
    macro's `$other` names `other`."""
    edge = r"[\w$]" if language == "java" else r"\w"
    return rf"(?<!{edge})(?:" + "|".join(re.escape(n) for n in names) + rf")(?!{edge})"


def _phrase(other: str, aliases: list, said: list) -> str:
    """What a refusal says of the other side: "o (or that, bound from it) is only checked against null"."""
    who = f"{other} (or {', '.join(aliases)}, bound from it)" if aliases else other
    if not said:
        return f"{who} is never read" if aliases else f"it never names {other}"
    what = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    return f"{who} is only {what}"
