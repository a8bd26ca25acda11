"""Statements by a chat model: the same pluggable prior model as the plan phase (`--model openai:NAME
--base-url URL`, autoinstall/plan/models/) writes the issue and terse statements from the bug and the
failing output, through one `submit_statements` call. What it writes is leak-checked by the caller
(statements.py); a leaking answer is sent back once with what leaked, then replaced by the template's.
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from autoinstall.plan.models import get_model
from autoinstall.plan.models.chat_client import ChatClient, ModelError

MAX_BRIEF = 12000
SYSTEM = (
    "You write the problem statement of a coding task, as the user of a library would report a bug. You get "
    "the bug (a diff that broke the code: never quote it, never describe the change or where it is), the "
    "tests that now fail and what they print. Call submit_statements once with two texts: `issue`, a short "
    "bug report (a title line, then the symptom in prose: what the user called, what they expected, what "
    "happened), without test names or ids, without pasted failure output, without code from the diff; and "
    "`terse`, one or two lines as a hurried developer would write, with the same rules.")
SUBMIT = {"type": "function", "function": {
    "name": "submit_statements", "description": "Submit the issue and terse statements.",
    "parameters": {"type": "object", "required": ["issue", "terse"], "properties": {
        "issue": {"type": "string", "description": "A user's bug report: title line, then prose."},
        "terse": {"type": "string", "description": "One or two lines."}}}}}


class Brief(BaseModel):
    """What the model is told about one task."""

    kind: str
    bug_patch: str
    failing: dict[str, str]
    """test id -> its failure output (cut)."""
    tests: dict[str, str]
    """test id -> the test function's source, when found."""


class ChatStatements:
    """Issue and terse statements from an OpenAI-compatible endpoint."""

    def __init__(self, client: ChatClient, name: str) -> None:
        self.client, self.name = client, name
        self.broken = ""
        """Why the endpoint failed (then the rest of the run uses the templates)."""

    def first(self, brief: Brief) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """The model's statements and the conversation so far (for `again`)."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": brief.model_dump_json(indent=1)[:MAX_BRIEF]}]
        return self._ask(messages), messages

    def again(self, messages: list[dict[str, Any]], leaks: list[str]) -> dict[str, str]:
        """Statements rewritten after the check refused the last ones for `leaks`."""
        messages.append({"role": "user", "content": "Those statements give the answer away: " +
                         "; ".join(leaks) + ". Rewrite both without any of it and call submit_statements."})
        return self._ask(messages)

    def _ask(self, messages: list[dict[str, Any]]) -> dict[str, str]:
        reply = self.client.complete(messages, [SUBMIT])
        messages.append({"role": "assistant", "content": reply.content or None,
                         **({"tool_calls": reply.raw_message["tool_calls"]} if reply.tool_calls else {})})
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "received"})
        raw = next((c.arguments for c in reply.tool_calls if c.name == "submit_statements"), reply.content)
        try:
            answer = json.loads(raw or "{}")
        except ValueError:
            answer = {}
        if not isinstance(answer, dict):
            answer = {}
        return {k: str(answer.get(k) or "").strip() for k in ("issue", "terse")}


def statement_writer(model: str | None, base_url: str | None = None) -> ChatStatements | None:
    """The chat writer for `--model` (None for the embedded model: templates write the statements).

    Raises:
        ModelError: the model spec is unknown, lacks an endpoint, or is not a chat model.
    """
    if not model or model.strip() == "embedded":
        return None
    prior = get_model(model, base_url=base_url)
    client = getattr(prior, "client", None)
    if not isinstance(client, ChatClient):
        msg = f"model {model!r} cannot write statements; use openai:NAME with --base-url, or embedded"
        raise ModelError(msg)
    return ChatStatements(client, prior.name)
