"""Every statement style of a task, each leak-checked (leaks.py) with its verdict recorded.

`tests` is the template of statement.py (the failing tests and what they report). `issue` and `terse` come
from the chat model when one is configured (statement_model.py), else from the templates of prose.py over
the failing tests' symptoms (symptoms.py); a model's answer that leaks is sent back once, then replaced by
the templates', and the check says so.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from autoinstall.plan.models.chat_client import ModelError
from autoinstall.tasks import leaks, prose
from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.statement import problem_statement
from autoinstall.tasks.statement_model import Brief, ChatStatements
from autoinstall.tasks.symptoms import Symptom, symptom
from envs.task import StatementCheck, Statements

MAX_OUTPUT = 1500


class StatementInput(BaseModel):
    """What the statements of one task are written from."""

    candidate: Candidate
    fail_to_pass: list[str]
    pass_to_pass: list[str] = Field(default_factory=list)
    messages: dict[str, str] = Field(default_factory=dict)
    seed: str = ""
    """Chooses the templates' wording (the task's digest)."""


def symptoms_of(data: StatementInput, index: CodeIndex | None) -> list[Symptom]:
    """One symptom per failing test (for a combined task, the first failing test of each part first)."""
    changed = {f.key for f in index.changed(data.candidate.bug_patch)} if index else set()
    reaching = _leading_to(index, changed) if index else set()
    ordered = list(dict.fromkeys([*data.candidate.part_heads, *data.fail_to_pass]))
    return [symptom(t, data.messages.get(t, ""), index, reaching) for t in ordered]


def _leading_to(index: CodeIndex, targets: set[str], depth: int = 3) -> set[str]:
    """Short names of the functions from which a changed one is reached within `depth` calls."""
    names = {key.rsplit("::", 1)[-1].rsplit(".", 1)[-1] for key in targets}
    frontier = set(names)
    for _ in range(depth):
        callers = {f.short for f in index.functions if not f.test and f.refs & frontier} - names
        if not callers:
            break
        names |= callers
        frontier = callers
    return names


def write_statements(data: StatementInput, index: CodeIndex | None,
                     writer: ChatStatements | None = None) -> tuple[Statements, list[StatementCheck]]:
    """The three statements and the verdict of each one's leak check."""
    candidate = data.candidate
    gold = candidate.gold_patch or candidate.bug_patch
    ids = [*data.fail_to_pass, *data.pass_to_pass]
    tests = problem_statement(candidate, data.fail_to_pass, data.messages)
    checks = [leaks.check("tests", tests, gold, ids, data.fail_to_pass)]
    found = symptoms_of(data, index)

    def keep(text: str) -> bool:
        return not leaks.find_leaks(text, gold, ids, data.fail_to_pass)

    written = {"issue": prose.issue(found, data.seed, keep), "terse": prose.terse(found, data.seed, keep)}
    by, note = "embedded", ""
    if writer is not None:
        chat, note = _from_model(writer, data, index, gold, ids)
        if chat:
            written, by = chat, writer.name
    for style in ("issue", "terse"):
        checks.append(leaks.check(style, written[style], gold, ids, data.fail_to_pass,  # type: ignore[arg-type]
                                  writer=by, note=note))
    return Statements(tests=tests, issue=written["issue"], terse=written["terse"]), checks


def _from_model(writer: ChatStatements, data: StatementInput, index: CodeIndex | None, gold: str,
                ids: list[str]) -> tuple[dict[str, str] | None, str]:
    """The model's statements when they pass the check (after one rewrite at most), else None and why."""
    if writer.broken:
        return None, f"{writer.name} failed earlier in this run ({writer.broken}): templates wrote these"
    brief = Brief(kind=data.candidate.kind, bug_patch=data.candidate.bug_patch,
                  failing={t: data.messages.get(t, "")[:MAX_OUTPUT] for t in data.fail_to_pass[:5]},
                  tests=_test_sources(index, data.fail_to_pass[:5]))
    try:
        answer, messages = writer.first(brief)
        found = _leaks_of(answer, gold, ids, data.fail_to_pass)
        if found:
            answer = writer.again(messages, found)
            found = _leaks_of(answer, gold, ids, data.fail_to_pass)
    except ModelError as e:
        writer.broken = str(e)[:200]
        return None, f"{writer.name} failed ({writer.broken}): templates wrote these"
    if found:
        return None, f"{writer.name}'s statements leaked twice ({'; '.join(found[:3])}): templates wrote these"
    return answer, ""


def _leaks_of(answer: dict[str, str], gold: str, ids: list[str], failing: list[str]) -> list[str]:
    out = []
    for style in ("issue", "terse"):
        text = answer.get(style, "")
        out.extend(f"{style}: {leak}" for leak in (leaks.find_leaks(text, gold, ids, failing) if text.strip()
                                                   else ["empty"]))
    return out


def _test_sources(index: CodeIndex | None, test_ids: list[str]) -> dict[str, str]:
    out = {}
    for test_id in test_ids:
        function = index.test_function(test_id) if index else None
        if function is not None:
            out[test_id] = function.text[:MAX_OUTPUT]
    return out
