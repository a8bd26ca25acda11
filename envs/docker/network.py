"""The network sandboxes install through: the package registries, yes; this machine's own services, no.

Sandboxes on Docker's default bridge can reach every service of the host at its bridge address (and its
other addresses). Ours join a bridge of their own whose traffic to the host itself is dropped (one iptables
INPUT rule on its interface), and whose containers cannot reach each other (icc off). Going out to the
registries is routed through the host, not delivered to it, so it is unaffected.
"""

from __future__ import annotations

import shutil
import subprocess
import threading

import docker
import docker.errors

from envs.base import LABEL
from envs.docker.engine import KIND_LABEL
from envs.errors import EnvError

NETWORK = "autoinstall-sandboxes"
BRIDGE = "ai-sandbox0"
"""The Linux interface of NETWORK: the host-side firewall rule names it."""
_ready: set[str | None] = set()
_lock = threading.Lock()


def sandbox_network(api: docker.APIClient, base_url: str | None) -> str:
    """NETWORK, created on first use with the rule that keeps its containers off the host's services."""
    with _lock:
        if base_url in _ready:
            return NETWORK
        if not api.networks(names=[NETWORK]):
            try:
                api.create_network(NETWORK, driver="bridge", labels={LABEL: "1", KIND_LABEL: "network"},
                                   options={"com.docker.network.bridge.name": BRIDGE,
                                            "com.docker.network.bridge.enable_icc": "false"})
            except docker.errors.APIError as e:
                if e.status_code != 409:  # another process created it first
                    raise
        if base_url is None:  # a local engine: its interfaces are ours to firewall
            _drop_traffic_to_host()
        _ready.add(base_url)
        return NETWORK


def _drop_traffic_to_host() -> None:
    iptables = shutil.which("iptables")
    if iptables is None:
        msg = ("iptables is missing, so sandboxes could reach this machine's own services; install it "
               "(`apt-get install -y iptables`, as root) and try again")
        raise EnvError(msg)
    rule = ["INPUT", "-i", BRIDGE, "-j", "DROP"]
    if subprocess.run([iptables, "-C", *rule], capture_output=True, check=False).returncode == 0:
        return
    done = subprocess.run([iptables, "-I", *rule], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        msg = (f"could not add the firewall rule that keeps sandboxes off this machine's services "
               f"(iptables -I {' '.join(rule)}: {done.stderr.strip()}); run autoinstall as root, or add the "
               "rule yourself")
        raise EnvError(msg)
