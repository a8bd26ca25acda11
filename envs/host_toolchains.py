"""Compilers newer than the base suite's, from the host's own installations: rustup's toolchains
($RUSTUP_HOME/toolchains), Go trees (/usr/local/go, ~/sdk/goX.Y.Z, the Go module cache's golang.org/toolchain)
and JDKs (/usr/lib/jvm and the other places envs/host_jdks.py names).

A host toolchain is copied (trimmed: no documentation, no sources of the compiler itself) into a layer on top of a
base image under /opt/toolchains/NAME-VERSION, whose bin/ leads PATH (a JDK's folder is JAVA_HOME too, and gets
the host's CA as its `jssecacerts`, as every JDK of a base image does: envs/docker/trust.py), as
envs/pyenv_python.py copies the host's CPython builds. Its identity (version, folder, digest of its compiled
files) is the layer's label, its tag's recipe and, through autoinstall, the spec's `toolchains`. Rustup's, Go's
and JDK vendors' release builds link only against glibc, so the copy runs on any suite as new as the one they
were built for.
"""
from __future__ import annotations

import hashlib
import os
import platform
import re
import tarfile
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from envs import host_jdks
from envs.base import LABEL
from envs.errors import ImageBuildError
from envs.toolchain_record import ToolchainRecord

OFF_ENV = "AUTOINSTALL_HOST_TOOLCHAINS"
"""Set to "off" to use none of the host's toolchains (the suite's, a registry's or an older dependency instead)."""
HOME = "/opt/toolchains"
TRUST_STORE = "/etc/ssl/"
GO_ROOTS = (Path("/usr/local/go"),)
"""Go trees installed by hand (besides ~/sdk/goX.Y.Z from golang.org/dl and the module cache's toolchains)."""
BASE_REPO = "autoinstall-base"
Log = Callable[[str], None]
_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
_RUST_SKIP = {"share", "libexec", "src", "rustc-src", "rust-analyzer"}
_GO_SKIP = {"test", "doc", "api", "misc"}
"""Folders no build needs (rustup's docs are 800 MB; Go's own test suite), skipped at any depth for Rust's
`share`/`src`, at the top for Go."""
_LAYER = """\
# A toolchain layer rendered by envs/host_toolchains.py: the host's {name} {version} from {prefix}.
FROM {base}
ADD toolchain.tar {home}/
ENV PATH={home}/bin:$PATH{env}
RUN {check}
"""
LAYER_DIGEST = hashlib.sha256(_LAYER.encode()).hexdigest()[:12]


class HostToolchain(BaseModel):
    """One compiler installation on this host that a base image can carry."""

    name: str
    """"rust" or "go"."""
    version: str
    """"1.95.0"; a pre-release keeps its channel: "1.97.0-nightly"."""
    prefix: str
    """Its folder on the host (rustup's toolchain folder, a GOROOT)."""
    digest: str
    """Hash of its compiled entry points: another build of the same version differs."""

    @property
    def key(self) -> str:
        """How plans and recipes name it: "rust-1.95.0"."""
        return f"{self.name}-{self.version}"

    @property
    def release(self) -> bool:
        """A stable release (nightlies and betas are taken only when asked for by name)."""
        return "-" not in self.version

    @property
    def home(self) -> str:
        return f"{HOME}/{self.key}"

    def record(self) -> ToolchainRecord:
        return ToolchainRecord(name=self.name, version=self.version, origin="host",
                               source=f"{self.prefix} (digest {self.digest})", home=self.home)


def _enabled() -> bool:
    return os.environ.get(OFF_ENV, "").lower() not in ("off", "0", "no", "false")


def rustup_dir() -> Path:
    return Path(os.environ.get("RUSTUP_HOME") or Path.home() / ".rustup") / "toolchains"


def _rust_version(prefix: Path) -> str | None:
    """From rustup's channel manifest: `[pkg.rustc] version = "1.95.0 (59807616e 2026-04-14)"`."""
    manifest = prefix / "lib" / "rustlib" / "multirust-channel-manifest.toml"
    try:
        version = tomllib.loads(manifest.read_text())["pkg"]["rustc"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found = re.match(r"(\d+\.\d+\.\d+(?:-[a-z]+)?)", str(version))
    return found[1] if found else None


def _rust_prefixes() -> list[Path]:
    root, triple = rustup_dir(), f"{platform.machine()}-unknown-linux-gnu"
    if not root.is_dir():
        return []
    return [p for p in sorted(root.iterdir()) if p.name.endswith(triple) and (p / "bin" / "rustc").is_file()
            and (p / "bin" / "cargo").is_file()]


def _go_prefixes() -> list[Path]:
    arch = _ARCH.get(platform.machine(), platform.machine())
    home = Path.home()
    modcache = Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or home / "go") / "pkg" / "mod")
    found = [*GO_ROOTS, *sorted((home / "sdk").glob("go1.*"))]
    found += sorted((modcache / "golang.org").glob(f"toolchain@v0.0.1-go1.*.linux-{arch}"))
    return [p for p in found if (p / "bin" / "go").is_file() and (p / "VERSION").is_file()]


