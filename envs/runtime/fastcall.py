"""DirectSession: a ToolSession whose calls over the direct channel skip the host's reader thread.

ToolSession (tools/session.py) hands every answer from a reader thread to the waiting caller through a
Future: two thread switches per call on the host, which on a loaded machine cost more than the call
itself. Here the caller reads its own answer from the socket (leader/follower: while several threads
call at once, one of them reads and hands the others' answers over, then passes the reading on), so a
lone caller, the common case of one episode driven by one thread, costs one send and one blocking recv.
Answers are parsed with json alone; the exec stream (the fallback transport) is untouched.
"""
from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from typing import Any

from tools.base import ToolError
from tools.session import ToolServerError, ToolServerTimeout, ToolSession

RECV_BYTES = 1 << 18


class _Slot:
    """One call waiting for its answer."""

    __slots__ = ("answer", "event")

    def __init__(self) -> None:
        self.answer: dict[str, Any] | None = None
        self.event = threading.Event()


class DirectSession(ToolSession):
    """A ToolSession whose direct-channel calls are read by the calling thread (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sock: socket.socket | None = None
        self._slots: dict[int, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._reading = threading.Lock()
        self._buf = b""
        self._rids = itertools.count(1 << 32)  # apart from the stream's ids
        self._poll = select.poll()

    def _use_channel(self, listener: socket.socket, *, connected: bool) -> None:
        sock = self.sandbox.accept_channel(listener, 5.0 if connected else 0)  # type: ignore[attr-defined]
        if sock is None:
            return
        sock.setblocking(True)
        self._poll.register(sock, select.POLLIN)
        self._sock, self.transport = sock, "socket"

    def call(self, op: str, /, *, call_timeout: float | None = None, **args: Any) -> Any:
        if self._sock is None:
            return super().call(op, call_timeout=call_timeout, **args)
        if self._dead is not None:
            raise ToolServerError(f"the tool server is not running ({self._dead})")
        rid = next(self._rids)
        slot = _Slot()
        with self._slots_lock:
            self._slots[rid] = slot
        line = json.dumps({"id": rid, "op": op, "args": args}, separators=(",", ":")).encode() + b"\n"
        timeout = self.call_timeout if call_timeout is None else call_timeout
        try:
            self._sock.sendall(line)
            answer = self._wait(slot, time.monotonic() + timeout)
        except OSError as e:
            self._broken(f"the socket to the tool server broke: {e}")
            answer = slot.answer
        finally:
            with self._slots_lock:
                self._slots.pop(rid, None)
        if answer is None:
            if self._dead is not None:
                raise ToolServerError(f"the tool server is not running ({self._dead})")
            raise ToolServerTimeout(f"the tool server did not answer {op!r} within {timeout} s")
        if answer.get("ok"):
            return answer.get("result")
        raise ToolError(str(answer.get("error")))

    def _wait(self, slot: _Slot, deadline: float) -> dict[str, Any] | None:
        """The answer of `slot`: read from the socket while no other caller does, else handed over."""
        while slot.answer is None and self._dead is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self._reading.acquire(blocking=False):
                try:
                    self._read_until(slot, deadline)
                finally:
                    self._reading.release()
                    self._pass_reading()
            else:
                slot.event.wait(min(left, 0.05))  # woken by the reader with our answer or its turn
                slot.event.clear()
        return slot.answer

    def _read_until(self, slot: _Slot, deadline: float) -> None:
        sock = self._sock
        assert sock is not None
        while slot.answer is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if not self._poll.poll(left * 1000):  # not settimeout: it would also bound other threads' sends
                return
            chunk = sock.recv(RECV_BYTES)
            if not chunk:
                self._broken("the tool server closed the socket")
                return
            if b"\n" not in chunk:
                self._buf += chunk
                continue
            *lines, self._buf = (self._buf + chunk).split(b"\n")
            for line in lines:
                self._deliver(line)

    def _deliver(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        with self._slots_lock:
            slot = self._slots.get(msg.get("id"))  # type: ignore[arg-type]
        if slot is not None:
            slot.answer = msg
            slot.event.set()

    def _pass_reading(self) -> None:
        """Wake one caller still waiting, so that it takes over the reading."""
        with self._slots_lock:
            waiting = next((s for s in self._slots.values() if s.answer is None), None)
        if waiting is not None:
            waiting.event.set()

    def _broken(self, reason: str) -> None:
        self._fail_all(reason)
        with self._slots_lock:
            slots = list(self._slots.values())
        for s in slots:
            s.event.set()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        super().close()
        self._broken("the session was closed")
