"""The disk watch dates each measure that found a sandbox's files grown (what a timed-out command's `idle_s`
reads, besides its output), keeping several: a measure after a timeout must not hide one before it. On a
scripted engine, no Docker."""
from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from envs.base import Limits
from envs.docker import diskwatch
from envs.docker.diskwatch import DiskWatch


class Engine:
    """Answers the watch's size listing from `sizes`, one a call (the last one repeated); stops it after."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes, self.calls = sizes, 0
        self.api = self

    def containers(self, **_: Any) -> list[dict[str, Any]]:
        self.calls += 1
        if self.calls > len(self.sizes) + 2:
            raise ConnectionError("done")  # the watch ends when the engine stops answering
        return [{"Id": "c1", "SizeRw": self.sizes[min(self.calls, len(self.sizes)) - 1]}]

    def close(self) -> None:
        pass


def test_each_growth_is_dated_and_several_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine([100, 100, 200, 300, 300])
    monkeypatch.setattr(diskwatch, "connect", lambda *a, **k: engine)
    sandbox = SimpleNamespace(config=SimpleNamespace(base_url="scripted://growth", limits=Limits(), disk_poll_s=0.02),
                              limit_error=None, committed=0, disk_used=-1, disk_growth=deque(maxlen=8),
                              cache_upper=Path("/nonexistent"))
    started = time.monotonic()
    DiskWatch.watch(sandbox, "c1")  # type: ignore[arg-type]
    for _ in range(200):
        if engine.calls > len(engine.sizes) + 2:
            break
        time.sleep(0.01)
    DiskWatch.unwatch("scripted://growth", "c1")
    assert len(sandbox.disk_growth) == 2  # 100 -> 200 and 200 -> 300; the first measure is the baseline
    first, second = sandbox.disk_growth
    assert started <= first < second
    assert sandbox.disk_used == 300 and sandbox.limit_error is None
