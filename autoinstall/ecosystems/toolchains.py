"""Toolchains newer than the base suite's, for every compiled ecosystem: how a plan names them, which one a need
chooses, and what the spec records of them.

A compiled ecosystem's toolchain token (`Plan.python`, the `toolchain` its `base_image` receives) is the base
image's Python, then a `+` and a host toolchain's key for each one copied in: "3.13" is Debian trixie's own
compilers, "3.13+rust-1.95.0" the same image with the host's rustup toolchain 1.95.0 first on PATH
(envs/host_toolchains.py). Switching toolchains mid-build is the `switch_python` repair with a new token: the
install starts over on the new base image, as for another interpreter. Preference, for a need the suite's
compiler does not meet: the host's installations (a): `choose`; Debian's own packages (b): the base suite's other
versions, then its newer suites' (testing, unstable), as a layer "3.13+go-1.26.10@testing"
(envs/debian_toolchains.py, envs/debian_layer.py), `source_for` tries both in that order; the registries that
publish toolchains (c): an ecosystem's own repair (Go's GOTOOLCHAIN), recorded through its optional
`registry_toolchains(env)`; an older dependency (MSRV-aware resolution, Rust) or a failure naming the need last.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from envs.base import SandboxFactory
from envs.hostfacts import debian_suite, host_mirror
from envs.debian_layer import record_of
from envs.debian_toolchains import DebianToolchain, debian_toolchains, is_debian_key
from envs.host_toolchains import HostToolchain, find, host_toolchains, version_key
from envs.spec import Repair
from envs.toolchain_record import ToolchainRecord

SEP = "+"
Log = Callable[[str], None]
Toolchain = HostToolchain | DebianToolchain


def split(token: str) -> tuple[str, tuple[str, ...]]:
    """"3.13+rust-1.95.0" -> ("3.13", ("rust-1.95.0",))."""
    python, *keys = token.split(SEP)
    return python, tuple(k for k in keys if k)


def with_host(token: str, toolchain: Toolchain) -> str:
    """`token` with `toolchain` instead of any other of its name."""
    python, keys = split(token)
    kept = [k for k in keys if k.partition("-")[0] != toolchain.name]
    return SEP.join([python, *kept, toolchain.key])


def current(token: str, name: str) -> str | None:
    """The version of the toolchain `name` the token names (the host's, a Debian suite's), or None (the base
    image's own)."""
    return next((k.partition("-")[2].partition("@")[0] for k in split(token)[1] if k.partition("-")[0] == name),
                None)


def newer(version: str, than: str) -> bool:
    """By release number only ("1.88" > "1.85.0"; "1.95.0" is not newer than "1.95")."""
    return version_key(version)[:3] > version_key(than)[:3]


def choose(available: list[HostToolchain], need: str, now: str) -> HostToolchain | None:
    """The host release to move to from version `now` for something that needs `need`: the oldest that meets it
    (closest to what the project tested with), else the newest newer than `now` (it meets more of the graph; what
    is left goes to the ecosystem's fallback). Pre-releases (nightly, beta) are never chosen; None when no
    release is newer than `now`."""
    releases = sorted((t for t in available if t.release and newer(t.version, now)),
                      key=lambda t: version_key(t.version))
    meeting = [t for t in releases if not newer(need, t.version)]
    return meeting[0] if meeting else (releases[-1] if releases else None)


def source_for(name: str, need: str, now: str, python: str) -> tuple[Toolchain | None, list[str]]:
    """The toolchain to move to from version `now` for something that needs `need`, and what was refused on the
    way: the host's oldest release meeting it; else the oldest a Debian suite carries that meets it (the base
    suite's own first, then the newer suites in order); else the host's newest release newer than `now` (it meets
    more of the graph; what is left goes to the ecosystem's fallback); else None (the registry's, the fallback's,
    or a failure naming the need)."""
    host = choose(host_toolchains(name), need, now)
    if host is not None and not newer(need, host.version):
        return host, []
    found, problems = debian_toolchains(name, debian_suite(split(python)[0]) or "trixie", host_mirror())
    meeting = [t for t in found if newer(t.version, now) and not newer(need, t.version)]
    return (meeting[0] if meeting else host), problems


def origin(pick: DebianToolchain) -> str:
    """Where a Debian suite's toolchain comes from and how the image gets it, as notes and repairs say it."""
    pinned = "" if pick.suite == pick.base_suite else f", the suite pinned low"
    return f"{pick.name} {pick.version} from {pick.prefix}, installed on the image{pinned}"


def switch(python: str, tried: list[Repair], pick: Toolchain, reason: str) -> Repair | None:
    """The repair that starts over with `pick` in the token `python`; None when the token has it already or the
    same switch was tried."""
    token = with_host(python, pick)
    if token == python or any(r.kind == "switch_python" and r.python == token for r in tried):
        return None
    return Repair(kind="switch_python", python=token, reason=reason)


def choices(ecosystem: object) -> list[str]:
    """The tokens a build of `ecosystem` may switch to: its base images' Pythons, then, for an ecosystem whose
    `host_toolchain` names a kind of toolchain and the suite's version ("java", "21"), its first Python with each
    newer host release ("3.13+java-25.0.3"), then with each newer release Debian's suites carry
    ("3.13+java-26.0.2.1@testing"): what a model's switch_python may name (`available_pythons`)."""
    pythons = list(getattr(ecosystem, "toolchains", ()))
    name, suite = getattr(ecosystem, "host_toolchain", None) or ("", "")
    if not name or not pythons:
        return pythons
    newer_releases: list[Toolchain] = [t for t in host_toolchains(name) if t.release and newer(t.version, suite)]
    carried, _ = debian_toolchains(name, debian_suite(split(pythons[0])[0]) or "trixie", host_mirror())
    # a release line beyond the image's own (trixie's openjdk-21 and golang-1.24 are the image's)
    newer_releases += [t for t in carried if version_key(t.version)[:2] > version_key(suite)[:2]]
    return pythons + [with_host(pythons[0], t) for t in newer_releases]


def base_image(factory: SandboxFactory, token: str, log: Log | None, packages: tuple[str, ...]) -> str:
    """The base image a token names: the Python and Debian `packages`, then each host toolchain's layer."""
    python, keys = split(token)
    if not keys:
        return factory.base_image(python=python, log=log, packages=packages)
    return factory.base_image(python=python, log=log, packages=packages, toolchains=keys)


def records(ecosystem: object, token: str, env: dict[str, str], repo: Path,
            base_image: str = "") -> list[ToolchainRecord]:
    """What a finished build's toolchains were and where they came from: the host's and Debian's the token names
    (a Debian layer's record is a label of `base_image`), then what the ecosystem says a registry gave
    (`registry_toolchains(env, token, repo)`, from its variables and the checkout's manifest); none: the suite's
    own compilers."""
    out = []
    for key in split(token)[1]:
        if is_debian_key(key):
            name, _, version = key.partition("@")[0].partition("-")
            suite = key.partition("@")[2]
            out.append((record_of(base_image, key) if base_image else None) or ToolchainRecord(
                name=name, version=version, origin="debian", suite=suite,
                source=f"debian:{suite} (the layer's record is gone)"))
            continue
        found = find(key)
        name, _, version = key.partition("-")
        out.append(found.record() if found else ToolchainRecord(
            name=name, version=version, origin="host", source="no longer on this host"))
    from_registry = getattr(ecosystem, "registry_toolchains", None)
    return out + (from_registry(env, token, repo) if from_registry else [])
