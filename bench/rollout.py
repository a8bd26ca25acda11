"""Rollouts at training scale: 64 environments of a verified dev-set image alive at once on this machine.

    uv run python bench/rollout.py [--env CATALOG_ID] [--envs 64] [--seconds 20] [--busy-seconds 10]
                                   [--think-ms 100] [--reset-samples 200] [--resetters 4] [--forks 10]
                                   [--procs 1] [--phase staggered|lockstep] [--no-baseline]
                                   [--terminal-command 'ls | head -5'] [--no-builtin-baseline]

(a) every environment runs a mixed tool load (read_file of a source file, search in it, edit_file, terminal
`ls | head -5`, round and round; file, line count and pattern taken from the environment's own workspace, whatever its
language, and every call played once before the run: bench/mix.py) from a thread of its own with a --think-ms pause
after each call: tool latency p50/p99 over every call, and how busy the machine's cores were; (b) the same load back
to back: calls/s, and the CPU per call split between the containers, the engine (dockerd, containerd, shims), this
harness and the rest of the machine, with the containers' CFS throttling (bench/cpuuse.py). The loads start --phase
staggered (environment i at tool i % 4 and i/n of a pause late), not in lockstep (all at once at the same tool, so
that every round is 64 calls of one tool: a burst of 64 `ls | head -5` every ~100 ms); same calls, same pauses,
every sample counted. --procs N spreads the environments over N worker processes forked after they started, each
timing its own calls, as a trainer's rollout workers would (bench/workers.py); the default is 1 (threads of this
process) because, measured here, this harness's GIL is not what limits: it uses ~0.2 ms of CPU per call (~20% of one
core at 1,000 calls/s), and 2 or 4 processes gave no more calls/s and no lower p99. With --baseline (the default)
(a) and (b) run again the first way, in the same run: one process, lockstep (keys `..._1proc_lockstep`). With
--builtin-baseline (the default) they run once more with the terminal running `:`, a shell builtin, so no process is
started (keys `..._builtin_terminal`): what the runtime itself costs, against which the main figures show what the
terminal's process start-ups cost on this machine.
(c) resets timed while the other environments run (a), during --episode-s episodes: --resetters environments reset
in place (the default: processes killed, changed files copied back; each resets once untimed first, which starts
the image's pristine container) and as many again, the baseline (`in_place=False`), swap to
a prestarted container, the old one's removal included; (d) fork time (`Environment.fork()`: the files the
episode changed copied into the prestarted container), alternating with the baseline `fork(copy=False)` (commit
+ a new container + its tool server); (e) memory per environment: its
container's cgroup (RSS and page cache), its containerd shim, and this process's growth, and the CPU
idle containers burn (container processes by cgroup RSS, shims by PSS). Prints a table, then (last line) one
JSON object. Every container it starts is removed at the end, even on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cpuuse import CpuSplit, container_ns, engine_s  # noqa: E402
from bench.devset import dev_spec  # noqa: E402
from bench.mix import SCRATCH, SCRATCH_ARGS, TERMINAL_COMMAND, TOOLS, Mix, discover  # noqa: E402
from bench.workers import PHASES, drive  # noqa: E402
from envs.runtime import Environment  # noqa: E402

LABELS = {"autoinstall.bench": "rollout"}
CGROUP = Path("/sys/fs/cgroup")
START_WORKERS = 8
BUILTIN_COMMAND = ":"
"""The same-run diagnostic's terminal command: a shell builtin, no process started (--builtin-baseline)."""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _rss_mib(pid: int | str = "self") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _pss_mib(pid: str) -> float:
    """Proportional set size: shared pages (the shim binary's code) split among the processes sharing them."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return _rss_mib(pid)


def _container_mem(cid: str) -> tuple[float, float]:
    """(rss, cache) in MiB of one container from its cgroup v1 memory controller; nan when absent."""
    try:
        text = (CGROUP / "memory/docker" / cid / "memory.stat").read_text()
    except OSError:
        return float("nan"), float("nan")
    stat = dict(line.split() for line in text.splitlines())
    return int(stat.get("total_rss", 0)) / 2**20, int(stat.get("total_cache", 0)) / 2**20


def _shim_mib(cids: set[str]) -> float:
    """PSS of the containerd shims of these containers (one process each)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if args and b"containerd-shim" in args[0] and "-id" in (a.decode() for a in args):
            if args[args.index(b"-id") + 1].decode() in cids:
                total += _pss_mib(entry.name)
    return total


