"""RustFacts: what a Cargo project's files say (Cargo.toml, workspace members, Cargo.lock, -sys crates,
rust-toolchain, CI), each fact with file:line."""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from autoinstall.ecosystems.repofiles import RepoFiles
from envs.spec import Evidence

_CI_TEST = re.compile(r"\bcargo\s+(?:\+\S+\s+)?(?:test|nextest run)\b[^\n#]*")
_TOOLCHAIN_LINE = re.compile(r'^\s*channel\s*=\s*"([^"]+)"|^\s*([\w.-]+)\s*$')
SYS_PACKAGES = {
    "openssl-sys": "libssl-dev", "libz-sys": "zlib1g-dev", "libsqlite3-sys": "libsqlite3-dev",
    "pq-sys": "libpq-dev", "curl-sys": "libcurl4-openssl-dev", "libgit2-sys": "libgit2-dev",
    "libssh2-sys": "libssh2-1-dev", "dbus": "libdbus-1-dev", "libdbus-sys": "libdbus-1-dev",
    "alsa-sys": "libasound2-dev", "libudev-sys": "libudev-dev", "x11": "libx11-dev",
    "freetype-sys": "libfreetype-dev", "servo-fontconfig-sys": "libfontconfig-dev",
    "yeslogic-fontconfig-sys": "libfontconfig-dev", "mysqlclient-sys": "default-libmysqlclient-dev",
    "bzip2-sys": "libbz2-dev", "lzma-sys": "liblzma-dev", "zstd-sys": "libzstd-dev", "libusb1-sys": "libusb-1.0-0-dev",
    "hidapi": "libudev-dev", "gio-sys": "libglib2.0-dev", "glib-sys": "libglib2.0-dev", "cairo-sys-rs": "libcairo2-dev",
    "gtk-sys": "libgtk-3-dev", "libpulse-sys": "libpulse-dev", "systemd": "libsystemd-dev",
    "libseccomp-sys": "libseccomp-dev", "libsodium-sys": "libsodium-dev", "onig_sys": "libonig-dev",
    "protobuf-src": "protobuf-compiler", "prost-build": "protobuf-compiler",
}
"""Crates whose build script looks for a system C library (pkg-config, a header) or tool, by the Debian
package that has it. Several can build a bundled copy instead; the package is cheap and makes both work."""


class RustFacts(BaseModel):
    """What a Cargo project's files say about building and testing it."""

    root: str
    ecosystem: str = "rust"
    notes: list[str] = Field(default_factory=list)
    package: str | None = None
    package_evidence: Evidence | None = None
    workspace_members: list[str] = Field(default_factory=list)
    """`[workspace] members` (globs as written); non-empty means `--workspace` runs them all."""
    workspace_evidence: Evidence | None = None
    edition: str | None = None
    rust_version: str | None = None
    """`rust-version` (the MSRV): the least rustc the package needs."""
    rust_version_evidence: Evidence | None = None
    features: list[str] = Field(default_factory=list)
    dependencies: list[Evidence] = Field(default_factory=list)
    """`[dependencies]` and `[build-dependencies]` entries of the root manifest (text: the crate)."""
    dev_dependencies: list[Evidence] = Field(default_factory=list)
    has_lock: bool = False
    locked_packages: int = 0
    """Packages Cargo.lock pins from a registry or git (the project's own are not counted)."""
    build_scripts: list[Evidence] = Field(default_factory=list)
    """build.rs files of the root package and the members."""
    sys_crates: list[Evidence] = Field(default_factory=list)
    """Crates that need a system library (SYS_PACKAGES), from the manifests or Cargo.lock (text: the crate)."""
    toolchain: str | None = None
    """The channel a rust-toolchain(.toml) file names (Debian's cargo ignores it; noted)."""
    toolchain_evidence: Evidence | None = None
    test_targets: int = 0
    """Files that may hold tests: tests/*.rs, and sources with `#[test]` or doc examples."""
    ci_tests: list[Evidence] = Field(default_factory=list)
    """`cargo test` commands in CI workflows and Makefiles."""


