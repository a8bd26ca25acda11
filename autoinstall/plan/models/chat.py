"""A prior model behind any OpenAI-compatible endpoint: the same two phases, driven by function calling."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.ecosystems.nested import split_name
from autoinstall.plan.models.chat_client import ChatClient, ModelError
from envs.spec import MAX_STEPS, Plan, Repair, Step
from tools import openai_schemas

ToolRunner = Callable[[str, str], str]
"""Runs one agent tool: (tool name, JSON arguments) -> observation text."""

T = TypeVar("T")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What a `set_env` repair may name: a variable, which the replay Dockerfile's ENV line takes as it is."""

DEBIAN = ("Debian packages: `apt-get update -qq && apt-get install -y --no-install-recommends PKG`. The network is "
          "on while installing and off while checks and tests run.")

PROPOSE_PROMPT = (
    "You set up {language} repositories so that their own test suites run. Explore the repository with the "
    "read_file and search tools, then call submit_plan exactly once with a JSON plan that matches this "
    "JSON schema:\n{schema}\nAt most {max_steps} steps, each with the command, why, kind, and evidence (file and "
    "line). Checks prove the install worked. Set the plan's ecosystem to {ecosystem!r}. {environment} " + DEBIAN)

REPAIR_PROMPT = (
    "An install step or verification failed while setting up a repository. You may inspect the environment "
    "with the tools (terminal runs in the container), then call submit_repair once with ONE fix: "
    "insert_before (a command to run before retrying), replace (a new command for the failing one), set_env, "
    "switch_python (one of available_pythons: an interpreter X.Y, or X.Y+NAME-VERSION, the same image with this "
    "machine's toolchain NAME-VERSION copied in and first on PATH, e.g. a newer JDK, rustc or Go than the "
    "image's, or X.Y+NAME-VERSION@SUITE, the same with Debian SUITE's packages of it installed), stub_distribution (a dependency that cannot be installed "
    "at all), deselect (tests that cannot pass here, e.g. they need a service), more_time (an install step that "
    "ran out of time while still working, overrun.progressing: the same step once more from the last snapshot "
    "with timeout_s seconds, at most overrun.remaining_s; once per step), or give_up. {environment} "
    + DEBIAN)

LANGUAGES = {"python": "Python", "go": "Go", "rust": "Rust", "node": "Node.js", "java": "Java"}


def environment_of(name: str) -> str:
    """The ecosystem's own description of the container, for the prompts."""
    return get_ecosystem(name).chat_environment


SUBMIT_PLAN = {"type": "function", "function": {
    "name": "submit_plan", "description": "Submit the install plan as a JSON string.",
    "parameters": {"type": "object", "properties": {"plan": {"type": "string", "description": "The plan JSON."}},
                   "required": ["plan"]}}}

SUBMIT_REPAIR = {"type": "function", "function": {
    "name": "submit_repair", "description": "Submit one repair for the failure.",
    "parameters": {"type": "object", "required": ["kind", "reason"], "properties": {
        "kind": {"type": "string", "enum": ["insert_before", "replace", "set_env", "switch_python",
                                            "stub_distribution", "deselect", "more_time", "give_up"]},
        "reason": {"type": "string", "description": "Why this fixes the failure."},
        "command": {"type": "string", "description": "insert_before/replace: the bash command."},
        "env_name": {"type": "string"}, "env_value": {"type": "string"},
        "python": {"type": "string", "description": "switch_python: one of available_pythons, e.g. 3.13 or "
                                                    "3.13+java-25.0.3"},
        "distribution": {"type": "string", "description": "stub_distribution: the PyPI name."},
        "import_name": {"type": "string", "description": "stub_distribution: the module name."},
        "tests": {"type": "string", "description": "deselect: comma-separated pytest node ids or files."},
        "timeout_s": {"type": "number", "description": "more_time: seconds for the step's one more run."}}}}}


def _repair_from_args(args: dict[str, Any], available: list[str]) -> Repair:
    """The submitted repair; a give_up keeps its reason (the build's failure says it). Raises ValueError for a
    switch_python to a toolchain that is not available, which goes back to the model."""
    kind = args.get("kind")
    if kind == "give_up":
        return Repair(kind="give_up", reason=args.get("reason", ""))
    if kind == "switch_python" and args.get("python") not in available:
        msg = f"switch_python: {args.get('python')!r} is not one of available_pythons {available}"
        raise ValueError(msg)
    step = Step(command=args["command"], why=args.get("reason", ""), kind="other") if args.get("command") else None
    if args.get("env_name") and not ENV_NAME.fullmatch(str(args["env_name"])):
        msg = f"set_env: {args['env_name']!r} is not a variable name (a letter or _, then letters, digits, _)"
        raise ValueError(msg)
    env = {args["env_name"]: args.get("env_value", "")} if args.get("env_name") else {}
    tests = [t.strip() for t in str(args.get("tests") or "").split(",") if t.strip()]
    timeout = float(args["timeout_s"]) if kind == "more_time" and args.get("timeout_s") else None
    return Repair(kind=kind, reason=args.get("reason", ""), step=step, env=env, python=args.get("python"),
                  distribution=args.get("distribution"), import_name=args.get("import_name"), tests=tests,
                  timeout_s=timeout)


