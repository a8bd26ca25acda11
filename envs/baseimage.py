"""Base images: `python:X.Y-slim` where a registry answers, else a debootstrapped Debian (its own python3, or
for an X.Y Debian lacks the host's CPython build: envs/pyenv_python.py), plus our tooling; the Debian
packages an ecosystem asks for (Go: golang-go) are a layer on that plain image, which they all share.

Every image is tagged with a hash of its recipe, so asking again when nothing changed costs one lookup.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from string import Template

from pydantic import BaseModel

from envs import docker as engine
from envs import debian_layer, host_toolchains, pyenv_python
from envs.debian_toolchains import is_debian_key
from envs.base import LABEL
from envs.docker import trust
from envs.errors import ImageBuildError
from envs.hostfacts import (
    MIN_VERSION,
    MIRROR_ENV,
    SUITES,
    buildable_pythons,
    debian_suite,
    builds_dir,
    describe_builds,
    host_mirror,
    host_versions,
    version_key,
)

TEMPLATE = Path(__file__).parent / "templates" / "base.Dockerfile"
UV_REQUIREMENT = "uv==0.13.9"
APT_PACKAGES = "git build-essential ca-certificates curl pkg-config"
DEBIAN_PYTHON = "python3 python3-venv python3-dev python3-pip"
REGISTRY_ENV = "AUTOINSTALL_REGISTRY"
"""Set to "off" to never try pulling python:X.Y-slim."""
BASE_REPO, ROOTFS_REPO = "autoinstall-base", "autoinstall-rootfs"
RUN_TIMEOUT_S = 1800
"""Seconds debootstrap (or the tar of its result) may run."""
Log = Callable[[str], None]
_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+")
PACKAGES_LAYER = """\
# autoinstall: an ecosystem's Debian packages on the plain base image (envs/baseimage.py)
FROM {base}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \\
 && apt-get install -y --no-install-recommends {packages} \\
 && {trust_setup} \\
 && rm -rf /var/lib/apt/lists/*
"""


class BaseImageInfo(BaseModel):
    """One local base or rootfs image, for `autoinstall base list`."""

    tag: str
    kind: str
    python: str = ""
    source: str = ""
    size_mb: int = 0
    created: int = 0


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def _ca_bundle(ca_bundle: Path | None) -> Path:
    if ca_bundle is not None:
        if not ca_bundle.is_file():
            msg = f"CA bundle {ca_bundle} does not exist; pass a PEM file with --ca-bundle."
            raise ImageBuildError(msg)
        return ca_bundle
    if (host := trust.default_ca_bundle()) is not None:
        return host
    import certifi  # only when the host has no CA bundle of its own

    return Path(certifi.where())


def _recipes(python: str, mirror: str, ca: Path, registry: bool) -> list[tuple[str, str, dict[str, str]]]:
    """Candidate (tag, source, template variables) of the plain base image, preferred first."""
    trust_hash = trust.trust_digest(ca)  # the bundle and every file made of it
    text = TEMPLATE.read_text()
    out = []
    if registry:
        src = f"python:{python}-slim"
        vars_ = {"base": src, "apt_packages": APT_PACKAGES, "python": "/usr/local/bin/python3"}
        out.append((src, vars_))
    if python in SUITES:
        src = f"debian:{SUITES[python]}@{mirror}"
        vars_ = {"base": "", "apt_packages": f"{DEBIAN_PYTHON} {APT_PACKAGES}", "python": "/usr/bin/python3"}
        out.append((src, vars_))
    elif (build := pyenv_python.host_python(python)) is not None:
        src = f"{build.source}@{mirror}"
        vars_ = {"base": "", "apt_packages": APT_PACKAGES, "python": f"{build.home}/bin/python{python}",
                 "layer": pyenv_python.LAYER_DIGEST}  # not rendered: a changed layer recipe changes the tag
        out.append((src, vars_))
    common = {"trust_dir": trust.CA_DIR, "trust_env": _env_lines(trust.CA_ENV),
              "trust_setup": trust.IMAGE_SETUP, "uv_requirement": UV_REQUIREMENT}
    return [
        (f"{BASE_REPO}:py{python}-{_digest(text, python, src, trust_hash, v, common)}", src, v | common)
        for src, v in out
    ]


def packages_recipe(base: str, python: str, packages: tuple[str, ...]) -> tuple[str, str]:
    """(tag, Dockerfile) of the layer of Debian `packages` on the plain base image `base` (its tag names its
    recipe: the bundle it trusts included), the JDKs they bring trusting that bundle too."""
    wanted = sorted(set(packages))
    dockerfile = PACKAGES_LAYER.format(base=base, packages=" ".join(wanted), trust_setup=trust.IMAGE_SETUP)
    name = f"py{python}" + "".join(f"-{p}" for p in wanted)[:60]
    return f"{BASE_REPO}:{name}-{_digest(dockerfile)}", dockerfile


def _env_lines(env: dict[str, str]) -> str:
    """The pairs of one Dockerfile ENV instruction, one a line."""
    return " \\\n    ".join(f"{k}={json.dumps(v)}" for k, v in env.items())


@contextmanager
def _lock(name: str) -> Iterator[None]:
    """Serialize builds of one recipe across processes (parallel test sessions share the engine)."""
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "autoinstall" / "locks"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_base_image(
    python: str = "3.11",
    *,
    ca_bundle: Path | None = None,
    rebuild: bool = False,
    log: Log | None = None,
    mirror: str | None = None,
    registry: bool | None = None,
    packages: tuple[str, ...] = (),
    toolchains: tuple[str, ...] = (),
) -> str:
    """Return the tag of a base image for `python`, building it only when its recipe changed.

    Args:
        python: "X.Y". Without a registry only the versions in SUITES can be built.
        ca_bundle: PEM bundle trusted inside the image (default: the host's).
        rebuild: build again even if the tag exists.
        log: receives every line of output (debootstrap, docker build) and notices; the CLI writes them to
            a log file and shows one status line, or streams them with --verbose.
        mirror: Debian mirror for debootstrap (default: $AUTOINSTALL_DEBIAN_MIRROR or the host apt's).
        registry: try `python:X.Y-slim` first (default: unless $AUTOINSTALL_REGISTRY is "off").
        packages: extra Debian packages an ecosystem needs in the image (e.g. `golang-go`), installed in a
            layer on the plain image (`packages_recipe`).
        toolchains: toolchains layered on top, in order: the host's ("rust-1.95.0": envs/host_toolchains.py) or a
            Debian suite's ("go-1.26.10@testing": envs/debian_layer.py).

    Returns:
        The image tag, `autoinstall-base:pyX.Y-<recipe hash>` (`pyX.Y-<packages>-<hash>` with packages; each
        toolchain layer adds `-<toolchain>-<hash>`).

    Raises:
        ImageBuildError: unsupported version, unreachable mirror, or a failed build.
        EngineUnavailableError: no Docker engine answers.
    """
    say = log or (lambda _line: None)
    if not re.fullmatch(r"\d+\.\d+", python):
        msg = f"Python version must look like 3.11, not {python!r}."
        raise ImageBuildError(msg)
    if registry is None:
        registry = os.environ.get(REGISTRY_ENV, "").lower() not in ("off", "0", "no", "false")
    packages = tuple(packages or ())
    if bad := [p for p in packages if not _PACKAGE.fullmatch(p)]:
        msg = f"not Debian package names: {', '.join(map(repr, bad))}"
        raise ImageBuildError(msg)
    mirror = (mirror or host_mirror()).rstrip("/")
    tag = _plain(python, _ca_bundle(ca_bundle), rebuild, say, mirror, registry)
    if packages:
        tag = _with_packages(tag, python, packages, say, rebuild=rebuild)
    return _layered(tag, toolchains, say, python, mirror)


def _plain(python: str, ca: Path, rebuild: bool, say: Log, mirror: str, registry: bool) -> str:
    """The plain base image of `python` (no ecosystem's packages), built when its recipe has no image yet."""
    recipes = _recipes(python, mirror, ca, registry)
    if not rebuild:
        for tag, _, _ in recipes:
            if engine.image_labels(tag) is not None:
                return tag
    for tag, source, variables in recipes:
        if source.startswith("python:"):
            if engine.image_labels(source) is None:
                say(f"pulling {source}")
                if engine.try_pull(source, timeout=120) is None:
                    say(f"notice: no registry answers for {source}; bootstrapping from Debian instead")
                    continue
            variables = variables | {"base": source}
        elif source.startswith("host-python:"):
            build = pyenv_python.host_python(python)
            if build is None:  # removed since _recipes found it
                continue
            rootfs = _ensure_rootfs(build.suite, mirror, say)
            with _lock(pyenv_python.layer_tag(build, rootfs)):
                variables = variables | {"base": pyenv_python.ensure_interpreter_layer(build, rootfs, say)}
        else:
            variables = variables | {"base": _ensure_rootfs(SUITES[python], mirror, say)}
        with _lock(tag):
            if rebuild or engine.image_labels(tag) is None:
                _build(tag, python, source, variables, ca, say)
        return tag
    debian = sorted(SUITES, key=version_key)
    builds = {v: p for v, p in host_versions().items() if v not in SUITES}
    msg = (
        f"Cannot build a Python {python} base image here: no registry answers for python:{python}-slim, "
        f"Debian only provides {', '.join(debian)} ({', '.join(SUITES[v] for v in debian)}), and "
        f"{describe_builds(builds)}. Use one of {', '.join(buildable_pythons(ordered=True))}, "
        f"add a CPython {python} build under {builds_dir()}, or make a registry reachable."
    )
    if version_key(python) < MIN_VERSION:
        msg += f" (Host builds older than {'.'.join(map(str, MIN_VERSION))} are not used: "
        msg += "uv requires 3.8 or newer.)"
    raise ImageBuildError(msg)


def _layered(tag: str, toolchains: tuple[str, ...], say: Log, python: str, mirror: str) -> str:
    """`tag` with each toolchain's layer on top, the host's or a Debian suite's ("go-1.26.10@testing"), each built
    once per recipe."""
    for key in toolchains:
        with _lock(f"toolchain-{key}-{tag}"):
            if is_debian_key(key):
                tag = debian_layer.ensure_debian_layer(tag, key, say, base_suite=debian_suite(python) or "trixie",
                                                       mirror=mirror)
            else:
                tag = host_toolchains.ensure_toolchain_layer(tag, key, say)
    return tag


def _with_packages(base: str, python: str, packages: tuple[str, ...], say: Log, *, rebuild: bool) -> str:
    """The plain base image `base` with a layer of Debian `packages`: what every ecosystem's image shares (the
    interpreter, headers, compilers, uv) is installed once per machine, not once per ecosystem."""
    tag, dockerfile = packages_recipe(base, python, packages)
    with _lock(tag):
        if rebuild or engine.image_labels(tag) is None:
            labels = {f"{LABEL}.packages": " ".join(sorted(set(packages)))}
            _build(tag, python, base, {}, None, say, dockerfile=dockerfile, labels=labels)
    return tag


def _build(tag: str, python: str, source: str, variables: dict[str, str], ca: Path | None, say: Log, *,
           dockerfile: str | None = None, labels: dict[str, str] | None = None) -> None:
    """Build `tag` from the base template with `variables` (and the trust files of `ca`), or from `dockerfile`."""
    started = time.monotonic()
    say(f"building {tag} from {source}")
    with tempfile.TemporaryDirectory(prefix="autoinstall-base-") as ctx:
        text = dockerfile or Template(TEMPLATE.read_text()).substitute(variables)
        (Path(ctx) / "Dockerfile").write_text(text)
        if ca is not None:
            trust.write_trust_files(ca, Path(ctx) / "trust")
        labels = {LABEL: "1", engine.KIND_LABEL: "base", f"{LABEL}.python": python, f"{LABEL}.source": source,
                  **(labels or {})}
        buildargs = {k: os.environ[k] for k in engine.PROXY_VARS if k in os.environ}
        engine.build_image(Path(ctx), tag, labels=labels, buildargs=buildargs, log=say)
    say(f"built {tag} in {time.monotonic() - started:.0f}s")


def _ensure_rootfs(suite: str, mirror: str, say: Log) -> str:
    """A `debootstrap --variant=minbase` root filesystem imported as an image, cached by suite+mirror."""
    tag = f"{ROOTFS_REPO}:{suite}-{_digest(suite, mirror, 'minbase')}"
    with _lock(tag):
        if engine.image_labels(tag) is not None:
            return tag
        if os.geteuid() != 0 or not shutil.which("debootstrap"):
            msg = (
                "No registry answers and debootstrap cannot run here: it needs root and the debootstrap "
                "package (apt-get install debootstrap). Or make python:X.Y-slim pullable."
            )
            raise ImageBuildError(msg)
        say(f"debootstrap {suite} from {mirror} (about 30 s)")
        with tempfile.TemporaryDirectory(prefix="autoinstall-rootfs-") as tmp:
            root, tarball = Path(tmp) / "root", Path(tmp) / "rootfs.tar"
            _run(["debootstrap", "--variant=minbase", suite, str(root), mirror], suite, mirror, say)
            _run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(tarball), "."], suite, mirror, say)
            labels = {LABEL: "1", engine.KIND_LABEL: "rootfs", f"{LABEL}.source": f"{suite}@{mirror}"}
            return engine.import_rootfs(tarball, tag, labels)


def _run(argv: list[str], suite: str, mirror: str, say: Log) -> None:
    """Run a bootstrap command, streaming its output through `say`; its tail goes into the error."""
    tail: deque[str] = deque(maxlen=12)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as proc:
        timer = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            for line in proc.stdout or ():
                tail.append(line.rstrip())
                say(line.rstrip())
        finally:
            timer.cancel()
        code = proc.wait()
    if code == 0:
        return
    text = "\n".join(tail).strip()
    hint = ""
    if "Release" in text or "resolve" in text.lower() or "connect" in text.lower():
        hint = (
            f"\nThe Debian mirror {mirror} cannot be reached for {suite}. Check the network/proxy, or set "
            f"{MIRROR_ENV} to a reachable mirror."
        )
    msg = f"{argv[0]} failed (exit {code}).{hint}\n{text}"
    raise ImageBuildError(msg)


def list_base_images() -> list[BaseImageInfo]:
    """Local base and rootfs images built by autoinstall, newest first."""
    rows = []
    for kind in ("base", "rootfs"):
        for img in engine.list_images({engine.KIND_LABEL: kind}):
            labels = img["labels"]
            for tag in img["tags"] or ["<untagged>"]:
                rows.append(
                    BaseImageInfo(
                        tag=tag,
                        kind=kind,
                        python=labels.get(f"{LABEL}.python", ""),
                        source=labels.get(f"{LABEL}.source", ""),
                        size_mb=(img["size"] or 0) // 2**20,
                        created=img["created"] or 0,
                    )
                )
    return sorted(rows, key=lambda r: r.created, reverse=True)
