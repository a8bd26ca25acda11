"""Rollout runtime on this machine: reset latency, tool-call throughput and latency, memory per
environment, with 1, 8 and 32 environments alive at once (one thread per environment).

    uv run python bench/rollout.py [--resets 20] [--seconds 5] [--sizes 1,8,32] [--think-ms 100]

Resets are timed back to back (cold: a container and tool server started on the spot) and with a
prestarted next episode (warm: `Environment(prestart=True)`, a short episode between resets). Tool
calls are timed saturated (each thread calls back to back: the machine's capacity, where latency is
threads / throughput) and paced (a pause of --think-ms after each call, as a model's turn would).

Prints a table, then (last line) one JSON object with the numbers. Every container it starts and the
image it builds are removed at the end, even on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from envs.baseimage import ensure_base_image
from envs.docker import DockerSandbox, remove_image
from envs.runtime import Environment, RuntimeSpec

REPO = Path(__file__).resolve().parents[1]
LABELS = {"autoinstall.bench": "rollout"}
CGROUP = Path("/sys/fs/cgroup/memory/docker")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "tools/base.py", "end_line": 40}),
    ("search", {"pattern": "def run", "path": "tools"}),
    ("terminal", {"command": "true"}),
]
"""The cycle each environment's thread repeats: a read, a search, a shell command."""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _container_mb(cid: str) -> tuple[float, float]:
    """(usage, rss) in MiB of one container from its cgroup v1 memory controller; nan when absent."""
    base = CGROUP / cid
    try:
        usage = int((base / "memory.usage_in_bytes").read_text())
        stat = dict(line.split() for line in (base / "memory.stat").read_text().splitlines())
    except OSError:
        return float("nan"), float("nan")
    return usage / 2**20, int(stat.get("total_rss", stat.get("rss", 0))) / 2**20


def build_image(base: str) -> str:
    """The base image with this repository's tools/ as the workspace to read and search."""
    with DockerSandbox(image=base, labels=LABELS) as sb:
        sb.put(REPO / "tools", "tools")
        return sb.snapshot("bench-rollout")


def bench_resets(spec: RuntimeSpec, n: int, *, prestart: bool, episode_s: float = 0.0) -> list[float]:
    """Seconds per reset of one environment, n times after a warm-up; `episode_s` of tool calls between."""
    out = []
    with Environment(spec, labels=LABELS, prestart=prestart) as env:
        env.reset()
        for _ in range(n):
            end = time.perf_counter() + episode_s
            while time.perf_counter() < end:
                env.step("read_file", {"path": "tools/base.py"})
                time.sleep(0.05)
            start = time.perf_counter()
            info = env.reset()
            out.append(time.perf_counter() - start)
            assert info["prestarted"] == prestart, info
    return out


