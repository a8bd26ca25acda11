"""The problem statement of a task, by the embedded model: a template over what a user would see.

History tasks: the commit's message (its subject and body, trailers and hashes dropped) and the failing
tests. Mutation tasks: the failing test names and their assertion messages. Never the fix: no line the
gold patch adds or removes, no diff, no commit hash, and for mutations no file or function name.
"""
from __future__ import annotations

import re

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.leaks import find_leaks

MAX_TESTS = 5
MAX_MESSAGE_LINES = 6
MAX_MESSAGE_CHARS = 400
_TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|change-id|cherry picked from)\b",
                      re.IGNORECASE)
_HASH = re.compile(r"\b[0-9a-f]{7,40}\b")
_SEPARATOR = re.compile(r"^[\s_=-]*$")


def problem_statement(candidate: Candidate, fail_to_pass: list[str], messages: dict[str, str]) -> str:
    """The instruction for one task (plain text, no fix in it)."""
    gold = candidate.gold_patch or candidate.bug_patch
    secret = _patch_lines(gold)
    parts = []
    if candidate.history is not None:
        message = _clean_message(candidate.history.message, secret, gold)
        if message:
            parts.append(message)
        parts.append("This change is missing from the repository, and the tests that check it fail.")
    else:
        parts.append("Some behaviour of the library is broken: tests that used to pass now fail.")
    more = len(fail_to_pass) - MAX_TESTS
    parts.append("Failing tests:\n" + "\n".join(f"- {t}" for t in fail_to_pass[:MAX_TESTS]) +
                 (f"\n- ... and {more} more" if more > 0 else ""))
    shown = [(t, _clean_output(messages.get(t, ""), secret, gold)) for t in fail_to_pass[:MAX_TESTS]]
    details = [f"{t}:\n{m}" for t, m in shown if m]
    if details:
        parts.append("What the failing tests report:\n\n" + "\n\n".join(details))
    parts.append("Fix the library code so that these tests pass without breaking the other tests; do not "
                 "change the tests.")
    return "\n\n".join(parts)


def _patch_lines(patch: str) -> set[str]:
    """The stripped code lines a patch removes or adds: text a statement must not contain."""
    return {line[1:].strip() for line in patch.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---")) and len(line[1:].strip()) > 3}


def _leaks(line: str, secret: set[str], gold: str) -> bool:
    """The line holds (a piece of) a changed line, by this module's rule or by the leak check's."""
    stripped = line.strip()
    return any(s in stripped or (len(stripped) > 8 and stripped in s) for s in secret) or \
        bool(find_leaks(line, gold))


def _clean_message(message: str, secret: set[str], gold: str) -> str:
    lines = []
    for line in message.strip().splitlines():
        if _TRAILER.match(line.strip()) or _leaks(line, secret, gold) or line.startswith(("diff --git", "@@")):
            continue
        lines.append(_HASH.sub("<commit>", line.rstrip()))
    return "\n".join(lines).strip()


def _clean_output(message: str, secret: set[str], gold: str) -> str:
    lines = [line.rstrip() for line in message.strip().splitlines()
             if line.strip() and not _leaks(line, secret, gold) and not _SEPARATOR.match(line)]
    text = "\n".join(f"    {line}" for line in lines[:MAX_MESSAGE_LINES])
    return text[:MAX_MESSAGE_CHARS]
