"""Where the host finds a container's pids.events: cgroup v1's pids hierarchy, v2's unified tree, or nowhere
(an engine whose processes this host cannot see), from the container's /proc/PID/cgroup."""
from __future__ import annotations

from pathlib import Path

from envs.docker.pidslimit import events_file, refused


def _host(tmp_path: Path, cgroup: str, events: str | None) -> tuple[Path, Path, Path | None]:
    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "42").mkdir(parents=True)
    (proc / "42" / "cgroup").write_text(cgroup)
    if events is None:
        return proc, root, None
    target = root / events
    target.parent.mkdir(parents=True)
    target.write_text("max 7\n")
    return proc, root, target


def test_cgroup_v1_pids_hierarchy(tmp_path: Path) -> None:
    proc, root, target = _host(tmp_path, "12:pids:/docker/abc\n11:cpu,cpuacct:/docker/abc\n0::/system.slice\n",
                               "pids/docker/abc/pids.events")
    found = events_file(42, proc, root)
    assert found == target and found is not None and refused(found) == 7


def test_cgroup_v2_unified_tree(tmp_path: Path) -> None:
    proc, root, target = _host(tmp_path, "0::/system.slice/docker-abc.scope\n",
                               "system.slice/docker-abc.scope/pids.events")
    assert events_file(42, proc, root) == target


def test_nothing_when_the_host_cannot_see_the_process_or_its_cgroup(tmp_path: Path) -> None:
    proc, root, _ = _host(tmp_path, "12:pids:/docker/abc\n", None)
    assert events_file(42, proc, root) is None
    assert events_file(43, proc, root) is None
    assert refused(tmp_path / "gone" / "pids.events") is None
