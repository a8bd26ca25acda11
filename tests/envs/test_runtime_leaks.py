"""A reset (in place by default) must not carry anything from one episode to the next that a trainer would see:
files in $HOME's dotdirs, /var/tmp, site-packages, mtimes, hard links, removed trees, unreadable files, FIFOs,
the persistent terminal's variables and cwd, background jobs however detached, SysV IPC objects, /tmp's mode.
Each check FAILS when a reset leaks."""

from __future__ import annotations

import time
import uuid

import pytest

from envs.runtime import Environment, RuntimeSpec
from tests.envs.test_runtime import (  # noqa: F401  (pytest fixtures)
    ADD,
    RUN_LABEL,
    SUB,
    _containers,
    runtime_image,
    spec,
)

SP = "$(/opt/venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
"""The image's site-packages (where pytest is installed)."""
IPC = ("/opt/venv/bin/python3 -c \"import ctypes; c = ctypes.CDLL(None); "
       "print(c.shmget(0x5eed, 4096, 0o1666), c.semget(0x5eed, 1, 0o1666), c.msgget(0x5eed, 0o1666))\"")
"""Creates one SysV shared memory segment, semaphore set and message queue (ids printed; -1 = failed)."""

STATE = "\n".join([
    f"SP={SP}",
    "echo cwd=$PWD mark=${MARK-unset} path_has_leak=$(case $PATH in *leak*) echo yes;; *) echo no;; esac)",
    "alias | grep -c leak; type leakfn 2>&1 | head -1; umask",
    "ls -A ~ ~/.config /var/tmp /tmp /dev/shm 2>&1",
    "stat -c '%n %s %Y %a %U %h' calc.py tests/test_calc.py ~/.bashrc $SP/pytest/__init__.py 2>&1",
    # directories: no link count (overlayfs reports 1 for one both layers have, which a reset cannot undo)
    "stat -c '%n %s %Y %a %U %F' tests $SP/_pytest $SP/_pytest/assertion 2>&1",
    "stat -c '%n %a %U' /tmp /dev/shm /var/tmp",  # their mtimes are the container's start
    "md5sum calc.py ~/.bashrc $SP/pytest/__init__.py 2>&1",
    "find $SP/_pytest | sort | md5sum; find $SP/_pytest | wc -l",
    "ls -la --time-style=+%s . | awk '{print $1, $3, $4, $6, $NF}' | grep -v -e '^total' -e ' [.]*$'",
    "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c -e 'slee[p] 10' -e '[l]ate'",
    "echo sysv=$(awk 'FNR > 1' /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg | wc -l)",
])
"""Everything the episode below changes, as the next episode would see it."""

MESS = "\n".join([
    f"SP={SP}",
    "mkdir -p ~/.config/leak && echo 1 > ~/.config/leak/state; echo 'export LEAK=1' >> ~/.bashrc",
    "echo kept > /var/tmp/leak; echo x > /tmp/.hidden; echo x > /dev/shm/leak; chmod 700 /tmp",
    "echo 'LEAKED = 1' >> $SP/pytest/__init__.py",
    "touch -d '2001-01-01 00:00' calc.py $SP/_pytest/__init__.py",  # mtime only: same bytes
    "ln calc.py hardlink.py; ln tests/test_calc.py /var/tmp/hardlink",
    "rm -rf $SP/_pytest/assertion",
    "chmod 000 tests/test_calc.py",
    "mkfifo pipe",
    "nohup sleep 1001 > /dev/null 2>&1 &",
    "setsid sleep 1002 < /dev/null > /dev/null 2>&1 &",
    "(sleep 1003 < /dev/null > /dev/null 2>&1 &) &",
    "setsid sh -c 'sleep 1.5; echo late > /workspace/late; touch /var/tmp/late' < /dev/null > /dev/null 2>&1 &",
    IPC,
    "export MARK=7 PATH=/leak:$PATH; alias leak=true; leakfn() { :; }; umask 077; cd /opt",
])
"""One episode's worth of state a careless reset would carry over; all of it survives within the episode."""


@pytest.mark.docker
def test_reset_leaks_nothing_into_the_next_episode(spec: RuntimeSpec) -> None:  # noqa: F811
    label = uuid.uuid4().hex
    with Environment(spec, labels=RUN_LABEL | {"autoinstall.test.env": label}) as env:
        first = env.reset()
        pristine = env.step("terminal", {"command": STATE}).output
        assert "cwd=/workspace mark=unset path_has_leak=no" in pristine, pristine
        for episode in range(2):
            made = env.step("terminal", {"command": MESS, "timeout_s": 30})
            ids = made.output.split()[-3:]
            assert "-1" not in ids, made.output  # the SysV objects exist ...
            dirty = env.step("terminal", {"command": STATE}).output
            assert "mark=7" in dirty and "leak" in dirty and "cwd=/opt" in dirty, dirty  # ... and the rest
            again = env.reset()
            assert again["in_place"], again  # the default: the container is kept ...
            assert again["container_id"] == first["container_id"]
            time.sleep(2)  # the detached writer would have written by now, had it survived
            after = env.step("terminal", {"command": STATE}).output
            assert after == pristine, f"episode {episode + 2} differs from the image's state:\n" + _diff(
                pristine, after)
        reward = env.reward([])  # the unreadable test file is readable again
        assert reward.passed == 1 and {t.test_id for t in reward.tests} == {ADD, SUB}
    assert _containers(label) == []


@pytest.mark.docker
def test_in_place_false_still_starts_a_fresh_container(spec: RuntimeSpec) -> None:  # noqa: F811
    with Environment(spec, in_place=False, labels=RUN_LABEL) as env:
        first = env.reset()
        env.step("terminal", {"command": "echo x > /var/tmp/leak"})
        second = env.reset()
        assert not second["in_place"] and second["container_id"] != first["container_id"]
        assert "No such file" in env.step("terminal", {"command": "cat /var/tmp/leak"}).output


def _diff(a: str, b: str) -> str:
    import difflib  # only to explain a failure

    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), "pristine", "after reset", lineterm=""))
