"""A per-test timeout for pytest, stdlib only: the source of the `autoinstall_timeout` plugin.

pytest_runner writes this file into the sandbox for one run (`-p autoinstall_timeout`, its folder on PYTHONPATH)
and removes it afterwards, so no image ever holds it. A test (setup, call and teardown) that runs over
AUTOINSTALL_TEST_TIMEOUT seconds fails with MARKER in its message: SIGALRM interrupts it in the main thread.
When it does not stop even then (it swallowed the failure), a second SIGALRM dumps every thread's stack, prints
MARKER with the test's id and ends the process with HANG_EXIT; stuck where no Python signal handler runs (or off
the main thread), faulthandler's own watchdog (a C thread, invisible to `threading.enumerate()`) ends it. So a
suite never runs into its run's global timeout, and the plugin starts no Python thread a suite could see. After AUTOINSTALL_MAX_HANGS timed-out tests the session stops
(the report is still written): the caller deselects them and runs again. Each test's id is written to the file
AUTOINSTALL_CURRENT_TEST names as it starts: a process that dies on a crash signal writes no report, and that
file then names the test it died in.
"""
import faulthandler
import os
import signal
import threading

import pytest

TIMEOUT_ENV = "AUTOINSTALL_TEST_TIMEOUT"
CURRENT_ENV = "AUTOINSTALL_CURRENT_TEST"
"""A file the plugin writes each test's id into as the test starts: when the process dies on a crash signal
(no report is written), it names the test it died in."""
MAX_HANGS_ENV = "AUTOINSTALL_MAX_HANGS"
MARKER = "autoinstall-timeout:"
HANG_EXIT = 86
GRACE_ENV = "AUTOINSTALL_TIMEOUT_GRACE"
"""Seconds (default 10) a test that SIGALRM failed may still run before the session is ended."""


def _seconds(name, default):
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return float(default)


def message(nodeid, seconds):
    return f"{MARKER} {nodeid} ran over {seconds:g} s (the per-test timeout) and was stopped"


def _end(nodeid, seconds):
    """The test did not stop when failed: dump every stack, print the marker last, end the process."""
    # pytest captures fd 2 while a test runs: write to the stderr the session started with.
    faulthandler.dump_traceback(file=_STDERR, all_threads=True)
    os.write(_STDERR, f"\n{MARKER} {nodeid} ran over {seconds:g} s (the per-test timeout) and did not stop: "
                      "the session ends here\n".encode())
    os._exit(HANG_EXIT)


def _mark_current(nodeid):
    """The test starting now, in CURRENT_ENV's file (one small write; nothing when the variable is unset)."""
    path = os.environ.get(CURRENT_ENV)
    if not path:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, nodeid.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


_state = {"hangs": 0}
_STDERR = os.dup(2)
"""Imported by `-p` before pytest starts capturing: this is the real stderr."""


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """No thread of our own (suites check that they leave none behind): SIGALRM fails the test, a second one
    `grace` seconds later ends a session whose test swallowed the first; faulthandler's C watchdog (no
    Python thread) ends one stuck where no signal handler runs."""
    _mark_current(item.nodeid)
    seconds = _seconds(TIMEOUT_ENV, 0)
    if seconds <= 0:
        yield
        return
    grace = _seconds(GRACE_ENV, 10)
    fired = []
    on_main = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")

    def on_alarm(signum, frame):
        fired.append(True)
        if len(fired) > 1:
            _end(item.nodeid, seconds)
        signal.setitimer(signal.ITIMER_REAL, grace)
        pytest.fail(message(item.nodeid, seconds), pytrace=True)

    previous = signal.signal(signal.SIGALRM, on_alarm) if on_main else None
    if on_main:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(seconds + 2 * grace + 5, exit=True, file=_STDERR)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        if on_main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
    if fired:
        _state["hangs"] += 1
        limit = int(_seconds(MAX_HANGS_ENV, 3))
        if limit and _state["hangs"] >= limit:
            item.session.shouldstop = (f"{MARKER} {_state['hangs']} tests ran over the per-test timeout; "
                                       "the session stops here")
