"""A real OpenAI-compatible HTTP server on loopback that replays scripted replies: a stand-in LLM for tests."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
"""An assistant message, or a function of the request body returning one."""


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message that calls one tool."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


class ReplayServer:
    """Serves POST /v1/chat/completions with the scripted replies in order; records every request body."""

    def __init__(self, replies: list[Reply], *, raw_body: bytes | None = None) -> None:
        self.replies, self.raw_body = list(replies), raw_body
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> bytes:
        with self._lock:
            self.requests.append(body)
            if self.raw_body is not None:
                return self.raw_body
            reply = self.replies.pop(0) if self.replies else {"role": "assistant", "content": "no more replies"}
        message = reply(body) if callable(reply) else reply
        return json.dumps({"id": "replay", "object": "chat.completion", "model": body.get("model"),
                           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                payload = server._next(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