def _manifest(files: RepoFiles, facts: RustFacts) -> None:
    data = files.toml("Cargo.toml") or {}
    package = files.table("Cargo.toml", data, "package")
    if package.get("name"):
        facts.package = str(package["name"])
        facts.package_evidence = files.evidence("Cargo.toml", "name")
        edition = package.get("edition")
        facts.edition = str(edition) if isinstance(edition, str) else None
        version = package.get("rust-version")
        if isinstance(version, str):
            facts.rust_version = version
            facts.rust_version_evidence = files.evidence("Cargo.toml", "rust-version")
    workspace = files.table("Cargo.toml", data, "workspace")
    if "members" in workspace:
        members = workspace.get("members")
        facts.workspace_members = [m for m in members if isinstance(m, str)] if isinstance(members, list) \
            else []
        if members and not isinstance(members, list):
            facts.notes.append("Cargo.toml: [workspace] members is not a list: ignored")
        facts.workspace_evidence = files.evidence("Cargo.toml", "[workspace]")
        version = files.table("Cargo.toml", data, "workspace", "package").get("rust-version")
        if isinstance(version, str) and facts.rust_version is None:
            facts.rust_version = version
            facts.rust_version_evidence = files.evidence("Cargo.toml", "rust-version")
    facts.features = sorted(k for k in files.table("Cargo.toml", data, "features") if k != "default")
    for section, into in (("dependencies", facts.dependencies), ("build-dependencies", facts.dependencies),
                        ("dev-dependencies", facts.dev_dependencies)):
        after = files.line_of("Cargo.toml", f"[{section}]")
        for name in files.table("Cargo.toml", data, section):
            found = files.evidence("Cargo.toml", name, after)
            into.append(found.model_copy(update={"text": str(name)}))



def _members(files: RepoFiles, facts: RustFacts) -> list[str]:
    """Member folders (globs expanded) of the checkout that have a Cargo.toml, relative to the root."""
    found = []
    for pattern in facts.workspace_members:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            facts.notes.append(f"Cargo.toml: workspace member {pattern[:100]!r} is outside the checkout: "
                               "ignored")
            continue
        paths = files.glob(pattern) if any(c in pattern for c in "*?[") else [files.root / pattern]
        for path in paths:
            rel = files.rel(path)
            if files.is_file(f"{rel}/Cargo.toml") and rel not in found:
                found.append(rel)
    return found


def _sys_and_build(files: RepoFiles, facts: RustFacts, members: list[str]) -> None:
    seen: set[str] = set()
    for folder in ["", *members]:
        manifest = f"{folder}/Cargo.toml" if folder else "Cargo.toml"
        data = files.toml(manifest)
        if files.is_file(f"{folder}/build.rs" if folder else "build.rs"):
            facts.build_scripts.append(Evidence(file=f"{folder}/build.rs" if folder else "build.rs", line=1,
                                                text="build.rs"))
        for section in ("dependencies", "build-dependencies"):
            for name in files.table(manifest, data, section):
                if name in SYS_PACKAGES and name not in seen:
                    seen.add(name)
                    found = files.evidence(manifest, name, files.line_of(manifest, f"[{section}]"))
                    facts.sys_crates.append(found.model_copy(update={"text": name}))
    packages = (files.toml("Cargo.lock") or {}).get("package")
    for entry in packages if isinstance(packages, list) else []:
        name = entry.get("name", "") if isinstance(entry, dict) else ""
        if isinstance(entry, dict) and entry.get("source"):
            facts.locked_packages += 1
        if name in SYS_PACKAGES and name not in seen:
            seen.add(name)
            found = files.evidence("Cargo.lock", f'name = "{name}"')
            facts.sys_crates.append(found.model_copy(update={"text": name}))


def _toolchain(files: RepoFiles, facts: RustFacts) -> None:
    for rel in ("rust-toolchain.toml", "rust-toolchain"):
        for number, line in enumerate((files.text(rel) or "").splitlines(), 1):
            if m := _TOOLCHAIN_LINE.match(line):
                facts.toolchain = m.group(1) or m.group(2)
                facts.toolchain_evidence = Evidence(file=rel, line=number, text=line.strip()[:200])
                return


def _tests_and_ci(files: RepoFiles, facts: RustFacts) -> None:
    for path in files.walk((".rs",), limit=20000):
        rel = files.rel(path)
        if rel.startswith("target/") or "/target/" in rel:
            continue
        if "/tests/" in f"/{rel}" or "#[test]" in (text := files.text(rel) or "") or "/// ```" in text:
            facts.test_targets += 1
    facts.ci_tests = files.lines_matching(_CI_TEST, ("Makefile", "justfile"))


def survey(repo: Path) -> RustFacts:
    """The Rust facts of the checkout at `repo` (nothing is run)."""
    files = RepoFiles(repo)
    facts = RustFacts(root=str(repo))
    files.guarded("Cargo.toml", lambda: _manifest(files, facts))
    if facts.package is None and not facts.workspace_members:
        facts.notes.append("Cargo.toml: neither a [package] name nor [workspace] members")
    members: list[str] = []
    files.guarded("workspace members", lambda: members.extend(_members(files, facts)))
    facts.has_lock = files.is_file("Cargo.lock")
    files.guarded("build scripts", lambda: _sys_and_build(files, facts, members))
    files.guarded("rust-toolchain", lambda: _toolchain(files, facts))
    files.guarded("tests", lambda: _tests_and_ci(files, facts))
    if files.is_file(".cargo/config.toml") or files.is_file(".cargo/config"):
        facts.notes.append(".cargo/config present: its settings (target, rustflags, sources) apply to every step")
    facts.notes += files.notes
    return facts
