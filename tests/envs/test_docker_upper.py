"""A container's own changes read from overlay2's upper directory on the host (envs/docker/upper.py): a whiteout is
deleted, what no lower layer holds is added, the rest changed; no readable overlay2 layer, no list."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from envs.docker.upper import layer_changes, layer_dirs


@pytest.mark.skipif(os.geteuid() != 0, reason="a whiteout is a device node: making one needs root")
def test_the_upper_directory_is_read_as_the_engine_lists_it(tmp_path: Path) -> None:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    (lower / "etc").mkdir(parents=True)
    (lower / "etc" / "conf").write_text("image")
    (lower / "etc" / "gone").write_text("image")
    (upper / "etc").mkdir(parents=True)
    (upper / "etc" / "conf").write_text("rewritten")
    (upper / "root" / ".npm").mkdir(parents=True)
    (upper / "root" / ".npm" / "log").write_text("new")
    os.mknod(upper / "etc" / "gone", stat.S_IFCHR | 0o600, os.makedev(0, 0))  # overlayfs's whiteout
    assert sorted(layer_changes(str(upper), (str(lower),)) or []) == [
        ("A", "/root"), ("A", "/root/.npm"), ("A", "/root/.npm/log"),
        ("C", "/etc"), ("C", "/etc/conf"), ("D", "/etc/gone")]
    assert layer_changes(str(tmp_path / "missing"), ()) is None  # not read whole: the caller walks instead


def test_only_a_readable_overlay2_layer_is_read(tmp_path: Path) -> None:
    data = {"UpperDir": str(tmp_path), "LowerDir": f"{tmp_path}:{tmp_path}"}
    assert layer_dirs({"Name": "overlay2", "Data": data}) == (str(tmp_path), (str(tmp_path), str(tmp_path)))
    assert layer_dirs({"Name": "btrfs", "Data": data}) is None
    assert layer_dirs({"Name": "overlay2", "Data": {"UpperDir": str(tmp_path / "elsewhere")}}) is None
    assert layer_dirs({"Name": "overlay2", "Data": {**data, "LowerDir": str(tmp_path / "gone")}}) is None
    assert layer_dirs({}) is None


def test_a_link_in_a_lower_layer_is_never_followed_out_of_it(tmp_path: Path) -> None:
    """An image's link to this host's paths (a build step can plant `/opt/x -> /etc`) is not resolved on the host:
    whether /etc/passwd exists here says nothing of the container, and is never looked at."""
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    lower.mkdir()
    (lower / "opt").symlink_to("/etc")
    (lower / "rel").symlink_to("missing-in-layer")
    (upper / "opt").mkdir(parents=True)
    (upper / "opt" / "passwd").write_text("x")  # this host has /etc/passwd
    (upper / "opt" / "no-such-file-on-any-host").write_text("x")
    (upper / "fresh").write_text("x")
    changes = dict((path, kind) for kind, path in layer_changes(str(upper), (str(lower),)) or [])
    assert changes == {"/opt": "C", "/opt/passwd": "C", "/opt/no-such-file-on-any-host": "C", "/fresh": "A"}


def test_a_layer_past_the_cap_is_left_to_the_walk_inside_the_container(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from envs.docker import upper as module

    monkeypatch.setattr(module, "MAX_ENTRIES", 3)
    for i in range(4):
        (tmp_path / "upper" / f"f{i}").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "upper" / f"f{i}").write_text("x")
    assert layer_changes(str(tmp_path / "upper"), ()) is None
