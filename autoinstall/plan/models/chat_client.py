"""A minimal client for OpenAI-compatible chat completions (vLLM, SGLang, hosted APIs), stdlib only."""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from pydantic import BaseModel, Field

from autoinstall.errors import AutoinstallError


class ModelError(AutoinstallError, RuntimeError):
    """The model endpoint failed or answered something unusable; the message says what to check."""


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str


class ChatReply(BaseModel):
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    raw_message: dict[str, Any] = Field(default_factory=dict)


class ChatClient:
    """POSTs to `{base_url}/chat/completions`; the API key comes from the argument or OPENAI_API_KEY."""

    def __init__(self, model: str, base_url: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 temperature: float = 0.0) -> None:
        self.model, self.base_url = model, base_url.rstrip("/")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "none"
        self.timeout_s, self.temperature = timeout_s, temperature

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> ChatReply:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if tools:
            body["tools"], body["tool_choice"] = tools, "auto"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:500].decode("utf-8", "replace")
            msg = f"the model endpoint {self.base_url} answered HTTP {e.code}: {detail} (check --model and the key)"
            raise ModelError(msg) from e
        except (urllib.error.URLError, OSError) as e:
            msg = (f"the model endpoint {self.base_url} did not answer ({e}); check --base-url and that the "
                   "server is running")
            raise ModelError(msg) from e
        return self._parse(payload)

    def _parse(self, payload: bytes) -> ChatReply:
        try:
            message = json.loads(payload)["choices"][0]["message"]
            calls = [ToolCall(id=c.get("id") or f"call_{i}", name=c["function"]["name"],
                              arguments=c["function"].get("arguments") or "{}")
                     for i, c in enumerate(message.get("tool_calls") or [])]
            return ChatReply(content=message.get("content") or "", tool_calls=calls, raw_message=message)
        except (ValueError, KeyError, IndexError, TypeError) as e:
            msg = (f"the model endpoint {self.base_url} answered something that is not a chat completion: "
                   f"{payload[:200]!r}")
            raise ModelError(msg) from e
