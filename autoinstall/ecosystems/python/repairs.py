"""The embedded model's phase-2 rules: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.browsers import browser_repair
from autoinstall.ecosystems.debian_names import system_package_repair
from autoinstall.ecosystems.python.diagnosis import (
    NETWORK_OFF,
    SERVICE_PORTS,
    STUB_USED,
    diagnose,
    local_service,
    missing_modules,
)
from autoinstall.ecosystems.python.index import on_index
from autoinstall.ecosystems.python.proposal.interpreter import switch_target
from autoinstall.ecosystems.python.proposal.locked import LOCK_CONSTRAINTS
from autoinstall.ecosystems.python.proposal.services import service_step
from autoinstall.ecosystems.python.pypi_names import distribution_for
from autoinstall.ecosystems.python.pytest_plugins import plugin_for_ini, plugin_for_marker, plugin_for_option
from autoinstall.ecosystems.python.timemachine import (
    CUTOFF_ENV,
    PIP_WITH_CUTOFF,
    UV_SYSTEM_CONFIG,
    drift_repair,
    exemption_step,
)
from autoinstall.ecosystems.services import (
    PYTEST_PLUGIN,
    START,
    START_D,
    ServiceKind,
    service_named,
    with_services,
)
from envs.spec import Diagnosis, Evidence, Repair, Step


def _step(command: str, why: str, kind: str, ctx: RepairContext) -> Step:
    return Step(command=command, why=why, kind=kind,  # type: ignore[arg-type]
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])


def _is_install(command: str) -> bool:
    return bool(re.search(r"\b(pip|uv pip|setup\.py|poetry|pdm) (install|develop|sync)\b", command))


def _pip_install(dist: str, ctx: RepairContext) -> Repair:
    return Repair(kind="insert_before", reason=f"{ctx.diagnosis.describe()} -> install {dist}",
                  step=_step(f"uv pip install '{dist}'", f"provides the missing {ctx.diagnosis.subject}",
                             "test-deps" if ctx.phase != "install" else "python", ctx))


def _missing_module(ctx: RepairContext) -> Repair | None:
    module = ctx.diagnosis.subject
    dist = distribution_for(module)
    if ctx.phase != "install":
        # Collection lists every missing import at once: install them together. The diagnosed one first: the
        # diagnosis read the whole log, the context's output may be only its end.
        modules = list(dict.fromkeys([module, *missing_modules(ctx.output)]))
        dists = list(dict.fromkeys(distribution_for(m) for m in modules))
        return Repair(kind="insert_before", reason=f"missing modules -> install {', '.join(dists)}",
                      step=_step("uv pip install " + " ".join(f"'{d}'" for d in dists),
                                 f"provides the missing {', '.join(modules)}", "test-deps", ctx))
    if ctx.phase == "install" and _is_install(ctx.failing.command) and "--no-build-isolation" not in (
            ctx.failing.command):
        # A build-time import: install it, then build without isolation so the build can see it.
        first = _pip_install(f"{dist}", ctx)
        if not ctx.already_tried(first):
            return first
        return Repair(kind="replace", reason=f"build needs {module}: build without isolation",
                      step=ctx.failing.model_copy(update={
                          "command": ctx.failing.command + " --no-build-isolation"}))
    return _pip_install(dist, ctx)


def _system_package(ctx: RepairContext) -> Repair | None:
    """A header, library or tool from Debian; a browser: Debian's chromium (autoinstall/ecosystems/browsers.py)."""
    if ctx.diagnosis.subject == "browser":
        return browser_repair(ctx)
    if ctx.phase == "tests":  # every program the failed tests could not run, in one step
        return system_package_repair(ctx, "the tests", [d.subject for d in _by_test(ctx) if d.kind == ctx.diagnosis.kind])
    return system_package_repair(ctx, "the build or the tests")


def _python_version(ctx: RepairContext) -> Repair | None:
    """The version nearest the current one that the installer's complaint allows (interpreter.py)."""
    tried = [t.python for t in ctx.tried if t.kind == "switch_python" and t.python]
    version = switch_target(ctx.diagnosis.subject, ctx.python, ctx.available_pythons, tried)
    if version is None:
        return None
    return Repair(kind="switch_python", python=version,
                  reason=f"the project needs Python {ctx.diagnosis.subject or 'another version'}; {version} "
                         f"is the nearest to {ctx.python} that fits")


