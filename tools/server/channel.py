"""The direct channel: the same JSON lines over a Unix socket that the host listens on in a directory
it shares (read-only) with the sandbox, so calls skip the container engine. The server connects to it
at start; the stdin/stdout stream stays open beside it (the host closing stdin is still what stops the
server) and answers whatever arrives on it.
"""
from __future__ import annotations

import socket
import threading
from typing import Any, Callable

Reply = Callable[[bytes], None]


def connect(path: str) -> Any:
    """A socket connected to the host's listener at `path`, or None when there is none (the host then
    stays on the stream). The directory is read-only here: connecting needs no write access to it."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (OSError, AttributeError):
        return None
    try:
        sock.settimeout(5)
        sock.connect(path)
        sock.settimeout(None)
    except OSError:
        sock.close()
        return None
    return sock


def serve(conn: Any, submit: Callable[[bytes, Reply], None]) -> None:
    """Read requests from the connection in a thread of its own; answers go back on it."""
    threading.Thread(target=_read, args=(conn, submit), name="channel-reader", daemon=True).start()


def _read(conn: Any, submit: Callable[[bytes, Reply], None]) -> None:
    lock = threading.Lock()

    def reply(data: bytes) -> None:
        with lock:
            conn.sendall(data)

    buf = b""
    try:
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
            if b"\n" not in chunk:
                continue
            lines = buf.split(b"\n")
            buf = lines.pop()
            for line in lines:
                if line.strip():
                    submit(line, reply)
    except OSError:
        pass
    finally:
        conn.close()


def close(conn: Any) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()
