"""A Debian suite's toolchain as a layer on top of a base image (envs/debian_toolchains.py chooses it).

The layer adds the suite's apt source (the base images' mirror; `Check-Valid-Until: no`, as a mirror frozen in
time needs: apt still checks the signatures) pinned at priority 100, below the base suite's 500, so nothing
else of the image moves to it; asks apt for the toolchain's packages from that suite (`PKG/SUITE`: apt takes
from there only the dependencies the base suite cannot meet); refuses, before installing anything, when apt's
plan would replace an Essential or required package or the C runtime (a toolchain needing unstable's libc6
would replace the library every program of the image runs on: the build stops with what it would replace);
checks that what it installed is exactly the versions chosen; and lists every package it installed or replaced
in /opt/toolchains/debian-NAME.packages. Its PATH, JAVA_HOME and GOTOOLCHAIN are set as a host toolchain's are
(envs/host_toolchains.py). The same instructions, `recipe`, go into the replay Dockerfile on the image under
the layer (autoinstall/record/dockerfile.py), so a replay reinstalls the same packages or says which moved.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from envs import docker as engine
from envs.base import LABEL
from envs.debian_toolchains import C_RUNTIME, KINDS, DebianToolchain, debian_toolchains, forget, parse_key
from envs.docker.trust import jdk_trust
from envs.errors import ImageBuildError
from envs.toolchain_record import ToolchainRecord

BASE_REPO = "autoinstall-base"
Log = Callable[[str], None]
MANIFEST = "/opt/toolchains/debian-{name}.packages"
_RECORD_LABEL = f"{LABEL}.toolchain.debian."
_INSTALL = [
    "set -e",
    "printf 'Types: deb\\nURIs: {mirror}\\nSuites: {suite}\\nComponents: main\\nCheck-Valid-Until: no\\n"
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\\n' > /etc/apt/sources.list.d/autoinstall-{suite}.sources",
    "printf 'Package: *\\nPin: release a={suite}\\nPin-Priority: 100\\n' > /etc/apt/preferences.d/autoinstall-{suite}",
    "apt-get -o Acquire::Languages=none update",
    "dpkg-query -W -f='${{Package}} ${{Version}}\\n' | sort > /tmp/before",
    "apt-get install -s --no-install-recommends {wanted} > /tmp/plan",
    "( dpkg-query -W -f='${{Package}} ${{Essential}} ${{Priority}}\\n' | awk '$2==\"yes\"||$3==\"required\"{{print $1}}'; "
    "printf '{c_runtime}' ) > /tmp/kept",
    "awk 'NR==FNR{{k[$1]=1;next}} /^Inst /&&$3~/^\\[/&&k[$2]{{gsub(/[][()]/,\"\",$3); gsub(/[()]/,\"\",$4); "
    "print $2\" \"$3\" -> \"$4}}' /tmp/kept /tmp/plan > /tmp/replaced",
    "if [ -s /tmp/replaced ]; then echo \"autoinstall: refused: Debian {suite}'s {name} {version} would replace what "
    "every program of the image relies on (Essential, required or C runtime packages): $(tr '\\n' ';' < /tmp/replaced)"
    " Use a toolchain built for the base suite (the host's, a registry's) instead.\" >&2; exit 3; fi",
    "apt-get install -y --no-install-recommends {wanted}",
    "for pv in {exact}; do p=${{pv%%=*}}; v=${{pv#*=}}; got=$(dpkg-query -W -f='${{Version}}' \"$p\"); "
    "if [ \"$got\" != \"$v\" ]; then echo \"autoinstall: Debian {suite} now has $p $got, not $v (the suite moved "
    "on): build again to choose anew\" >&2; exit 3; fi; done",
    "mkdir -p /opt/toolchains",
    "dpkg-query -W -f='${{Package}} ${{Version}}\\n' | sort > /tmp/after",
    "comm -13 /tmp/before /tmp/after > {manifest}",
    "rm -rf /var/lib/apt/lists/* /tmp/before /tmp/after /tmp/plan /tmp/kept /tmp/replaced",
]
"""The install step, one shell line per item (the base suite's own packages: no source, no pin)."""
_LAYER = """\
# A toolchain layer rendered by envs/debian_layer.py: Debian {suite}'s {name} {version}.
FROM {base}
{recipe}
"""
LAYER_DIGEST = hashlib.sha256((_LAYER + "\n".join(_INSTALL)).encode()).hexdigest()[:12]


def recipe(toolchain: DebianToolchain, mirror: str) -> str:
    """The Dockerfile instructions that install `toolchain` on a base image of its base suite."""
    lines = list(_INSTALL)
    if toolchain.suite == toolchain.base_suite:  # trixie's own openjdk-25: its source is the image's
        lines = [line for line in lines if "/etc/apt/sources.list.d" not in line and "preferences.d" not in line]
    kind = KINDS[toolchain.name]
    values = {"mirror": mirror, "suite": toolchain.suite, "name": toolchain.name, "version": toolchain.version,
              "wanted": " ".join(f"{p}/{toolchain.suite}" for p in toolchain.packages),
              "exact": " ".join(f"{p}={v}" for p, v in toolchain.packages.items()),
              "c_runtime": "\\n".join(C_RUNTIME) + "\\n", "manifest": MANIFEST.format(name=toolchain.name)}
    out = ["RUN " + "; \\\n    ".join(line.format(**values) for line in lines)]
    if kind.env:
        out.append("ENV " + kind.env.format(home=toolchain.home))
    check = kind.check + (f" && {jdk_trust(toolchain.home + '/lib/security')}" if toolchain.name == "java" else "")
    out.append(f"RUN {check}")
    return "\n".join(out)


def layer_tag(base: str, toolchain: DebianToolchain, mirror: str) -> str:
    digest = hashlib.sha256(f"{LAYER_DIGEST}\n{base}\n{toolchain.key}\n{json.dumps(toolchain.packages)}\n{mirror}"
                            .encode()).hexdigest()[:12]
    name = base.rpartition(":")[2].rsplit("-", 1)[0]
    return f"{BASE_REPO}:{name}-{re.sub(r'[^A-Za-z0-9_.-]', '-', toolchain.key)}-{digest}"


def find(key: str, base_suite: str, mirror: str) -> DebianToolchain:
    """The Debian toolchain a plan names ("go-1.26.10@testing").

    Raises:
        ImageBuildError: the suite no longer carries it (or its index cannot be read).
    """
    name, version, suite = parse_key(key)
    found, problems = debian_toolchains(name, base_suite, mirror)
    pick = next((t for t in found if t.version == version and t.suite == suite), None)
    if pick is None:
        have = ", ".join(t.key for t in found) or "none"
        msg = (f"Debian {suite} no longer carries {name} {version} for {base_suite} (what the suites carry now: "
               f"{have}{'; ' + '; '.join(problems) if problems else ''}). Build again to choose anew.")
        raise ImageBuildError(msg)
    return pick


def _came_along(tag: str, toolchain: DebianToolchain) -> dict[str, str]:
    """What the layer installed or replaced, from its manifest: the packages asked for and what came with them."""
    with engine.DockerSandbox(image=tag, network=False, pass_proxy_env=False) as box:
        listed = box.exec(f"cat {MANIFEST.format(name=toolchain.name)}")
    if not listed.ok:
        msg = f"the layer {tag} has no list of what it installed: {listed.output[-300:]}"
        raise ImageBuildError(msg)
    return dict(line.split(" ", 1) for line in listed.stdout.splitlines() if " " in line)


def ensure_debian_layer(base: str, key: str, say: Log, *, base_suite: str, mirror: str) -> str:
    """`base` plus Debian's toolchain `key`, built once per recipe; its record (packages, what came along, the
    recipe) is the image's label, for `record_of`.

    Raises:
        ImageBuildError: the suite no longer carries it, or it would replace essential packages, or the build
            fails.
    """
    toolchain = find(key, base_suite, mirror)
    tag = layer_tag(base, toolchain, mirror)
    if engine.image_labels(tag) is not None:
        return tag
    say(f"installing {toolchain.prefix} on {base}")
    steps = recipe(toolchain, mirror)
    labels = {**(engine.image_labels(base) or {}), LABEL: "1", engine.KIND_LABEL: "base",
              f"{LABEL}.toolchain": toolchain.key}
    with tempfile.TemporaryDirectory(prefix="autoinstall-debian-") as ctx:
        (Path(ctx) / "Dockerfile").write_text(_LAYER.format(suite=toolchain.suite, name=toolchain.name,
                                                            version=toolchain.version, base=base, recipe=steps))
        try:
            installed = engine.build_image(Path(ctx), f"{tag}-install", labels=labels, buildargs={}, log=say)
        except ImageBuildError:
            forget(toolchain.suite, mirror)  # a suite that moved on is read again by the next build's choice
            raise
        came = _came_along(installed, toolchain)
        record = toolchain.record(came).model_copy(update={"recipe": steps, "base": base})
        say(f"Debian {toolchain.suite} installed or replaced: {', '.join(f'{p} {v}' for p, v in came.items())}")
        (Path(ctx) / "Dockerfile").write_text(f"FROM {installed}\n")
        engine.build_image(Path(ctx), tag, labels={**labels, _RECORD_LABEL + toolchain.name: record.model_dump_json()},
                           buildargs={}, log=say)
    engine.remove_image(installed)
    return tag


def record_of(image: str, key: str) -> ToolchainRecord | None:
    """The record a Debian toolchain's layer carries (None: `image` is not such a layer, or is gone)."""
    found = (engine.image_labels(image) or {}).get(_RECORD_LABEL + parse_key(key)[0])
    return ToolchainRecord.model_validate_json(found) if found else None


__all__ = ["ensure_debian_layer", "find", "recipe", "record_of"]