class Load:
    """One environment's mixed tool load (bench/mix.py): read, search, edit, terminal, round and round."""

    def __init__(self, env: Environment, mix: Mix) -> None:
        self.env, self.mix, self.k, self.value = env, mix, 0, 0
        self.latencies: list[float] = []
        self.by_tool: dict[str, list[float]] = {}
        self.errors: list[str] = []

    def prepare(self) -> None:
        self.k, self.value = 0, 0
        self.env.step("create_file", SCRATCH_ARGS)

    def call(self) -> None:
        k, self.k = self.k, self.k + 1
        name, args = self.mix.call(k, self.value)
        start = time.perf_counter()
        obs = self.env.step(name, args)
        ms = (time.perf_counter() - start) * 1000
        self.latencies.append(ms)
        self.by_tool.setdefault(name, []).append(ms)
        if obs.is_error:
            self.errors.append(f"{name}: {obs.output[:200]}")
        elif name == "edit_file":
            self.value = 1 - self.value

    def run(self, seconds: float, think_s: float, stop: threading.Event | None = None) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end and not (stop and stop.is_set()):
            self.call()
            if think_s:
                time.sleep(think_s)


def _resets_under_load(loads: list[Load], resetters: int, samples: int, think_s: float,
                       episode_s: float) -> tuple[list[float], list[float]]:
    """Seconds per reset of the first `resetters` environments (in place) and of the next `resetters` (the
    baseline: prestarted, the old container's removal included), each in a loop of `episode_s` episodes of
    paced calls, while the others run the paced load; `samples` resets of each kind."""
    busy, resetting = loads[2 * resetters:], loads[:2 * resetters]
    stop = threading.Event()
    timings: tuple[list[float], list[float]] = ([], [])
    lock = threading.Lock()

    def reset_loop(load: Load, mine: list[float]) -> None:
        while True:
            with lock:
                if len(mine) >= samples:
                    return
            start = time.perf_counter()
            info = load.env.reset()
            load.env.wait_removed()
            elapsed = time.perf_counter() - start
            assert info["in_place"] == load.env.in_place, info  # in place, or (baseline) a fresh container
            load.prepare()
            with lock:
                mine.append(elapsed)
            load.run(episode_s, think_s)  # an episode: the baseline's next container starts meanwhile

    workers = [threading.Thread(target=lo.run, args=(3600, think_s, stop)) for lo in busy]
    workers += [threading.Thread(target=reset_loop, args=(lo, timings[i >= resetters]))
                for i, lo in enumerate(resetting)]
    for t in workers:
        t.start()
    for t in workers[len(busy):]:
        t.join()
    stop.set()
    for t in workers[: len(busy)]:
        t.join()
    return timings


def _forks(env: Environment, n: int) -> tuple[list[float], list[float]]:
    """Seconds per fork by copy and (baseline) by commit, alternating, `n` of each."""
    out: tuple[list[float], list[float]] = ([], [])
    for _ in range(n):
        for copy, times in ((True, out[0]), (False, out[1])):
            start = time.perf_counter()
            child = env.fork(copy=copy)
            times.append(time.perf_counter() - start)
            assert child.step("read_file", {"path": SCRATCH}).output.endswith(("value = 0\n", "value = 1\n"))
            child.close()
    return out


def _memory(envs: list[Environment], rss_before: float, idle_s: float = 5.0) -> dict[str, float]:
    cids = [e.container_id or "" for e in envs]
    cpu0, engine0 = [container_ns(c) for c in cids], engine_s(("dockerd", "containerd"))
    time.sleep(idle_s)
    idle_cpu_ms = sum(container_ns(c) - c0 for c, c0 in zip(cids, cpu0, strict=True)) / 1e6 / idle_s / len(cids)
    engine_ms = (engine_s(("dockerd", "containerd")) - engine0) * 1000 / idle_s
    mem = [_container_mem(c) for c in cids]
    rss = statistics.mean(m[0] for m in mem)
    cache = statistics.mean(m[1] for m in mem)
    shim = _shim_mib(set(cids)) / len(cids)
    host = (_rss_mib() - rss_before) / len(cids)
    return {"container_rss_mib": rss, "container_cache_mib": cache, "shim_mib": shim, "host_mib": host,
            "mib_per_env": rss + shim + host, "idle_cpu_ms_per_s": idle_cpu_ms, "engine_idle_ms_per_s": engine_ms}


def _mode(loads: list[Load], cids: list[str], a: argparse.Namespace, think: float, procs: int,
          phase: str) -> dict[str, Any]:
    """(a) and (b) driven from `procs` processes with loads started in `phase`; their figures."""
    meters: list[CpuSplit] = []
    paced, paced_s = drive(loads, a.seconds, think, procs, phase, lambda: meters.append(CpuSplit(cids)))
    paced_cpu = meters[-1].per_call(len(paced))
    by_tool = {name: [ms for lo in loads for ms in lo.by_tool.get(name, [])] for name in TOOLS}
    busy, busy_s = drive(loads, a.busy_seconds, 0.0, procs, phase, lambda: meters.append(CpuSplit(cids)))
    busy_cpu = meters[-1].per_call(len(busy))
    return {"procs": procs, "phase": phase, "paced": paced, "by_tool": by_tool, "busy": busy,
            "paced_util": paced_cpu["machine"] * len(paced) / 1000 / paced_s / (os.cpu_count() or 1),
            "calls_per_s": len(busy) / busy_s, "cpu_ms_per_call": busy_cpu}


