"""The "always equal" check of the grader's guard in a graded Python run (envs/testrun/guard_plugin.py, which
imports this beside it as autoinstall_guard_comparisons in the run's first process): a comparison (`__eq__`,
`__ne__`) the agent's files define that says yes to an object it cannot know of passes every `assert result == x`.
Each is asked at its use about values near the one it was given, and at the runner's end as a stranger and as an
instance of its own class; one the start's copy already held line for line is left alone.

Stdlib only; run by the test user. PYTEST_DONT_REWRITE: the guard's, not a test module.
"""
import os
import re

from autoinstall_guard import MARK, START_DIR, TAKEN, _agents, _refuse, _state  # the guard, loaded first

BLIND = {"__eq__": True, "__ne__": False}
"""What an "always equal" object answers an object it cannot know of: it passes every `assert result == x`."""


def _says_blindly(cls, function, answer):
    """Whether the comparison answers `answer` to an object it cannot know of (a stranger, or a value of a
    builtin type drawn at random: one equal to every int passes `assert result == 5` while a stranger finds it
    unequal), asked as an object of a class made here and as an instance of `cls` no `__init__` prepared."""
    class _Self:
        pass

    selves = [_Self()]
    try:
        selves.append(cls.__new__(cls))
    except Exception:  # noqa: BLE001 - a class whose objects need arguments to exist: asked as a stranger's
        pass
    values = [_near(v) for v in (None, 0, 0.0, 0j, "", b"", (), [], {}, frozenset(), False)]
    return any(_answers(function, me, other, answer) for me in selves for other in values)


def _start_had(name, function, start):
    """The start's copy of the file already defines a class of that name holding this very comparison, line for
    line (not the agent's doing: a sentinel the project has always had). A class the start had whose
    comparison the agent rewrote, or took from another class, is the agent's."""
    import dis  # the comparison's last line, at the runner's end only

    code = function.__code__
    try:
        with open(start, encoding="utf-8", errors="replace") as f:
            had = f.read().splitlines()
        with open(os.path.join(START_DIR, code.co_filename), encoding="utf-8", errors="replace") as f:
            now = f.read().splitlines()
    except OSError:
        return False
    last = max([line for _, line in dis.findlinestarts(code) if line] or [code.co_firstlineno])
    text = [line.strip() for line in now[code.co_firstlineno - 1:last]]
    return any(_holds([line.strip() for line in body], text) for body in _class_bodies(had, name))


def _class_bodies(lines, name):
    """The lines of each class of that name: its statement's line to the next line indented no deeper."""
    head = re.compile(rf"^(\s*)class\s+{re.escape(name)}\b")
    for i, line in enumerate(lines):
        found = head.match(line)
        if not found:
            continue
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip()) > len(found.group(1))):
            end += 1
        yield lines[i:end]


def _holds(lines, text):
    return any(lines[i:i + len(text)] == text for i in range(len(lines) - len(text) + 1))


def blind_comparisons():
    """Comparisons defined in the agent's files, in classes alive now, that answer without looking."""
    import gc  # the guard's own use (its get_objects is not the agent's)

    found = []
    alive = [o for o in gc.get_objects() if isinstance(o, type)]
    for cls in dict.fromkeys([*_made, *alive]):
        for name, answer in BLIND.items():
            function = getattr(vars(cls).get(name), "__wrapped__", vars(cls).get(name))
            code = getattr(function, "__code__", None)
            if code is None or not _agents(code.co_filename):
                continue
            start = TAKEN.get(os.path.normpath(os.path.join(START_DIR, code.co_filename)), "")
            if _says_blindly(cls, function, answer) and not _start_had(cls.__name__, function, start):
                found.append(f"{cls.__qualname__}.{name} ({code.co_filename}:{code.co_firstlineno}) answers "
                             f"{answer} to an object it cannot know")
    return found


_made = []
"""Classes the agent's files made with a class statement (kept: one made in a function and dropped is checked)."""


def recording(build_class):
    def build(func, name, *bases, **kwargs):
        cls = build_class(func, name, *bases, **kwargs)
        code = getattr(func, "__code__", None)
        if code is not None and _agents(code.co_filename):
            _made.append(cls)
            _watch(cls)
        return cls

    return build


def _watch(cls):
    """Each comparison of the agent's in `cls`, asked again at every use about values near the one it was given:
    one that says "equal" to those too is blind, whatever state its objects hold (unlike the runner's end)."""
    for name, answer in BLIND.items():
        function = vars(cls).get(name)
        code = getattr(function, "__code__", None)
        if code is not None and _agents(code.co_filename):
            try:
                setattr(cls, name, _watched(cls, name, function, answer))
            except (AttributeError, TypeError):  # a metaclass that refuses: the runner's end still asks
                pass


def _watched(cls, name, function, answer):
    def compare(self, other):
        probing = getattr(_state, "probing", False)
        before = not probing and _answers(function, self, _near(other), answer)
        said = function(self, other)
        if probing or said is NotImplemented or bool(said) is not answer:
            return said
        if before or _answers(function, self, _near(other), answer):
            code = function.__code__
            start = TAKEN.get(os.path.normpath(os.path.join(START_DIR, code.co_filename)), "")
            if not _start_had(cls.__name__, function, start):
                _refuse(f"{cls.__qualname__}.{name} ({code.co_filename}:{code.co_firstlineno}) answers {answer} "
                        f"to a value it was not given")
        return said

    compare.__wrapped__ = function
    return compare


def _answers(function, me, other, answer):
    """Whether `function(me, other)` answers `answer` (asked as the guard: no watch inside it)."""
    _state.probing = True
    try:
        said = function(me, other)
        return said is not NotImplemented and bool(said) is answer
    except Exception:  # noqa: BLE001 - a comparison that fails on a value is not blind to it
        return False
    finally:
        _state.probing = False


def _near(value):
    """A value of the same builtin type as `value` that differs from it (a random step away), else a stranger."""
    import random  # the guard's own use

    draw = random.SystemRandom()
    step = draw.randrange(1, 10)
    word = "".join(draw.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(step))
    kind = type(value)
    if kind is bool:
        return not value
    if kind in (int, float, complex):
        return value + step
    if kind in (str, bytes):
        return value + (word if kind is str else word.encode())
    if kind in (list, tuple):
        return value + kind([step])
    if kind in (set, frozenset):
        return value | {word}
    if kind is dict:
        return {**value, word: step}

    class _Stranger:
        pass

    return _Stranger()


def report_blind_comparisons():
    for what in blind_comparisons():
        os.write(2, f"{MARK} {what}\n".encode("utf-8", "replace"))
