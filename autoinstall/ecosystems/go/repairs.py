"""The embedded model's phase-2 rules for Go: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_names import system_package_repair
from autoinstall.ecosystems.go.diagnosis import NETWORK_OFF, SERVICE_REFUSED
from autoinstall.ecosystems.go.toolchain import host_go_repair
from autoinstall.ecosystems.rules import deselecting, first_repair
from envs.spec import Evidence, Repair, Step


def _step(command: str, why: str, kind: str, ctx: RepairContext) -> Step:
    return Step(command=command, why=why, kind=kind,  # type: ignore[arg-type]
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])


def _toolchain(ctx: RepairContext) -> Repair | None:
    """A `go` or `toolchain` line newer than the image's Go: that toolchain, from the module proxy."""
    wanted = ctx.diagnosis.subject
    if ctx.env.get("GOTOOLCHAIN") == wanted:
        return None
    return Repair(kind="set_env", env={"GOTOOLCHAIN": wanted},
                  reason=f"the module needs {wanted}, newer than the image's Go: GOTOOLCHAIN fetches it "
                         "from the Go module proxy")


def _system_package(ctx: RepairContext) -> Repair | None:
    if ctx.diagnosis.kind == "missing_tool" and ctx.diagnosis.subject.startswith("go1"):
        return host_go_repair(ctx) or _toolchain(ctx)  # the host's Go first, then the module proxy
    return system_package_repair(ctx, "cgo")


def _tidy(ctx: RepairContext) -> Repair | None:
    """go.mod or go.sum out of date with the imports: let `go mod tidy` complete them (network on)."""
    return Repair(kind="insert_before", reason=f"{ctx.diagnosis.describe()} -> go mod tidy",
                  step=_step("go mod tidy", "go.mod/go.sum lack entries the imports need", "other", ctx))


def _top_level(test_id: str) -> str:
    """`pkg::TestX/sub` -> `pkg::TestX`: `go test -skip` leaves out whole top-level tests."""
    package, _, name = test_id.partition("::")
    return f"{package}::{name.split('/', 1)[0]}" if name else test_id


def _whole_packages(tests: list[str], all_tests: list[str]) -> list[str]:
    """Top-level test ids, with every package whose top-level tests all need it collapsed into the package
    (a package is left out by path; a test name by -skip, which would match that name in every package)."""
    top = {t for t in all_tests if "::" in t and "/" not in t.split("::", 1)[1]}
    out = []
    for test in tests:
        package = test.split("::", 1)[0]
        in_package = {t for t in top if t.startswith(package + "::")}
        whole = in_package and in_package <= set(tests)
        out.append(package if whole else test)
    return list(dict.fromkeys(out))


def _runnable(tests: list[str], ctx: RepairContext) -> list[str]:
    """What `go test` can leave out of these test ids: whole top-level tests, or whole packages."""
    return _whole_packages(list(dict.fromkeys(_top_level(t) for t in tests)), ctx.test_ids)


RULES = {
    **dict.fromkeys(("missing_header", "missing_library", "missing_tool"), _system_package),
    "missing_module": _tidy,
    **deselecting(SERVICE_REFUSED, NETWORK_OFF, _runnable),
}


def repair(ctx: RepairContext) -> Repair | None:
    """The diagnosis's rule if it proposes something not tried yet, else skipping an auxiliary step
    (`go mod download`, never the build or an apt line); None means give up."""
    return first_repair(ctx, RULES, essential=("project", "system"))