def bench_alive(spec: RuntimeSpec, n: int, seconds: float, think_s: float = 0.0) -> dict[str, float]:
    """n environments alive at once, each driven by its own thread for `seconds`, pausing `think_s`
    after each call."""
    envs = [Environment(spec, labels=LABELS) for _ in range(n)]
    try:
        rss_before = _rss_mb()
        resets = [threading.Thread(target=e.reset) for e in envs]
        for t in resets:
            t.start()
        for t in resets:
            t.join()
        assert all(e.container_id for e in envs), "an environment did not start"
        latencies: list[list[float]] = [[] for _ in envs]
        errors: list[str] = []
        barrier = threading.Barrier(n + 1)

        def drive(i: int) -> None:
            barrier.wait()
            end = time.perf_counter() + seconds
            k = 0
            while time.perf_counter() < end:
                name, args = CALLS[k % len(CALLS)]
                start = time.perf_counter()
                obs = envs[i].step(name, args)
                latencies[i].append((time.perf_counter() - start) * 1000)
                if obs.is_error:
                    errors.append(obs.output[:200])
                k += 1
                if think_s:
                    time.sleep(think_s)

        threads = [threading.Thread(target=drive, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        barrier.wait()
        start = time.perf_counter()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        assert not errors, errors[:3]
        rss_growth = _rss_mb() - rss_before
        mem = [_container_mb(e.container_id or "") for e in envs]
        flat = [ms for per_env in latencies for ms in per_env]
        return {
            "calls_per_s": len(flat) / elapsed,
            "tool_p50_ms": _pct(flat, 0.5),
            "tool_p99_ms": _pct(flat, 0.99),
            "tool_max_ms": max(flat),
            "container_mb": sum(m[0] for m in mem) / n,
            "container_rss_mb": sum(m[1] for m in mem) / n,
            "rss_mb_per_env": rss_growth / n,
            "calls": len(flat),
        }
    finally:
        for e in envs:
            e.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=20, help="resets timed for the reset latency")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of tool calls per size")
    parser.add_argument("--sizes", default="1,8,32", help="numbers of environments alive at once")
    parser.add_argument("--think-ms", type=float, default=100.0, help="pause after each call when paced")
    a = parser.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    image = build_image(ensure_base_image(python="3.11"))
    try:
        spec = RuntimeSpec(image=image)
        resets = bench_resets(spec, a.resets, prestart=False)
        warm = bench_resets(spec, a.resets, prestart=True, episode_s=1.0)
        rows = {n: bench_alive(spec, n, a.seconds) for n in sizes}
        paced = {n: bench_alive(spec, n, a.seconds, a.think_ms / 1000) for n in sizes}
    finally:
        remove_image(image)
    print(
        f"reset (fresh container + tool session), {len(resets)} runs: p50 {_pct(resets, 0.5):.3f} s, "
        f"p99 {_pct(resets, 0.99):.3f} s, max {max(resets):.3f} s  [{os.cpu_count()} cores]"
    )
    print(
        f"reset with a prestarted next episode (1 s episodes): p50 {_pct(warm, 0.5):.3f} s, "
        f"p99 {_pct(warm, 0.99):.3f} s"
    )
    print(
        f"{'envs':>5}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'ctr MiB':>9}{'ctr rss':>9}"
        f"{'host MiB':>10}"
    )
    for n, r in rows.items():
        print(
            f"{n:>5}{r['calls_per_s']:>10.0f}{r['tool_p50_ms']:>9.2f}{r['tool_p99_ms']:>9.2f}"
            f"{r['tool_max_ms']:>9.1f}{r['container_mb']:>9.1f}{r['container_rss_mb']:>9.1f}"
            f"{r['rss_mb_per_env']:>10.2f}"
        )
    print(f"paced ({a.think_ms:g} ms pause after each call):")
    for n, r in paced.items():
        print(
            f"{n:>5}{r['calls_per_s']:>10.0f}{r['tool_p50_ms']:>9.2f}{r['tool_p99_ms']:>9.2f}{r['tool_max_ms']:>9.1f}"
        )
    print(
        "ctr MiB: cgroup memory.usage_in_bytes per container (page cache included); ctr rss: its total_rss; "
        "host MiB: growth of this process's RSS / envs"
    )
    out: dict[str, float] = {
        "reset_p50_s": round(_pct(resets, 0.5), 3),
        "reset_p99_s": round(_pct(resets, 0.99), 3),
        "reset_prestarted_p50_s": round(_pct(warm, 0.5), 3),
        "reset_prestarted_p99_s": round(_pct(warm, 0.99), 3),
        "think_ms": a.think_ms,
    }
    for n, r in rows.items():
        out |= {
            f"calls_per_s_{n}": round(r["calls_per_s"]),
            f"tool_p50_ms_{n}": round(r["tool_p50_ms"], 2),
            f"tool_p99_ms_{n}": round(r["tool_p99_ms"], 2),
            f"container_mb_{n}": round(r["container_mb"], 1),
            f"container_rss_mb_{n}": round(r["container_rss_mb"], 1),
            f"rss_mb_per_env_{n}": round(r["rss_mb_per_env"], 2),
            f"paced_calls_per_s_{n}": round(paced[n]["calls_per_s"]),
            f"paced_tool_p99_ms_{n}": round(paced[n]["tool_p99_ms"], 2),
        }
    largest = max(rows)
    out["rss_mb_per_env"] = round(rows[largest]["rss_mb_per_env"], 2)
    out["container_mb_per_env"] = round(rows[largest]["container_mb"], 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
