"""Where a benchmark's CPU goes: the environments' containers (their cgroups: tool servers, shells, the commands
they run), the engine (dockerd, containerd and the containers' shims), the harness (this process and the worker
processes it waited for), and the machine as a whole (/proc/stat: all of that, the kernel's interrupts, and
whatever else runs here).
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
ENGINE = ("dockerd", "containerd", "containerd-shim")
_TICK = os.sysconf("SC_CLK_TCK")


def container_ns(cid: str) -> int:
    """CPU nanoseconds used so far by one container (cgroup v1 cpuacct); 0 when absent."""
    try:
        return int((CGROUP / "cpuacct/docker" / cid / "cpuacct.usage").read_text())
    except OSError:
        return 0


def throttled(cid: str) -> tuple[int, int]:
    """(periods, throttled periods) of one container's CFS bandwidth limit so far (cgroup v1 cpu.stat)."""
    try:
        stat = dict(line.split() for line in (CGROUP / "cpu/docker" / cid / "cpu.stat").read_text().splitlines())
    except (OSError, ValueError):
        return 0, 0
    return int(stat.get("nr_periods", 0)), int(stat.get("nr_throttled", 0))


def engine_s(names: tuple[str, ...] = ENGINE) -> float:
    """CPU seconds used so far by the processes named `names` (by default the engine and the shims)."""
    total = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() in names:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / _TICK


def _machine_s() -> tuple[int, int]:
    """(busy, stolen) CPU seconds of the machine since boot, summed over its cores: time its cores ran anything
    (the kernel's interrupts included), and time the hypervisor gave to others while they had work (steal)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields[:7]) - fields[3] - fields[4], fields[7]


def _harness_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuSplit:
    """CPU used between construction and `per_call(calls)`, split by who used it."""

    def __init__(self, cids: list[str]) -> None:
        self.cids = cids
        self.start = self._now()

    def _now(self) -> dict[str, float]:
        busy, steal = _machine_s()
        periods = [throttled(c) for c in self.cids]
        return {"containers": sum(container_ns(c) for c in self.cids) / 1e9, "engine": engine_s(),
                "harness": _harness_s(), "machine": busy / _TICK, "steal": steal / _TICK, "periods": sum(p[0] for p in periods),
                "throttled": sum(p[1] for p in periods)}

    def per_call(self, calls: int) -> dict[str, float]:
        """Milliseconds of CPU per call of each part ("other": the machine's busy time not in the others; "steal":
        time the hypervisor took, not in "machine"), and
        the containers' CFS periods and throttled periods meanwhile (their `cpus` limit)."""
        end = self._now()
        out = {k: (end[k] - self.start[k]) * 1000 / max(calls, 1) for k in ("containers", "engine", "harness",
                                                                             "machine", "steal")}
        out["other"] = out["machine"] - out["containers"] - out["engine"] - out["harness"]
        out = {k: round(v, 3) for k, v in out.items()}
        out.update({k: end[k] - self.start[k] for k in ("periods", "throttled")})
        return out