def _mode_line(m: dict[str, Any], think_ms: float) -> str:
    paced, busy = m["paced"], m["busy"]
    by_tool = ", ".join(f"{k} {_pct(v, 0.99):.1f}" for k, v in m["by_tool"].items())
    cpu = ", ".join(f"{k} {m['cpu_ms_per_call'][k]:.2f}" for k in ("containers", "engine", "harness", "other"))
    return (f"{m['procs']} process(es), {m['phase']}:\n"
            f"(a) paced ({think_ms:g} ms think), {len(paced)} calls: p50 {_pct(paced, 0.5):.2f} ms, "
            f"p99 {_pct(paced, 0.99):.2f} ms, max {max(paced):.1f} ms; p99 by tool: {by_tool}; the machine's cores "
            f"{m['paced_util']:.0%} busy\n"
            f"(b) back to back, {len(busy)} calls: {m['calls_per_s']:,.0f} calls/s, p50 {_pct(busy, 0.5):.2f} ms, "
            f"p99 {_pct(busy, 0.99):.2f} ms; CPU ms per call: {cpu} (machine {m['cpu_ms_per_call']['machine']:.2f}); "
            f"CFS periods throttled: {m['cpu_ms_per_call']['throttled']} of {m['cpu_ms_per_call']['periods']}")


