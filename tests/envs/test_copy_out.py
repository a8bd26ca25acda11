"""A sandbox's files copied out onto the host (`Sandbox.get`) are data: a link the sandbox's code planted to a
host file (`/etc/shadow`, `../../x`, through a link to `.`) is left out, so the host never reads what it points
at, and a FIFO or device is left out, so reading the copy never blocks. Hostile fixture: a tree with each
(crafted as the engine's tar stream, no Docker; then planted by a command in a real container)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from envs.docker.files import FilesMixin
from tests.envs.conftest import SMALL, make_sandbox

SECRET = "hostsecret-7f3a"


class _Stream(FilesMixin):
    """`get` over a given archive instead of a container's."""

    def __init__(self, archive: bytes) -> None:
        self.archive = archive

    @contextmanager
    def _archive(self, path: str) -> Iterator[io.BytesIO]:
        yield io.BytesIO(self.archive)


def _member(name: str, kind: bytes, link: str = "", data: bytes = b"") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info, data


def _archive(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out.getvalue()


def _assert_only_safe(copy: Path, host_secret: Path) -> None:
    """Nothing under `copy` reads the host's secret or blocks: no special file, no link leaving `copy`."""
    root = os.path.realpath(copy)
    for folder, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            real = os.path.realpath(path)
            assert real == root or real.startswith(root + os.sep), f"{path} leads to {real}"
            assert os.path.islink(path) or os.path.isdir(path) or os.path.isfile(path), f"{path} is special"
            if os.path.isfile(path):
                assert SECRET not in Path(path).read_text(errors="replace")
    assert host_secret.read_text() == SECRET


def test_links_out_and_special_files_in_an_archive_are_left_out_of_the_copy(tmp_path: Path) -> None:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    hops = "../" * 12
    archive = _archive([
        _member("stubs", tarfile.DIRTYPE),
        _member("stubs/abs.whl", tarfile.SYMTYPE, str(secret)),
        _member("stubs/up.whl", tarfile.SYMTYPE, f"{hops}{str(secret).lstrip('/')}"),
        _member("stubs/dot", tarfile.SYMTYPE, "."),
        _member("stubs/through.whl", tarfile.SYMTYPE, f"dot/dot/{hops}{str(secret).lstrip('/')}"),
        _member("stubs/hard.whl", tarfile.LNKTYPE, str(secret)),
        _member("stubs/pipe.whl", tarfile.FIFOTYPE),
        _member("stubs/tty.whl", tarfile.CHRTYPE),
        _member("stubs/ok.whl", tarfile.REGTYPE, data=b"wheel"),
        _member("stubs/inside.whl", tarfile.SYMTYPE, "ok.whl"),
    ])
    copy = tmp_path / "out" / "stubs"
    _Stream(archive).get("/opt/stubs", copy)
    assert sorted(p.name for p in copy.iterdir()) == ["dot", "inside.whl", "ok.whl"]
    assert {p.name: p.read_bytes() for p in copy.glob("*.whl")} == {"ok.whl": b"wheel", "inside.whl": b"wheel"}
    _assert_only_safe(copy, secret)


@pytest.mark.docker
def test_what_a_container_plants_is_not_followed_on_the_host(request: pytest.FixtureRequest,
                                                             tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    with make_sandbox(request, "docker", limits=SMALL) as sandbox:
        plant = (f"mkdir -p /opt/s && cd /opt/s && echo ok > ok.whl && ln -s {secret} abs.whl && "
                 f"ln -s ../../../..{secret} up.whl && ln -s . dot && mkfifo pipe.whl && ln -s ok.whl inside.whl")
        planted = sandbox.exec(["sh", "-c", plant])
        assert planted.ok, planted.stderr
        sandbox.get("/opt/s", tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["dot", "inside.whl", "ok.whl"]
    _assert_only_safe(tmp_path / "copy", secret)
