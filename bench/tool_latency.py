"""Tool-server latency against one `docker exec` per call, on one container from the base image.

    uv run python bench/tool_latency.py [--calls 500] [--starts 10]

Prints a table, then (last line) one JSON object with the numbers.
"""
from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from envs.baseimage import ensure_base_image
from envs.docker import DockerSandbox
from tools import ToolSession, call_tool

REPO = Path(__file__).resolve().parents[1]
CALLERS = 32


def _timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _pct(ms: list[float], q: float) -> float:
    ordered = sorted(ms)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _checked(session: ToolSession, name: str, args: dict[str, object]) -> Callable[[], None]:
    def call() -> None:
        r = call_tool(session, name, args)
        assert not r.is_error, r.output
    return call


def _throughput(session: ToolSession, per_caller: int) -> float:
    call = _checked(session, "read_file", {"path": "tools/base.py", "end_line": 20})
    barrier = threading.Barrier(CALLERS + 1)

    def worker() -> None:
        barrier.wait()
        for _ in range(per_caller):
            call()

    threads = [threading.Thread(target=worker) for _ in range(CALLERS)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return CALLERS * per_caller / (time.perf_counter() - start)


def _first_call(image: str, starts: int) -> list[float]:
    """Seconds from `start the container` to the answer of the first read_file."""
    out = []
    for _ in range(starts):
        start = time.perf_counter()
        sb = DockerSandbox(image=image).start()
        try:
            with ToolSession(sb) as session:
                r = call_tool(session, "read_file", {"path": "."})
                assert not r.is_error, r.output
                out.append(time.perf_counter() - start)
        finally:
            sb.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="calls per tool-server measurement")
    parser.add_argument("--exec-calls", type=int, default=40, help="calls per docker-exec measurement")
    parser.add_argument("--starts", type=int, default=10, help="container starts for first-call time")
    a = parser.parse_args()
    image = ensure_base_image(python="3.11")
    rows: dict[str, list[float]] = {}
    with DockerSandbox(image=image) as sb:
        sb.put(REPO / "tools", "tools")
        with ToolSession(sb) as session:
            read = _checked(session, "read_file", {"path": "tools/base.py"})
            search = _checked(session, "search", {"pattern": "def run", "path": "tools"})
            true = _checked(session, "terminal", {"command": "true"})
            for fn in (read, search, true):
                _timed(fn, 20)  # warm up
            rows["read_file (server)"] = _timed(read, a.calls)
            rows["search (server)"] = _timed(search, a.calls)
            rows["terminal true (server)"] = _timed(true, a.calls)
            rows["cat (docker exec)"] = _timed(lambda: sb.exec(["cat", "tools/base.py"]), a.exec_calls)
            rows["grep -rn (docker exec)"] = _timed(lambda: sb.exec(["grep", "-rn", "def run", "tools"]),
                                                   a.exec_calls)
            rows["true (docker exec)"] = _timed(lambda: sb.exec(["true"]), a.exec_calls)
            rate = _throughput(session, max(a.calls // 10, 20))
    first = _first_call(image, a.starts)

    print(f"{'operation':<26}{'p50 ms':>10}{'p99 ms':>10}{'n':>6}")
    for name, ms in rows.items():
        print(f"{name:<26}{_pct(ms, 0.5):>10.3f}{_pct(ms, 0.99):>10.3f}{len(ms):>6}")
    print(f"{CALLERS} concurrent callers: {rate:,.0f} read_file calls/s")
    print(f"image -> first tool call: p50 {statistics.median(first):.3f} s, max {max(first):.3f} s")
    read_p50 = _pct(rows["read_file (server)"], 0.5)
    exec_p50 = _pct(rows["cat (docker exec)"], 0.5)
    print(json.dumps({
        "read_file_p50_ms": round(read_p50, 3), "read_file_p99_ms": round(_pct(rows["read_file (server)"], 0.99), 3),
        "search_p50_ms": round(_pct(rows["search (server)"], 0.5), 3),
        "terminal_p50_ms": round(_pct(rows["terminal true (server)"], 0.5), 3),
        "docker_exec_p50_ms": round(exec_p50, 3),
        "docker_exec_true_p50_ms": round(_pct(rows["true (docker exec)"], 0.5), 3),
        "speedup_vs_docker_exec": round(exec_p50 / read_p50, 1), "calls_per_s_32": round(rate),
        "first_call_p50_s": round(statistics.median(first), 3),
    }))


if __name__ == "__main__":
    main()
