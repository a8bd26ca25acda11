"""A held section (envs/interrupts.py) lets a signal arrive and raises it as KeyboardInterrupt only at its end:
what the section did is complete and known; the handlers are as they were after it."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from envs.interrupts import held


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_a_held_section_is_raised_when_it_ends(signum: int) -> None:
    def before(n: int, f: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, before)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt), held():
            os.kill(os.getpid(), signum)
            done.append("the rest of the section ran")
        assert done == ["the rest of the section ran"]
        assert signal.getsignal(signal.SIGTERM) is before
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_section_without_a_signal_raises_nothing_and_other_threads_are_plain() -> None:
    with held():
        pass
    seen = []
    thread = threading.Thread(target=lambda: seen.append(held().__enter__() is None))
    thread.start()
    thread.join()
    assert seen == [True]
