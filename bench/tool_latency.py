"""Tool-call latency on a verified dev-set environment: the tool server over the direct channel's Unix
socket (as the runtime calls it, envs/runtime/fastcall.py, and through tools' ToolSession, whose reader thread
hands answers over) and over the exec stream, against `docker exec` (the CLI) and the Docker SDK's exec, same
run. The two socket paths are measured in alternating rounds, so that the machine's load hits both alike.

    uv run python bench/tool_latency.py [--env CATALOG_ID] [--calls 500] [--warmup 50] [--starts 10]

Every path gets the same warm-up and the same number of samples; each sample reads the same source file
of the environment's workspace, whatever its language, picked by bench/mix.py (which also plays every call once
before the run, so an environment that cannot serve them stops the bench at once, saying why). Prints a table,
then (last line) one JSON object with the numbers.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.devset import dev_spec  # noqa: E402
from bench.mix import discover  # noqa: E402
from envs.docker import DockerSandbox  # noqa: E402
from envs.runtime.fastcall import DirectSession  # noqa: E402
from tools import ToolSession, call_tool  # noqa: E402

CALLERS = 32
SEARCH_PATTERN = "def |func |fn "
"""Searched over the whole workspace; a word of the file read instead where it does not occur there."""
LABELS = {"autoinstall.bench": "tool_latency"}


def _timed(fn: Callable[[], object], n: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _alternating(fns: dict[str, Callable[[], object]], n: int, warmup: int, rounds: int = 10) -> dict[str, list[float]]:
    """`n` timed calls of each function, in `rounds` alternating rounds (after `warmup` calls of each)."""
    out: dict[str, list[float]] = {k: [] for k in fns}
    for k, fn in fns.items():
        _timed(fn, 0, warmup)
    for r in range(rounds):
        for k, fn in fns.items():
            out[k] += _timed(fn, n // rounds + (r < n % rounds), 0)
    return out


def _pct(ms: list[float], q: float) -> float:
    ordered = sorted(ms)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _checked(session: ToolSession, name: str, args: dict[str, object]) -> Callable[[], None]:
    def call() -> None:
        r = call_tool(session, name, args)
        assert not r.is_error, r.output
    return call


def _exec_ok(fn: Callable[[], tuple[int, object]]) -> Callable[[], None]:
    def call() -> None:
        code, out = fn()
        assert code == 0, out
    return call


def _throughput(session: ToolSession, path: str, per_caller: int) -> float:
    call = _checked(session, "read_file", {"path": path, "end_line": 40})
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


def _first_call(sandbox_kwargs: dict[str, object], starts: int) -> list[float]:
    """Seconds from `start the container` to the answer of the first read_file over the socket."""
    out = []
    for _ in range(starts):
        start = time.perf_counter()
        with DockerSandbox(**sandbox_kwargs) as sb, ToolSession(sb) as session:  # type: ignore[arg-type]
            r = call_tool(session, "read_file", {"path": "."})
            assert not r.is_error and session.transport == "socket", r.output
            out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", help="catalog id of a verified environment (default: the largest Python one)")
    parser.add_argument("--calls", type=int, default=500, help="samples per path and operation")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls before each measurement")
    parser.add_argument("--starts", type=int, default=10, help="container starts for first-call time")
    a = parser.parse_args()
    name, spec = dev_spec(a.env)
    kwargs = {"image": spec.image, "workdir": spec.workdir, "env": spec.env, "network": False,
              "labels": LABELS, "channel": True}
    rows: dict[str, list[float]] = {}
    load_before = os.getloadavg()
    with DockerSandbox(**kwargs) as sb, ToolSession(sb) as via_reader, DirectSession(sb) as fast, \
            ToolSession(sb, direct=False) as slow:  # type: ignore[arg-type]
        assert fast.transport == via_reader.transport == "socket" and slow.transport == "stream"
        mix = discover(lambda tool, args: call_tool(fast, tool, args), name, pattern=SEARCH_PATTERN,
                       command="true")
        path = mix.path
        cid = sb.container_id or ""
        container = docker.from_env().containers.get(cid)
        read_args = {"path": path}
        rows |= _alternating({"read_file (socket)": _checked(fast, "read_file", read_args),
                              "read_file (socket, ToolSession)": _checked(via_reader, "read_file", read_args)},
                             a.calls, a.warmup)
        rows["read_file (stream)"] = _timed(_checked(slow, "read_file", read_args), a.calls, a.warmup)
        rows["cat (docker exec CLI)"] = _timed(_exec_ok(lambda: (lambda p: (p.returncode, p.stderr))(
            subprocess.run(["docker", "exec", "-w", spec.workdir, cid, "cat", path], capture_output=True))),
            a.calls, a.warmup)
        rows["cat (SDK exec_run)"] = _timed(_exec_ok(lambda: container.exec_run(["cat", path],
                                                                                 workdir=spec.workdir)),
                                            a.calls, a.warmup)
        rows["search (socket)"] = _timed(_checked(fast, "search", {"pattern": mix.pattern, "path": "."}),
                                         a.calls, a.warmup)
        rows["terminal true (socket)"] = _timed(_checked(fast, "terminal", {"command": "true"}), a.calls, a.warmup)
        rate = _throughput(fast, path, max(a.calls // 10, 20))
        rate_via_reader = _throughput(via_reader, path, max(a.calls // 10, 20))
    first = _first_call(kwargs, a.starts)
    load_after = os.getloadavg()

    print(f"environment: {name} ({spec.image}), file read: {path}")
    print(f"{'operation':<28}{'p50 ms':>10}{'p99 ms':>10}{'n':>6}")
    for label, ms in rows.items():
        print(f"{label:<28}{_pct(ms, 0.5):>10.3f}{_pct(ms, 0.99):>10.3f}{len(ms):>6}")
    print(f"{CALLERS} concurrent callers over the socket: {rate:,.0f} read_file calls/s "
          f"(through ToolSession: {rate_via_reader:,.0f})")
    print(f"image -> first tool call: p50 {statistics.median(first):.3f} s, max {max(first):.3f} s")
    print(f"load average (1 min) before/after: {load_before[0]:.1f} / {load_after[0]:.1f} on {os.cpu_count()} cores")
    read_p50 = _pct(rows["read_file (socket)"], 0.5)
    cli_p50 = _pct(rows["cat (docker exec CLI)"], 0.5)
    sdk_p50 = _pct(rows["cat (SDK exec_run)"], 0.5)
    print(json.dumps({
        "env": name, "file": path, "search_pattern": mix.pattern, "samples": a.calls, "warmup": a.warmup,
        "read_file_p50_ms": round(read_p50, 3), "read_file_p99_ms": round(_pct(rows["read_file (socket)"], 0.99), 3),
        "read_file_stream_p50_ms": round(_pct(rows["read_file (stream)"], 0.5), 3),
        "read_file_toolsession_p50_ms": round(_pct(rows["read_file (socket, ToolSession)"], 0.5), 3),
        "read_file_toolsession_p99_ms": round(_pct(rows["read_file (socket, ToolSession)"], 0.99), 3),
        "search_p50_ms": round(_pct(rows["search (socket)"], 0.5), 3),
        "terminal_p50_ms": round(_pct(rows["terminal true (socket)"], 0.5), 3),
        "docker_exec_cli_p50_ms": round(cli_p50, 3), "sdk_exec_p50_ms": round(sdk_p50, 3),
        "speedup_vs_docker_exec_cli": round(cli_p50 / read_p50, 1),
        "speedup_vs_sdk_exec": round(sdk_p50 / read_p50, 1), "calls_per_s_32": round(rate),
        "calls_per_s_32_toolsession": round(rate_via_reader),
        "first_call_p50_s": round(statistics.median(first), 3),
        "load_avg_1m": [round(load_before[0], 1), round(load_after[0], 1)], "cores": os.cpu_count(),
    }))


if __name__ == "__main__":
    main()
