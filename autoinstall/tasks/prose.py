"""The issue and terse statements by the embedded model: templates over the failing tests' symptoms
(symptoms.py) and the names of the API they call.

`issue` reads like a user's report: a title, what goes wrong in prose (a call, what it should give, what it
gives), no test id, no failure output, no code of the fix. `terse` is one or two lines. The wording is chosen
by a digest of the task, so a set of tasks does not repeat one sentence, and a run always writes the same.
Sentences the leak check would refuse are left out before the statement is checked (statements.py).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable

from autoinstall.tasks.symptoms import Symptom

MAX_SYMPTOMS = 3
_OPENERS = ("I ran into this while using the library.", "After updating, some results are wrong.",
            "Something seems off here.", "This looks like a regression.")
_CLOSERS = ("This used to work as expected.", "Could you take a look?", "I have not changed my own code.",
            "It should behave as documented.")
_TERSE_TAIL = ("", " Please fix.", " Regression?", " Can someone look?")


def _pick(options: tuple[str, ...], seed: str, salt: str) -> str:
    digest = hashlib.sha256(f"{seed}\0{salt}".encode()).digest()
    return options[digest[0] % len(options)]


def _code(text: str) -> str:
    return f"`{text}`"


def _subject(symptoms: list[Symptom]) -> str:
    """The API the report is about: the first named by a symptom, else the test's words."""
    for s in symptoms:
        if s.apis:
            return _code(s.apis[0])
    return next((s.words for s in symptoms if s.words), "the library")


def sentence(s: Symptom) -> str:
    """One symptom in prose (a call the library does not define, e.g. the test's own helper, is not shown)."""
    if not s.apis and s.expected and s.actual and not s.raises:
        where = f" for {s.words}" if s.words else ""
        return f"The result{where} is {_code(s.actual)}, but it should be {_code(s.expected)}."
    if s.call and s.raises:
        return f"{_code(s.call)} should raise {_code(s.raises)}, but it does not."
    if s.call and s.expected in ("true", "false"):
        got = f" (it gives {_code(s.actual)})" if s.actual and s.actual.lower() not in ("true", "false") else ""
        return f"{_code(s.call)} should be {s.expected}, but it is not{got}."
    if s.call and s.expected and s.actual:
        return f"{_code(s.call)} gives {_code(s.actual)}, but it should give {_code(s.expected)}."
    if s.call and s.expected:
        return f"{_code(s.call)} should give {_code(s.expected)}, and it does not."
    if s.call:
        return f"{_code(s.call)} does not behave as it should."
    if s.raises:
        return f"An expected {_code(s.raises)} is not raised any more ({s.words or 'see above'})."
    return f"Something is wrong with {s.words or 'the library'}: it no longer does what it should."


def issue(symptoms: list[Symptom], seed: str, keep: Callable[[str], bool] = lambda _: True) -> str:
    """A user's report of the symptoms; `keep` drops the sentences it refuses (the leak check's)."""
    shown = symptoms[:MAX_SYMPTOMS]
    subject = _subject(shown)
    if len({tuple(s.apis[:1]) for s in shown}) == 1 and any(s.raises for s in shown):
        title = f"{subject} does not raise an error it should"
    elif len({tuple(s.apis[:1]) for s in shown}) > 1:
        names = ", ".join(dict.fromkeys(_code(s.apis[0]) for s in shown if s.apis))
        title = f"Wrong results from {names}" if names else "Several things broke"
    else:
        title = f"{subject} gives wrong results"
    lines = [sentence(s) for s in shown]
    body = [line for line in lines if keep(line)] or [s for s in (
        f"{subject} no longer behaves as it did; results I rely on are wrong.",
        "Some behaviour of the library changed and results are wrong now.") if keep(s)][:1]
    bullets = "\n".join(f"- {line}" for line in body) if len(body) > 1 else " ".join(body)
    parts = [title if keep(title) else "Wrong results", _pick(_OPENERS, seed, "open"), bullets,
             _pick(_CLOSERS, seed, "close")]
    return "\n\n".join(p for p in parts if p)


def terse(symptoms: list[Symptom], seed: str, keep: Callable[[str], bool] = lambda _: True) -> str:
    """One or two lines, as a hurried developer writes."""
    first = symptoms[0] if symptoms else Symptom()
    tail = _pick(_TERSE_TAIL, seed, "terse")
    options = []
    if not first.apis and first.expected and first.actual and not first.raises:
        options.append(f"{first.words or 'the result'}: got {first.actual}, expected {first.expected}.")
    if first.call and first.raises:
        options.append(f"{_code(first.call)} no longer raises {first.raises}.")
    if first.call and first.expected in ("true", "false"):
        options.append(f"{_code(first.call)} should be {first.expected}.")
    if first.call and first.expected and first.actual:
        options.append(f"{_code(first.call)} returns {first.actual}, should be {first.expected}.")
    if first.call:
        options.append(f"{_code(first.call)} is broken.")
    options.append(f"{_subject([first])} is broken.")
    line = next((o for o in options if keep(o)), "Something broke; results are wrong.")
    others = list(dict.fromkeys(_code(s.apis[0]) for s in symptoms[1:] if s.apis and s.apis[:1] != first.apis[:1]))
    more = f"\n{', '.join(others)} too." if others and keep(", ".join(others)) else ""
    return f"{line}{tail}{more}"
