"""Which Go a build uses: Debian's, a newer Go tree of this host copied into the image (a; from go.mod's `go`
line before the build, or from `go.mod requires go >= 1.25` during it), else a newer suite's golang-1.NN-go
(b; testing, unstable), else the exact release the module asks for from the Go module proxy (c;
GOTOOLCHAIN=goX.Y.Z, the `golang.org/toolchain` module, fetched by the go command inside the sandbox and
recorded with the env). autoinstall/ecosystems/toolchains.py holds the token and the order."""
from __future__ import annotations

import platform
from pathlib import Path

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.go.survey import GoFacts, survey
from autoinstall.ecosystems.repofiles import is_file
from envs.host_toolchains import HostToolchain
from envs.spec import Repair
from envs.toolchain_record import ToolchainRecord

IMAGE_GO = {"3.13": "1.24", "3.11": "1.19"}
"""Debian's Go by the base image's Python (trixie, bookworm): what a newer one has to beat."""
_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def go_of(token: str) -> str:
    """The Go a toolchain token gives: the host tree it names, else the image's Debian Go."""
    return toolchains.current(token, "go") or IMAGE_GO.get(toolchains.split(token)[0], IMAGE_GO["3.13"])


def planned(facts: GoFacts, python: str, image_go: str) -> tuple[str, list[str]]:
    """The token a plan starts on and why: the oldest host Go meeting the `go` line when Debian's does not."""
    need = facts.go_version
    if not need or not toolchains.newer(need, image_go):
        return python, []
    pick, refused = toolchains.source_for("go", need, image_go, python)
    where = f"{facts.go_evidence.file}:{facts.go_evidence.line}" if facts.go_evidence else "go.mod"
    if pick is None or toolchains.newer(need, pick.version):
        fetched = facts.toolchain or f"go{need}"
        return python, [*refused, f"{where} asks for go {need}, newer than the image's Go {image_go}: the go "
                        f"command fetches {fetched} from the Go module proxy (GOTOOLCHAIN=auto, else the "
                        "GOTOOLCHAIN repair)"]
    if isinstance(pick, HostToolchain):
        return toolchains.with_host(python, pick), [
            f"{where} asks for go {need}, newer than the image's Go {image_go}: the host's Go {pick.version} "
            f"({pick.prefix}) is copied into the image"]
    return toolchains.with_host(python, pick), [
        *refused, f"{where} asks for go {need}, newer than the image's Go {image_go}: {toolchains.origin(pick)}"]


def host_go_repair(ctx: RepairContext) -> Repair | None:
    """`go.mod requires go >= X` beyond the Go in use: the host's Go that meets it, else a Debian suite's, once;
    None when none does (then GOTOOLCHAIN, from the module proxy)."""
    need = ctx.diagnosis.subject.removeprefix("go")
    now = go_of(ctx.python)
    pick, _ = toolchains.source_for("go", need, now, ctx.python)
    if pick is None or toolchains.newer(need, pick.version):
        return None
    how = (f"the host's Go {pick.version} from {pick.prefix}, copied into the image"
           if isinstance(pick, HostToolchain) else toolchains.origin(pick))
    return toolchains.switch(ctx.python, ctx.tried, pick, f"the module needs go {need}, the image has {now} -> {how}")


def registry_toolchains(env: dict[str, str], token: str, repo: Path) -> list[ToolchainRecord]:
    """The Go the module proxy gave, for the spec: the one GOTOOLCHAIN names, else, on Debian's Go, the one the
    go command switched to by itself (GOTOOLCHAIN=auto: go.mod's `toolchain` line, else its `go` line, when
    newer than the Go in use); none when the image's Go served."""
    wanted = env.get("GOTOOLCHAIN", "").partition("+")[0]
    if not wanted.startswith("go1") and toolchains.current(token, "go") is None and is_file(repo, repo / "go.mod"):
        facts = survey(repo)
        line = facts.toolchain or (f"go{facts.go_version}" if facts.go_version else "")
        wanted = line if line and toolchains.newer(line.removeprefix("go"), go_of(token)) else ""
    if not wanted.startswith("go1"):
        return []
    arch = _ARCH.get(platform.machine(), platform.machine())
    module = f"golang.org/toolchain@v0.0.1-{wanted}.linux-{arch}"
    proxy = env.get("GOPROXY", "the Go module proxy (GOPROXY)")
    how = "GOTOOLCHAIN" if "GOTOOLCHAIN" in env else "the go command's own switch, GOTOOLCHAIN=auto"
    return [ToolchainRecord(name="go", version=wanted.removeprefix("go"), origin="registry",
                            source=f"{module} from {proxy} ({how})")]