def _go_version(prefix: Path) -> str | None:
    found = re.match(r"go(\d+\.\d+(?:\.\d+)?)\s", (prefix / "VERSION").read_text() + "\n")
    return found[1] if found else None


def _rust_entry_points(prefix: Path) -> list[Path]:
    """What identifies a build, cheaply: rustup's channel manifest (every component's hash), rustc and the name
    of librustc_driver (which carries its own hash)."""
    files = [prefix / "lib" / "rustlib" / "multirust-channel-manifest.toml", prefix / "bin" / "rustc"]
    return files + sorted((prefix / "lib").glob("librustc_driver-*.so"))


def _go_entry_points(prefix: Path) -> list[Path]:
    """Go's VERSION and its go command."""
    return [prefix / "VERSION", prefix / "bin" / "go"]


def _rust_keep(parts: tuple[str, ...]) -> bool:
    return not any(p in _RUST_SKIP or p.startswith("manifest-rust-docs") for p in parts)


@dataclass(frozen=True)
class _Kind:
    """What differs between kinds of toolchain: where they are, their version, identity and trimming, and what
    their layer sets and checks."""

    prefixes: Callable[[], list[Path]]
    version: Callable[[Path], str | None]
    entry_points: Callable[[Path], list[Path]]
    keep: Callable[[tuple[str, ...]], bool]
    """Whether the copy keeps a path (its parts, relative to the installation)."""
    env: str
    """Variables the layer sets besides PATH ({home}: its folder)."""
    check: str
    """What the layer runs: the toolchain works (and, for a JDK, trusts the host's CA: {trust} stands for
    envs/docker/trust.py's command on its security folder)."""
    where: Callable[[], str]
    """Where installations are looked for, as an error message says it."""


_KINDS = {
    "rust": _Kind(_rust_prefixes, _rust_version, _rust_entry_points, _rust_keep, env="",
                  check="rustc --version && cargo --version", where=lambda: f"rustup's in {rustup_dir()}"),
    "go": _Kind(_go_prefixes, _go_version, _go_entry_points, lambda parts: not parts or parts[0] not in _GO_SKIP,
                # the copied release is the one to use; a module needing newer says so (the GOTOOLCHAIN repair)
                env=" GOTOOLCHAIN=local", check="go version",
                where=lambda: "Go's in /usr/local/go, ~/sdk and the module cache"),
    "java": _Kind(host_jdks.prefixes, host_jdks.version, host_jdks.entry_points, host_jdks.keep,
                  env=" JAVA_HOME={home}",
                  check="java -version && javac -version && {trust}",
                  where=lambda: f"JDKs in {host_jdks.WHERE}"),
}


@lru_cache(maxsize=32)
def _digest(files: tuple[tuple[str, int, int], ...], prefix: str) -> str:
    """sha256 over the entry points' bytes, a large library by its name and size (cached by path, size and
    mtime: one hash per process)."""
    h = hashlib.sha256()
    for path, size, _ in files:
        h.update(os.path.relpath(path, prefix).encode())
        h.update(hashlib.sha256(Path(path).read_bytes()).digest() if size < 2**26 else str(size).encode())
    return h.hexdigest()[:12]


def _describe(name: str, prefix: Path, version: str) -> HostToolchain:
    real = prefix.resolve()
    points = [p for p in _KINDS[name].entry_points(real) if p.is_file()]
    stat = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in points)
    return HostToolchain(name=name, version=version, prefix=str(real), digest=_digest(stat, str(real)))


def host_toolchains(name: str) -> list[HostToolchain]:
    """The host's installations of `name` ("rust", "go", "java"), one per version, oldest first; none when
    turned off."""
    kind = _KINDS.get(name)
    if not _enabled() or kind is None:
        return []
    found: dict[str, HostToolchain] = {}
    for prefix in kind.prefixes():
        version = kind.version(prefix)
        if version and version not in found:
            found[version] = _describe(name, prefix, version)
    return sorted(found.values(), key=lambda t: version_key(t.version))


