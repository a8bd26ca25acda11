"""Sections a Ctrl-C or SIGTERM must not cut in two: an engine request whose result has to be known to be undone
(a container created while the signal arrived would be left behind, its id never returned). The signal is held
until the section ends, then raised as KeyboardInterrupt, as it would have been. Outside the main thread (where
Python runs no signal handler) the section is plain."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the section; raise KeyboardInterrupt after it if one came."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, frame: object) -> None:
        came.append(signum)

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in previous:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if came:
            raise KeyboardInterrupt
