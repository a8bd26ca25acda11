"""The embedded model's phase-2 rules: a diagnosed failure -> one repair, or None to give up."""
from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from autoinstall.debian_names import package_for
from autoinstall.pypi_names import distribution_for
from autoinstall.plan import Evidence, Step
from autoinstall.pytest_plugins import plugin_for_ini, plugin_for_option
from autoinstall.repair import Repair, RepairContext

APT = "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends"


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
    package = package_for(ctx.diagnosis.kind, ctx.diagnosis.subject)
    if package is None:
        return None
    return Repair(kind="insert_before", reason=f"{ctx.diagnosis.describe()} -> Debian {package}",
                  step=_step(f"{APT} {package}", f"provides {ctx.diagnosis.subject}", "system", ctx))


def _python_version(ctx: RepairContext) -> Repair | None:
    try:
        spec = SpecifierSet(ctx.diagnosis.subject)
    except InvalidSpecifier:
        spec = SpecifierSet()
    for version in ctx.available_pythons:
        if version != ctx.python and spec.contains(f"{version}.0", prereleases=True):
            return Repair(kind="switch_python", python=version,
                          reason=f"the project needs Python {spec or 'another version'}; {version} fits")
    return None


def _no_distribution(ctx: RepairContext) -> Repair | None:
    dist = re.sub(r"\[.*\]$", "", ctx.diagnosis.subject)
    return Repair(kind="stub_distribution", distribution=dist, import_name=re.sub(r"[-.]", "_", dist).lower(),
                  reason=f"{dist} cannot be installed from any registry: a stub stands in, tests importing it "
                         "are deselected")


def _pytest_plugin(ctx: RepairContext) -> Repair | None:
    kind, subject = ctx.diagnosis.kind, ctx.diagnosis.subject
    if kind == "unknown_pytest_option":
        plugin = plugin_for_option(subject)
    elif kind == "unknown_pytest_config":
        plugin = plugin_for_ini(subject)
    else:
        plugin = "pytest-asyncio"
    return _pip_install(plugin, ctx) if plugin else None


def _vcs_version(ctx: RepairContext) -> Repair | None:
    env = {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.0.0"}
    if all(ctx.env.get(k) == v for k, v in env.items()):
        return None
    return Repair(kind="set_env", env=env, reason="the build reads its version from VCS metadata; give it one")


def _service(ctx: RepairContext) -> Repair | None:
    refused = r"Connection refused|could not connect|Cannot assign requested address|Errno 111|Errno 99"
    needing = [t.test_id for t in ctx.failed_tests if re.search(refused, t.message)]
    if not needing:
        return None
    return Repair(kind="deselect", tests=needing,
                  reason=f"these tests need a running {ctx.diagnosis.subject} service, which the environment "
                         "does not provide")


def _use_pip(ctx: RepairContext) -> Repair | None:
    """uv rejects some requirement syntax that pip accepts (e.g. `-e.[tests]`): let pip do this one."""
    command = ctx.failing.command
    if "uv pip install" not in command:
        return None
    return Repair(kind="replace", reason=f"uv cannot parse {ctx.diagnosis.subject}; pip can",
                  step=ctx.failing.model_copy(update={"command": command.replace("uv pip install",
                                                                                 "python -m pip install")}))


RULES = {
    "installer_parse_error": _use_pip,
    "missing_module": _missing_module,
    "missing_header": _system_package,
    "missing_library": _system_package,
    "missing_tool": _system_package,
    "python_version": _python_version,
    "no_distribution": _no_distribution,
    "unknown_pytest_option": _pytest_plugin,
    "unknown_pytest_config": _pytest_plugin,
    "async_tests_without_plugin": _pytest_plugin,
    "vcs_version": _vcs_version,
    "service_unavailable": _service,
}


def _skip(ctx: RepairContext) -> Repair | None:
    """Last resort for an auxiliary install step (requirements, test deps, apt lines): go on without it."""
    if ctx.phase != "install" or ctx.failing.kind == "project":
        return None
    return Repair(kind="skip", step=ctx.failing,
                  reason=f"no fix known for {ctx.diagnosis.describe()}; this {ctx.failing.kind} step is not the "
                         "project install, so go on without it (what the tests miss is repaired later)")


def repair(ctx: RepairContext) -> Repair | None:
    """The first rule for the diagnosis that proposes something not already tried; else skip an auxiliary
    step; None means give up."""
    rule = RULES.get(ctx.diagnosis.kind)
    proposal = rule(ctx) if rule else None
    if proposal is None or ctx.already_tried(proposal):
        proposal = _skip(ctx)
    if proposal is None or ctx.already_tried(proposal):
        return None
    return proposal