class ChatModel:
    """Phase 1 and phase 2 through an OpenAI-compatible endpoint, with the agent tools."""

    wants_tools = True
    """The pipeline hands this model read/search (phase 1) and terminal too (phase 2)."""

    def __init__(self, model: str, base_url: str, *, api_key: str | None = None, max_turns: int = 24,
                 timeout_s: float = 120.0) -> None:
        self.name = f"openai:{model}"
        self.client = ChatClient(model, base_url, api_key=api_key, timeout_s=timeout_s)
        self.max_turns = max_turns

    def propose(self, facts: Any, repo: Path, tools: ToolRunner | None = None) -> Plan:
        """Explore (read_file, search) and answer with a Plan."""
        summary = facts.model_dump_json(exclude_none=True)[:30000] if hasattr(facts, "model_dump_json") else ""
        ecosystem = getattr(facts, "ecosystem", None) or "python"  # facts of the leading ecosystem name it
        messages = [
            {"role": "system", "content": PROPOSE_PROMPT.format(
                schema=json.dumps(Plan.model_json_schema()), max_steps=MAX_STEPS, ecosystem=ecosystem,
                language=" + ".join(LANGUAGES.get(e, e) for e in split_name(ecosystem)[0].split("+")),
                environment=environment_of(ecosystem))},
            {"role": "user", "content": f"Repository: {repo.name}\nWhat its files say (survey):\n{summary}"}]
        plan = self._loop(messages, SUBMIT_PLAN, lambda a: Plan.model_validate_json(a["plan"])
                          if isinstance(a.get("plan"), str) else Plan.model_validate(a["plan"]),
                          tools, {"read_file", "search"})
        if "ecosystem" not in plan.model_fields_set:  # the survey knows which ecosystem leads
            plan.ecosystem = ecosystem
        return plan

    def repair(self, ctx: RepairContext, tools: ToolRunner | None = None) -> Repair | None:
        """Look into the failure (read_file, search, terminal) and answer with one Repair (give_up included)."""
        context = ctx.model_dump_json(exclude={"plan"})[:30000]
        prompt = REPAIR_PROMPT.format(environment=environment_of(ctx.plan.ecosystem))
        messages = [{"role": "system", "content": prompt},
                    {"role": "user", "content": f"Plan steps: {[s.command for s in ctx.plan.steps]}\n"
                                                f"Failure: {context}"}]
        return self._loop(messages, SUBMIT_REPAIR, lambda a: _repair_from_args(a, ctx.available_pythons), tools,
                          {"read_file", "search", "terminal"})

    def _tool_schemas(self, allowed: set[str], finish: dict[str, Any], tools: ToolRunner | None) -> list[dict]:
        usable = [s for s in openai_schemas() if s["function"]["name"] in allowed] if tools else []
        return [*usable, finish]

    def _loop(self, messages: list[dict[str, Any]], finish: dict[str, Any], parse: Callable[[dict], T],
              tools: ToolRunner | None, allowed: set[str]) -> T:
        finish_name = finish["function"]["name"]
        schemas = self._tool_schemas(allowed, finish, tools)
        for _ in range(self.max_turns):
            reply = self.client.complete(messages, schemas)
            messages.append({"role": "assistant", "content": reply.content or None,
                             **({"tool_calls": reply.raw_message["tool_calls"]} if reply.tool_calls else {})})
            if not reply.tool_calls:
                messages.append({"role": "user", "content": f"Call {finish_name} with your answer."})
                continue
            for call in reply.tool_calls:
                if call.name == finish_name:
                    try:
                        return parse(json.loads(call.arguments))
                    except (ValueError, KeyError, TypeError, ValidationError) as e:
                        observation = f"Invalid {finish_name} arguments: {e}. Fix them and call it again."
                elif tools is not None and call.name in allowed:
                    observation = tools(call.name, call.arguments)
                else:
                    observation = f"Unknown tool {call.name!r}; available: {sorted(allowed)} and {finish_name}."
                messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
        msg = f"the model gave no usable {finish_name} answer within {self.max_turns} turns"
        raise ModelError(msg)