def _no_distribution(ctx: RepairContext) -> Repair | None:
    """Stub only what the index truly does not have: a version conflict, a Python mismatch or an unreachable
    index also print "no matching distribution", and a stub would hide a real package."""
    dist = re.sub(r"\[.*\]$", "", ctx.diagnosis.subject)
    if on_index(dist) is not False:
        return None
    return Repair(kind="stub_distribution", distribution=dist, import_name=re.sub(r"[-.]", "_", dist).lower(),
                  reason=f"{dist} is not on the package index: a stub stands in (it raises on use), tests "
                         "importing it are deselected")


def _pytest_plugin(ctx: RepairContext) -> Repair | None:
    kind, subject = ctx.diagnosis.kind, ctx.diagnosis.subject
    if kind == "unknown_pytest_option":
        plugin = plugin_for_option(subject)
    elif kind == "unknown_pytest_config":
        plugin = plugin_for_ini(subject)
    elif kind == "unknown_pytest_marker":
        plugin = plugin_for_marker(subject)
    else:
        plugin = "pytest-asyncio"
    return _pip_install(plugin, ctx) if plugin else None


def _vcs_version(ctx: RepairContext) -> Repair | None:
    env = {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    if all(ctx.env.get(k) == v for k, v in env.items()):
        return None
    return Repair(kind="set_env", env=env, reason="the build reads its version from VCS metadata; give it one")


SERVICE_FAILURE = re.compile(
    r"Connection refused|could not connect|Errno 111|connection to server (?:at|on socket) .{0,200}failed")
"""A refused connection: a service the test expects on this machine is not running. DNS failures and
unreachable hosts are not this: they mean the test needs the internet (NETWORK_OFF)."""
KNOWN_SERVICES = frozenset(SERVICE_PORTS.values())
"""The services a refusal can be blamed on: those a well-known port names (the diagnosis's subject). A refusal
on any other port is evidence of nothing but a failing test (often a server the suite starts itself)."""


def _whole_files(tests: list[str], all_tests: list[str]) -> list[str]:
    """Node ids, with every file whose tests all need the service collapsed into the file itself."""
    by_file: dict[str, list[str]] = {}
    for test in tests:
        by_file.setdefault(test.split("::", 1)[0], []).append(test)
    out = []
    for file, ids in by_file.items():
        in_file = [t for t in all_tests if t.split("::", 1)[0] == file]
        out += [file] if in_file and len(ids) >= len(in_file) else ids
    return out


def _service(ctx: RepairContext) -> Repair | None:
    """Run the service the tests could not reach in the environment; deselect them only when it cannot be."""
    if ctx.phase == "check":  # collection itself connects (a conftest at session start): run the service
        kind = service_named(ctx.diagnosis.subject)
        return _run_service(ctx, kind) if kind is not None else None
    needing = [t.test_id for t in ctx.failed_tests
               if SERVICE_FAILURE.search(t.message) or (NETWORK_OFF.search(t.message) and local_service(t.message))]
    if not needing:
        return None
    name = ctx.diagnosis.subject
    kind = service_named(name)
    if kind is None and name not in KNOWN_SERVICES:
        return None  # a refusal on no well-known service's port (a server the suite starts itself): a real failure
    if kind is None:
        why = "which Debian does not package, so the environment cannot run it"
    else:
        run = _run_service(ctx, kind)
        if run is not None:
            return run
        why = ("which the environment could not install (its install step failed)" if _service_skipped(ctx, kind)
               else "which the environment installs and starts, but the tests still could not connect")
    return Repair(kind="deselect", tests=_whole_files(needing, ctx.test_ids),
                  reason=f"these tests need a running {name} service, {why}")


def _service_steps(ctx: RepairContext, kind: ServiceKind) -> list[Step]:
    """Steps already planned or tried that install `kind`."""
    tried = [r.step for r in ctx.tried if r.step is not None]
    return [s for s in [*ctx.plan.steps, *tried] if f"{START_D}/{kind.name} " in s.command]


def _service_skipped(ctx: RepairContext, kind: ServiceKind) -> bool:
    """The step that installs `kind` failed and was left out."""
    return any(r.kind == "skip" and r.step is not None and f"{START_D}/{kind.name} " in r.step.command
               for r in ctx.tried)


def _run_service(ctx: RepairContext, kind: ServiceKind) -> Repair | None:
    """Install the service (once); then make the test command start it (once); None when both are done."""
    command = ctx.plan.test_command or ""
    if not _service_steps(ctx, kind):
        step = service_step([kind], {}, f"the tests connect to {kind.name} on this machine: run it here from "
                            f"Debian ({' '.join(kind.packages)})", [Evidence(file="<output>",
                                                                              text=ctx.diagnosis.evidence)])
        return Repair(kind="insert_before", step=step,
                      reason=f"{ctx.diagnosis.describe()} -> run {kind.name} in the environment")
    # PYTEST_PLUGIN: test commands recorded before the repair could replace them started the services that way.
    if _service_skipped(ctx, kind) or not command or START in command or PYTEST_PLUGIN in command:
        return None
    # The form the proposal gives a test command when CI shows the service up front, whatever the runner.
    return Repair(kind="test_command", test_command=with_services(command),
                  reason=f"start {kind.name} before the tests: the test command runs {START} first")


def _needs_network(ctx: RepairContext) -> Repair | None:
    needing = [t.test_id for t in ctx.failed_tests if NETWORK_OFF.search(t.message) and not local_service(t.message)]
    if not needing:
        return None
    return Repair(kind="deselect", tests=_whole_files(needing, ctx.test_ids),
                  reason="needs_network: these tests need the internet, and environments run their tests offline")


def _stub_used(ctx: RepairContext) -> Repair | None:
    using = [t.test_id for t in ctx.failed_tests if STUB_USED.search(t.message)]
    if not using:
        return None
    return Repair(kind="deselect", tests=_whole_files(using, ctx.test_ids),
                  reason=f"these tests use {ctx.diagnosis.subject}, which no registry has (a stub stands in)")


def _use_pip(ctx: RepairContext) -> Repair | None:
    """uv rejects some requirement syntax that pip accepts (e.g. `-e.[tests]`): let pip do this one."""
    command = ctx.failing.command
    if "uv pip install" not in command:
        return None
    return Repair(kind="replace", reason=f"uv cannot parse {ctx.diagnosis.subject}; pip can (under the same cutoff)",
                  step=ctx.failing.model_copy(update={"command": pip_under_cutoff(command)}))


PIP_UNDER_CUTOFF = f"python -m pip install ${{{CUTOFF_ENV}:+--uploaded-prior-to=${CUTOFF_ENV}}}"
"""pip with the time machine's cutoff when one is in force: resolved as of the same date as uv's installs."""


def pip_under_cutoff(command: str) -> str:
    """`command` with pip in place of uv: first a pip that knows `--uploaded-prior-to` (pip, as build tooling,
    takes today's release), then pip's installs as of UV_EXCLUDE_NEWER, read when the step runs (so a cutoff a
    repair moved is followed, and the replay Dockerfile records the same command)."""
    upgrade = f"uv pip install -q --exclude-newer-package pip=false '{PIP_WITH_CUTOFF}'"
    return f"{upgrade} && " + command.replace("uv pip install", PIP_UNDER_CUTOFF)


def _warnings_as_errors(ctx: RepairContext) -> Repair | None:
    """Newer dependencies deprecate what the tests use, and the project turns warnings into errors."""
    if ctx.phase != "tests" or ctx.plan.test_runner != "pytest":
        return None
    hit = sum(1 for t in ctx.failed_tests if "DeprecationWarning" in t.message)
    if hit < max(1, len(ctx.failed_tests) // 2):
        return None
    return Repair(kind="test_args", args="-W ignore::DeprecationWarning -W ignore::PendingDeprecationWarning",
                  reason=f"{hit} tests fail only because a newer dependency warns of a deprecation and the "
                         "project treats warnings as errors; ignore deprecation warnings")


def _dependency_drift(ctx: RepairContext) -> Repair | None:
    """An install or collection failing inside a dependency: that dependency's latest release, then latest
    releases of all (timemachine.py); in the tests, or with no cutoff, what a deprecation warning gets."""
    steps = [*ctx.plan.steps, *(r.step for r in ctx.tried if r.step is not None)]
    if ctx.phase == "install" and ctx.env.get(CUTOFF_ENV) and not any(UV_SYSTEM_CONFIG in s.command for s in steps):
        # A plan that does not exempt build tooling (a chat model's): exempt it, then retry.
        return Repair(kind="insert_before", step=exemption_step(Evidence(file="<output>", text=ctx.diagnosis.evidence)),
                      reason=f"{ctx.diagnosis.describe()} under the cutoff {ctx.env[CUTOFF_ENV]}: exempt build tooling")
    if ctx.phase != "tests":
        repair = drift_repair(ctx.env, ctx.diagnosis.subject, ctx.diagnosis.evidence, ctx.tried)
        if repair is not None:
            return repair
    return _warnings_as_errors(ctx) if "Warning" in ctx.diagnosis.evidence else None


def _without_lock(ctx: RepairContext) -> Repair | None:
    """An install with the lock's constraints failed and nothing else fixes it: the lock cannot be installed
    on this interpreter, so empty its constraints and resolve afresh from here on (recorded as a step)."""
    if ctx.phase != "install" or LOCK_CONSTRAINTS not in ctx.failing.command:
        return None
    step = _step(f": > {LOCK_CONSTRAINTS}", f"the locked versions cannot be installed here "
                 f"({ctx.diagnosis.describe()}): resolve afresh instead", "python", ctx)
    reason = f"{ctx.diagnosis.describe()} with the lock's versions -> resolve afresh, without the lock"
    if ctx.failing.command.endswith(f"> {LOCK_CONSTRAINTS}") or " -o " + LOCK_CONSTRAINTS in ctx.failing.command:
        return Repair(kind="replace", step=step, reason=reason)  # the lock itself could not be read
    return Repair(kind="insert_before", step=step, reason=reason)


RULES = {
    "deprecation_as_error": _warnings_as_errors,
    "dependency_drift": _dependency_drift,
    "installer_parse_error": _use_pip,
    "missing_module": _missing_module,
    "missing_header": _system_package,
    "missing_library": _system_package,
    "missing_tool": _system_package,
    "missing_cmake": _system_package,
    "python_version": _python_version,
    "no_distribution": _no_distribution,
    "unknown_pytest_option": _pytest_plugin,
    "unknown_pytest_config": _pytest_plugin,
    "unknown_pytest_marker": _pytest_plugin,
    "async_tests_without_plugin": _pytest_plugin,
    "vcs_version": _vcs_version,
    "service_unavailable": _service,
    "network_required": _needs_network,
    "stub_used": _stub_used,
}


def _skip(ctx: RepairContext) -> Repair | None:
    """Last resort for an auxiliary install step (requirements, test deps, apt lines): go on without it."""
    if ctx.phase != "install" or ctx.failing.kind == "project":
        return None
    return Repair(kind="skip", step=ctx.failing,
                  reason=f"no fix known for {ctx.diagnosis.describe()}; this {ctx.failing.kind} step is not the "
                         "project install, so go on without it (what the tests miss is repaired later)")


def _by_test(ctx: RepairContext) -> list[Diagnosis]:
    """What the failed tests' own messages say, most tests first, without the run's diagnosis itself: a suite
    fails for several reasons at once (a service here, the internet there), and the one the whole output shows
    first may have no repair."""
    found: dict[tuple[str, str], tuple[int, Diagnosis]] = {}
    for test in ctx.failed_tests[:500]:
        diagnosis = diagnose(test.message)
        key = (diagnosis.kind, diagnosis.subject)
        if diagnosis.kind != "unknown" and key != (ctx.diagnosis.kind, ctx.diagnosis.subject):
            found[key] = (found.get(key, (0, diagnosis))[0] + 1, diagnosis)
    return [d for _, d in sorted(found.values(), key=lambda item: -item[0])]


def repair(ctx: RepairContext) -> Repair | None:
    """The first rule for the diagnosis that proposes something not already tried (in the tests, then for
    what the failed tests' own messages say); else skip an auxiliary step; None means give up."""
    rule = RULES.get(ctx.diagnosis.kind)
    proposal = rule(ctx) if rule else None
    if ctx.phase == "tests" and (proposal is None or ctx.already_tried(proposal)):
        proposal = next((p for d in _by_test(ctx) if d.kind in RULES
                         if (p := RULES[d.kind](ctx.model_copy(update={"diagnosis": d}))) is not None
                         and not ctx.already_tried(p)), None)
    if proposal is None or ctx.already_tried(proposal):
        proposal = _without_lock(ctx)
    if proposal is None or ctx.already_tried(proposal):
        proposal = _skip(ctx)
    if proposal is None or ctx.already_tried(proposal):
        return None
    return proposal
