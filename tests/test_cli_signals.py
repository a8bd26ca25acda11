"""SIGTERM to a command that started a sandbox removes the sandbox, as Ctrl-C does (a hostile-suite case:
a batch runner killed by its scheduler must not leave containers behind)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
pytestmark = pytest.mark.docker


def containers_from(image: str) -> list[str]:
    """Containers created from the tag `image` itself (not from other tags of the same image id, as
    `--filter ancestor=` would also count)."""
    out = subprocess.run(["docker", "ps", "-a", "--format", "{{.ID}} {{.Image}}"], capture_output=True,
                         text=True, check=True).stdout
    return [cid for cid, _, name in (line.partition(" ") for line in out.splitlines()) if name == image]


@pytest.mark.parametrize("wait_s", [0.0, 2.0])
def test_sigterm_during_a_tool_call_removes_its_container(base_image: str, wait_s: float) -> None:
    image = f"autoinstall-test/sigterm:{uuid.uuid4().hex[:8]}"
    subprocess.run(["docker", "tag", base_image, image], check=True)
    try:
        call = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "tools", "call", "terminal",
                                 json.dumps({"command": "sleep 120"}), "--image", image],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not containers_from(image):
            assert call.poll() is None and time.monotonic() < deadline, call.communicate()
            time.sleep(0.2)
        time.sleep(wait_s)  # 0: the sandbox may still be starting; 2: the command is running
        call.send_signal(signal.SIGTERM)
        _, err = call.communicate(timeout=60)
        assert call.returncode == 130, err
        assert containers_from(image) == []
    finally:
        subprocess.run(["docker", "rmi", image], capture_output=True, check=False)