def find(key: str) -> HostToolchain | None:
    """The host toolchain a plan names ("rust-1.95.0"), or None when this host has none such."""
    name, _, version = key.partition("-")
    return next((t for t in host_toolchains(name) if t.version == version), None)


def version_key(version: str) -> tuple[int, ...]:
    """"1.95.0" -> (1, 95, 0, 1); a pre-release sorts before its release: "1.97.0-nightly" -> (1, 97, 0, 0)."""
    number, _, pre = version.removeprefix("go").partition("-")
    parts = [int(p) for p in re.findall(r"\d+", number)[:3]]
    return (*parts, *[0] * (3 - len(parts)), 0 if pre else 1)


def _leaves(root: str, rel: str, link: str) -> bool:
    """Whether a link points out of the installation, other than into the system's trust store (/etc/ssl, which
    every image has: Debian's and Adoptium's JDKs link lib/security/cacerts there)."""
    target = os.path.normpath(link if os.path.isabs(link) else os.path.join(root, os.path.dirname(rel), link))
    return not target.startswith((root + os.sep, TRUST_STORE))


def write_tarball(toolchain: HostToolchain, dest: Path) -> int:
    """The trimmed installation as a tar (owned by root); returns its size in bytes. A link out of the
    installation (Debian's JDKs link their configuration into /etc/java-N-openjdk) is copied as what it points
    to; one that points nowhere is left out."""
    outside: list[str] = []

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        rel = os.path.normpath(info.name)
        if rel != "." and not _KINDS[toolchain.name].keep(Path(rel).parts):
            return None
        if info.issym() and _leaves(toolchain.prefix, rel, info.linkname):
            outside.append(rel)
            return None
        return owned(info)

    with tarfile.open(dest, "w") as tar:
        tar.add(toolchain.prefix, arcname=".", filter=keep)
        for rel in outside:
            target = Path(toolchain.prefix, rel).resolve()
            if target.exists():
                tar.add(target, arcname=f"./{rel}", filter=owned)
    return dest.stat().st_size


def layer_tag(base: str, toolchain: HostToolchain) -> str:
    recipe = hashlib.sha256(f"{LAYER_DIGEST}\n{base}\n{toolchain.key}\n{toolchain.digest}".encode()).hexdigest()
    name = base.rpartition(":")[2].rsplit("-", 1)[0]
    return f"{BASE_REPO}:{name}-{toolchain.key}-{recipe[:12]}"


def ensure_toolchain_layer(base: str, key: str, say: Log) -> str:
    """`base` plus the host toolchain `key` under /opt/toolchains/KEY, its bin/ first on PATH; built once per recipe.

    Raises:
        ImageBuildError: this host has no such toolchain (any more), or the layer does not build.
    """
    toolchain = find(key)
    if toolchain is None:
        name = key.partition("-")[0]
        have = ", ".join(t.key for t in host_toolchains(name)) or "none"
        where = _KINDS[name].where() if name in _KINDS else "none are looked for"
        msg = (f"the host toolchain {key} is not on this machine (its {name} toolchains: {have}; {where}, unless "
               f"{OFF_ENV}=off). Install it there, or build again to choose among what is installed.")
        raise ImageBuildError(msg)
    # Imported here: finding toolchains (surveys, plans, `import cli`) must not load the docker SDK.
    from envs import docker as engine
    from envs.docker.trust import jdk_trust

    tag = layer_tag(base, toolchain)
    if engine.image_labels(tag) is not None:
        return tag
    say(f"copying {toolchain.name} {toolchain.version} from {toolchain.prefix} into {toolchain.home}")
    kind = _KINDS[toolchain.name]
    with tempfile.TemporaryDirectory(prefix="autoinstall-toolchain-") as ctx:
        size = write_tarball(toolchain, Path(ctx) / "toolchain.tar")
        say(f"toolchain.tar: {size // 2**20} MiB")
        (Path(ctx) / "Dockerfile").write_text(_LAYER.format(
            name=toolchain.name, version=toolchain.version, prefix=toolchain.prefix, base=base, home=toolchain.home,
            env=kind.env.format(home=toolchain.home),
            check=kind.check.format(home=toolchain.home, trust=jdk_trust(f"{toolchain.home}/lib/security"))))
        labels = {**(engine.image_labels(base) or {}), LABEL: "1", engine.KIND_LABEL: "base",
                  f"{LABEL}.toolchain": toolchain.key, f"{LABEL}.toolchain.source": toolchain.record().source}
        engine.build_image(Path(ctx), tag, labels=labels, buildargs={}, log=say)
    return tag


__all__ = ["HostToolchain", "ensure_toolchain_layer", "find", "host_toolchains", "version_key"]
