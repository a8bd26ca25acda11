"""Debian's headless chromium, driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the
browser reads commands on fd 3 and writes answers and events on fd 4, each a JSON text ended by NUL).

`visit(url)` opens one page, waits for its load event and returns what it saw: console errors, uncaught
exceptions, the browser's own error log (CSP refusals, failed loads), every request the page made, the values
of JavaScript expressions evaluated in it, and a PNG screenshot of the whole page.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-extensions",
         "--remote-debugging-pipe"]
"""What a container and root need (no sandbox, no GPU), and no traffic of the browser's own."""


def chromium_executable() -> str:
    """Debian's chromium ($CHROMIUM, else on PATH), or skip (fail when CI is set: setup.sh installs it)."""
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None or not Path(exe).is_file():
        if os.environ.get("CI"):
            pytest.fail("CI is set but chromium is not installed (scripts/setup.sh installs it: "
                        "apt-get install -y chromium)", pytrace=False)
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return exe


@dataclass
class Visit:
    """What one page load showed."""

    errors: list[str] = field(default_factory=list)
    """Console errors, uncaught exceptions, the browser's error log and dialogs (alert, confirm)."""
    requests: list[str] = field(default_factory=list)
    values: dict[str, object] = field(default_factory=dict)
    png: bytes = b""


class _Pipe:
    """One DevTools session over the browser's pipe."""

    def __init__(self, write_fd: int, read_fd: int, timeout_s: float) -> None:
        self.write_fd, self.read_fd, self.timeout_s = write_fd, read_fd, timeout_s
        self.buffer, self.events, self.next_id = b"", [], 0

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                msg = "chromium did not answer in time"
                raise TimeoutError(msg)
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                msg = "chromium closed its DevTools pipe"
                raise EOFError(msg)
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        command = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self.write_fd, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            message = self._message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict) -> None:
        """Keep an event; answer a dialog (alert, confirm), which would block the page until answered."""
        self.events.append(message)
        if message.get("method") == "Page.javascriptDialogOpening":
            self.call("Page.handleJavaScriptDialog", {"accept": True}, message.get("sessionId"))

    def wait_for(self, event: str) -> None:
        deadline = time.monotonic() + self.timeout_s
        while not any(e.get("method") == event for e in self.events):
            self._event(self._message(deadline))


def _collect(events: list[dict], visit: Visit) -> None:
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            visit.errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                       for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            visit.errors.append("exception: " + str(details.get("exception", {}).get("description")
                                                    or details.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            visit.errors.append("log: " + params["entry"].get("text", ""))
        elif method == "Page.javascriptDialogOpening":
            visit.errors.append("dialog: " + params.get("message", ""))
        elif method == "Network.requestWillBeSent":
            visit.requests.append(params["request"]["url"])


def visit(url: str, expressions: dict[str, str] | None = None, *, width: int = 1280,
          timeout_s: float = 60.0) -> Visit:
    """Load `url` in a fresh headless chromium (its own profile) and report what happened."""
    exe = chromium_executable()
    commands_r, commands_w = os.pipe()
    answers_r, answers_w = os.pipe()

    def on_fds_3_and_4() -> None:
        high_in, high_out = os.dup(commands_r), os.dup(answers_w)  # above 4 first: no clobbering
        os.dup2(high_in, 3)
        os.dup2(high_out, 4)

    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=on_fds_3_and_4, pass_fds=(3, 4))  # noqa: PLW1509 (no threads here)
        os.close(commands_r)
        os.close(answers_w)
        pipe = _Pipe(commands_w, answers_r, timeout_s)
        try:
            return _drive(pipe, url, expressions or {}, width)
        finally:
            try:
                pipe.call("Browser.close")
            except (OSError, EOFError, TimeoutError, RuntimeError):
                proc.kill()
            proc.wait(timeout=30)
            os.close(commands_w)
            os.close(answers_r)


def _drive(pipe: _Pipe, url: str, expressions: dict[str, str], width: int) -> Visit:
    target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Network", "Page"):
        pipe.call(f"{domain}.enable", session=session)
    pipe.call("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
    pipe.events.clear()
    pipe.call("Page.navigate", {"url": url}, session)
    pipe.wait_for("Page.loadEventFired")
    result = Visit()
    size = pipe.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
    shot = pipe.call("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": min(size["height"], 8000), "scale": 1}}, session)
    result.png = base64.b64decode(shot["data"])  # as loaded, before the expressions act on the page
    for name, expression in expressions.items():
        answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        result.values[name] = answer.get("result", {}).get("value")
    time.sleep(0.2)  # late console messages of the load
    pipe.call("Runtime.evaluate", {"expression": "0"}, session)
    _collect(pipe.events, result)
    return result