def _mode_keys(m: dict[str, Any], suffix: str = "") -> dict[str, Any]:
    return {f"tool_p50_ms_64_think{suffix}": round(_pct(m["paced"], 0.5), 2),
            f"tool_p99_ms_64_think{suffix}": round(_pct(m["paced"], 0.99), 2),
            f"tool_p99_ms_64_think_by_tool{suffix}": {k: round(_pct(v, 0.99), 2) for k, v in m["by_tool"].items()},
            f"calls_per_s_64{suffix}": round(m["calls_per_s"]), f"busy_p99_ms_64{suffix}": round(_pct(m["busy"], 0.99), 2),
            f"cpu_ms_per_call_busy{suffix}": m["cpu_ms_per_call"], f"paced_cpu_busy{suffix}": round(m["paced_util"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", help="catalog id of a verified environment (default: the largest Python one)")
    parser.add_argument("--envs", type=int, default=64, help="environments alive at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of the paced load (a)")
    parser.add_argument("--busy-seconds", type=float, default=10.0, help="seconds of back-to-back load (b)")
    parser.add_argument("--think-ms", type=float, default=100.0, help="pause after each call in (a) and (c)")
    parser.add_argument("--reset-samples", type=int, default=200, help="resets timed in (c)")
    parser.add_argument("--resetters", type=int, default=4, help="environments resetting in a loop in (c), in "
                        "place (and as many again for the baseline)")
    parser.add_argument("--episode-s", type=float, default=2.0, help="episode length between resets in (c)")
    parser.add_argument("--forks", type=int, default=10, help="forks timed in (d)")
    parser.add_argument("--procs", type=int, default=1, help="processes driving (a) and (b), each its share of "
                        "the environments (1, the default: threads of this process; bench/workers.py)")
    parser.add_argument("--phase", choices=PHASES, default="staggered", help="how the loads start (bench/workers.py)")
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                        help="also run (a) and (b) the first way, for comparison: 1 process, lockstep")
    parser.add_argument("--terminal-command", default=TERMINAL_COMMAND, help="the terminal's command in the mix")
    parser.add_argument("--builtin-baseline", action=argparse.BooleanOptionalAction, default=True,
                        help=f"also run (a) and (b) with the terminal running `{BUILTIN_COMMAND}` (a builtin: no "
                        "process started), to tell the runtime's own cost from the process start-ups' (keys "
                        "`..._builtin_terminal`)")
    a = parser.parse_args()
    name, spec = dev_spec(a.env)
    think = a.think_ms / 1000
    load_start = os.getloadavg()[0]
    rss_before = _rss_mib()
    envs = [Environment(spec, labels=LABELS, in_place=i < a.resetters,
                        prestart=a.resetters <= i < 2 * a.resetters or i == a.envs - 1) for i in range(a.envs)]
    try:
        start = time.perf_counter()
        with ThreadPoolExecutor(START_WORKERS) as pool:
            list(pool.map(lambda e: e.reset(), envs))
            list(pool.map(lambda e: e.reset(), envs[: a.resetters]))  # the first in place: starts the pristine one
        startup_s = time.perf_counter() - start
        mix = discover(envs[0].step, name, command=a.terminal_command)
        loads = [Load(e, mix) for e in envs]
        for lo in loads:
            lo.prepare()
        memory = _memory(envs, rss_before)
        modes = [(a.procs, a.phase)] + [(1, "lockstep")] * (a.baseline and (a.procs, a.phase) != (1, "lockstep"))
        cids = [e.container_id or "" for e in envs]
        main_mode, *baseline = [_mode(loads, cids, a, think, procs, phase) for procs, phase in modes]
        builtin = None
        if a.builtin_baseline:
            for lo in loads:
                lo.mix = replace(mix, command=BUILTIN_COMMAND)
            builtin = _mode(loads, cids, a, think, a.procs, a.phase)
        for lo in loads:  # (c) runs the real mix again; worker processes moved the scratch files on
            lo.mix = mix
            lo.prepare()
        resets, swaps = _resets_under_load(loads, a.resetters, a.reset_samples, think, a.episode_s)
        forks, commits = _forks(envs[-1], a.forks)
    finally:
        with ThreadPoolExecutor(START_WORKERS) as pool:
            list(pool.map(lambda e: e.close(), envs))
    load_end = os.getloadavg()[0]
    print(f"environment: {name} ({spec.image}); {a.envs} alive, started in {startup_s:.1f} s; file {mix.path} "
          f"({mix.lines} lines), search {mix.pattern!r}")
    for m in [main_mode, *baseline]:
        print(_mode_line(m, a.think_ms))
    if builtin is not None:
        print(f"the same with the terminal running `{BUILTIN_COMMAND}` (no process started): "
              + _mode_line(builtin, a.think_ms))
    print(f"(c) {len(resets)} resets in place ({a.resetters} resetting, {a.envs - 2 * a.resetters} under paced "
          f"load): p50 {_pct(resets, 0.5):.3f} s, p99 {_pct(resets, 0.99):.3f} s; baseline, {len(swaps)} swaps to "
          f"a prestarted container, teardown included: p50 {_pct(swaps, 0.5):.3f} s, p99 {_pct(swaps, 0.99):.3f} s")
    print(f"(d) fork by copy: p50 {statistics.median(forks):.3f} s, max {max(forks):.3f} s over {len(forks)}; "
          f"baseline by commit: p50 {statistics.median(commits):.3f} s, max {max(commits):.3f} s")
    print("(e) per environment: container rss {container_rss_mib:.1f} MiB (+ page cache {container_cache_mib:.1f}), "
          "shim {shim_mib:.1f} MiB, host {host_mib:.2f} MiB -> {mib_per_env:.1f} MiB; idle CPU "
          "{idle_cpu_ms_per_s:.2f} ms/s (engine, all containers: {engine_idle_ms_per_s:.1f} ms/s)".format(**memory))
    print(f"load average (1 min) at start / end: {load_start:.1f} / {load_end:.1f} on {os.cpu_count()} cores "
          "(shared with other work)")
    out: dict[str, Any] = {
        "env": name, "envs": a.envs, "think_ms": a.think_ms, "startup_s": round(startup_s, 1),
        "procs": a.procs, "phase": a.phase, **_mode_keys(main_mode),
        **{k: v for m in baseline for k, v in _mode_keys(m, "_1proc_lockstep").items()},
        **(_mode_keys(builtin, "_builtin_terminal") if builtin is not None else {}),
        "terminal_command": a.terminal_command, "file": mix.path, "search_pattern": mix.pattern,
        "reset_p50_under_load_s": round(_pct(resets, 0.5), 3), "reset_p99_under_load_s": round(_pct(resets, 0.99), 3),
        "reset_samples": len(resets), "resetters": a.resetters, "reset_in_place": True,
        "reset_swap_p50_under_load_s": round(_pct(swaps, 0.5), 3),
        "reset_swap_p99_under_load_s": round(_pct(swaps, 0.99), 3), "episode_s": a.episode_s,
        "fork_s": round(statistics.median(forks), 3), "fork_max_s": round(max(forks), 3),
        "fork_commit_s": round(statistics.median(commits), 3), "fork_commit_max_s": round(max(commits), 3),
        "mib_per_env": round(memory["mib_per_env"], 1), "container_rss_mib": round(memory["container_rss_mib"], 1),
        "shim_mib": round(memory["shim_mib"], 1), "host_mib_per_env": round(memory["host_mib"], 2),
        "idle_cpu_ms_per_s_per_env": round(memory["idle_cpu_ms_per_s"], 3),
        "engine_idle_cpu_ms_per_s": round(memory["engine_idle_ms_per_s"], 1),
        "load_avg_1m": [round(load_start, 1), round(load_end, 1)], "cores": os.cpu_count(),
    }
    if a.envs != 64:  # the keys name 64; say so when the run had another size
        out["note"] = f"run with {a.envs} environments"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
