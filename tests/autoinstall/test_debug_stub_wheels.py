"""What `autoinstall debug` reads back of the stub wheels baked into an image (the replay context needs them):
only the regular `*.whl` files of the stub folder, each up to a cap, a bounded number of them. The container is
the user's session's and the project's: before, the whole folder was copied to the host and every `*.whl` in it
read into the host's memory, however large. Needs Docker; fails under CI when it is missing."""
from __future__ import annotations

import pytest

from autoinstall.debug.shell import MAX_STUB_WHEELS, STUB_WHEEL_CAP, DebugShell
from autoinstall.ecosystems.base import STUB_DIR
from envs.spec import EnvSpec, Plan, SourceRecord, StubRecord

pytestmark = pytest.mark.docker


def test_only_small_regular_wheels_come_back(base_image: str) -> None:
    spec = EnvSpec(status="verified", source=SourceRecord(repo="r", name="r"), model="embedded", plan=Plan(),
                   stubs=[StubRecord(distribution="gone", import_name="gone", reason="no registry has it")])
    plant = (f"mkdir -p {STUB_DIR} && cd {STUB_DIR} && printf wheel > gone-1.0-py3-none-any.whl && "
             f"truncate -s {STUB_WHEEL_CAP + 1} big-1.0-py3-none-any.whl && ln -s /etc/passwd link.whl && "
             "mkfifo pipe.whl && mkdir dir.whl && printf inner > dir.whl/inner.whl && "
             f"for i in $(seq 1 {MAX_STUB_WHEELS + 50}); do printf x > many-$i.whl; done")
    with DebugShell(base_image, env_id="stubs-test") as shell:
        planted = shell.sandbox.exec(["sh", "-c", plant])
        assert planted.ok, planted.stderr
        wheels = shell.stub_wheels(spec)
        assert shell.stub_wheels(spec.model_copy(update={"stubs": []})) == {}
    assert wheels.get("gone-1.0-py3-none-any.whl") == b"wheel"
    assert not {"big-1.0-py3-none-any.whl", "link.whl", "pipe.whl", "dir.whl", "inner.whl"} & set(wheels)
    assert len(wheels) == MAX_STUB_WHEELS and set(wheels.values()) <= {b"wheel", b"x"}
