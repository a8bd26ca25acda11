"""Phase 1 of the embedded model: RepoFacts -> a ranked Plan, every step with why and evidence.

Steps are ordered by what they can see (system packages, manifest-only installs, the project, test
deps) so Docker layer caching stays useful, and the local checkout is always what gets installed.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from autoinstall.ecosystems.python.proposal.browsers import plan_browsers
from autoinstall.ecosystems.python.proposal.compiled import header_packages
from autoinstall.ecosystems.python.proposal.deps import TOOLS, Selection, declared_names, select
from autoinstall.ecosystems.python.proposal.interpreter import choose_python
from autoinstall.ecosystems.python.proposal.locked import choose_lock, constrained, lock_step
from autoinstall.ecosystems.python.proposal.services import plan_services
from autoinstall.ecosystems.python.proposal.system import system_step
from autoinstall.ecosystems.python.proposal.testcmd import checks, choose_tests
from autoinstall.ecosystems.python.pypi_names import distribution_for, normalize, requirement_name
from autoinstall.ecosystems.python.survey.facts import RepoFacts, Requirement
from autoinstall.ecosystems.python.timemachine import exemption_step
from autoinstall.ecosystems.repofiles import kind_of
from autoinstall.ecosystems.services import with_services
from envs.spec import Evidence, Plan, Step

VCS_ENV = {
    "setuptools-scm": "SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0",
    "hatch-vcs": "SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0",
    "pdm-scm": "PDM_BUILD_SCM_VERSION=0.0.0 SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0",
    "poetry-dynamic-versioning": "POETRY_DYNAMIC_VERSIONING_BYPASS=0.0.0",
}
BUILD_TOOLS = ["setuptools", "wheel"]


def _install(specs: list[str]) -> str:
    return "uv pip install " + " ".join(shlex.quote(s) for s in specs)


def _evidence(items: list[Evidence | None]) -> list[Evidence]:
    unique = {(e.file, e.line, e.text): e for e in items if e is not None}
    return list(unique.values())[:8]


def _test_requirements(facts: RepoFacts, sel: Selection, runner: str) -> list[Requirement]:
    """Test deps the task envs and CI name, plus pytest plugins the config implies and pytest itself."""
    wanted = dict(sel.test_deps)
    for group in sel.tool_groups:
        for req in group.requirements:
            wanted.setdefault(requirement_name(req.spec) or req.spec, req)
    declared = declared_names(facts, sel) | set(wanted)
    plugins = (facts.pytest.plugins if facts.pytest else []) + facts.tests.fixtures
    if runner == "pytest":
        for plugin in plugins:
            if normalize(plugin.name) not in declared:
                wanted[normalize(plugin.name)] = Requirement(spec=plugin.name, evidence=plugin.evidence)
        if "pytest" not in declared:
            where = facts.tests.dirs[0] if facts.tests.dirs else "."
            wanted["pytest"] = Requirement(
                spec="pytest",
                evidence=Evidence(
                    file=where, text=f"{facts.tests.files} test module(s), {facts.tests.style} style"
                ),
            )
    return list(wanted.values())


def _inferred(facts: RepoFacts, declared: set[str]) -> list[Requirement]:
    """Distributions for the third-party modules the code imports unconditionally."""
    found: dict[str, Requirement] = {}
    for module in facts.imports:
        dist = distribution_for(module.name)
        if not module.optional and normalize(dist) not in declared and normalize(dist) not in TOOLS:
            found.setdefault(normalize(dist), Requirement(spec=dist, evidence=module.evidence))
    return list(found.values())


def _undeclared_note(facts: RepoFacts, declared: set[str]) -> str | None:
    missing = [
        f"{m.name} (-> {distribution_for(m.name)}, {m.evidence.file}:{m.evidence.line})"
        for m in facts.imports
        if not m.optional
        and normalize(distribution_for(m.name)) not in declared
        and normalize(distribution_for(m.name)) not in ("pytest",)
    ]
    if not missing:
        return None
    return (
        "imported but declared nowhere (left to phase 2, which installs them if they turn out missing): "
        + ", ".join(missing[:10])
    )


def _project_step(facts: RepoFacts, sel: Selection, repo: Path, no_isolation: bool) -> Step:
    extras = list(sel.extras)
    target = f".[{','.join(extras)}]" if extras else "."
    command = f"uv pip install -e {shlex.quote(target)}" + (" --no-build-isolation" if no_isolation else "")
    why = "install the local checkout (editable), not the PyPI release"
    if extras:
        why += f", with the test extras {', '.join(extras)}"
    versioning = facts.versioning
    if versioning and versioning.needs_vcs and kind_of(repo, repo / ".git") not in ("dir", "file"):
        command = f"{VCS_ENV.get(versioning.scheme, VCS_ENV['setuptools-scm'])} {command}"
        why += (
            f"; {versioning.scheme} reads the version from git and the checkout has no .git, so one is given"
        )
    evidence = [facts.build.evidence, *sel.extras.values(), versioning.evidence if versioning else None]
    return Step(command=command, why=why, kind="project", evidence=_evidence(evidence))


def _manifest_steps(facts: RepoFacts, sel: Selection) -> tuple[list[Step], bool]:
    """Requirements files, dependency groups and setup.py's build-time imports; True if builds need them."""
    steps = []
    if sel.requirement_files:
        args = [a for path in sel.requirement_files for a in ("-r", path)]
        steps.append(
            Step(
                command=_install(args),
                kind="python",
                evidence=_evidence(list(sel.requirement_files.values())),
                why=f"requirements files: {', '.join(sel.requirement_files)}",
            )
        )
    if sel.groups:
        args = [a for group in sel.groups for a in ("--group", group)]
        steps.append(
            Step(
                command=_install(args),
                kind="test-deps",
                evidence=_evidence(list(sel.groups.values())),
                why=f"PEP 735 dependency groups {', '.join(sel.groups)} (uv reads them from pyproject.toml)",
            )
        )
    build_imports = [distribution_for(m) for m in facts.setup_imports]
    no_isolation = bool(build_imports) and not facts.build.requires and facts.build.installable
    if no_isolation:
        steps.append(
            Step(
                command=_install(BUILD_TOOLS + build_imports),
                kind="python",
                evidence=[Evidence(file="setup.py", text=f"import {m}") for m in facts.setup_imports][:8],
                why="setup.py imports these at build time and pyproject.toml declares no build requirements;"
                " the project is then built without isolation so it sees them",
            )
        )
    return steps, no_isolation


def propose_plan(facts: RepoFacts, repo: Path, pythons: tuple[str, ...] = ("3.11", "3.13")) -> Plan:
    """The embedded model's plan for the repository the facts describe."""
    choice = choose_python(facts, repo, pythons)
    python, notes = choice.python, choice.notes
    sel = select(facts)
    tests = choose_tests(facts, repo)
    notes += tests.notes
    services = plan_services(facts)
    if services.step and tests.command:
        tests.command = with_services(tests.command, services.env)
    test_reqs = _test_requirements(facts, sel, tests.runner)
    declared = declared_names(facts, sel) | {requirement_name(r.spec) or "" for r in test_reqs}
    declared.add(normalize(facts.project_name or "-"))
    steps, no_isolation = _manifest_steps(facts, sel)
    inferred: list[Requirement] = []
    if facts.build.installable:
        steps.append(_project_step(facts, sel, repo, no_isolation))
        note = _undeclared_note(facts, declared)
        notes += [note] if note else []
    elif facts.dependencies:
        steps.append(
            Step(
                command=_install([r.spec for r in facts.dependencies]),
                kind="python",
                why="the project declares dependencies but cannot be installed itself",
                evidence=_evidence([r.evidence for r in facts.dependencies]),
            )
        )
    else:
        inferred = _inferred(facts, declared)
        notes.append(
            "no build files (pyproject.toml, setup.py, setup.cfg): nothing to install as a package"
            + ("; installing what the imports need" if inferred else "")
        )
    if inferred:
        steps.append(
            Step(
                command=_install([r.spec for r in inferred]),
                kind="python",
                why="third-party modules the code imports (import name mapped to its PyPI distribution)",
                evidence=_evidence([r.evidence for r in inferred]),
            )
        )
    if test_reqs and (steps or facts.tests.files):
        steps.append(
            Step(
                command=_install([r.spec for r in test_reqs]),
                kind="test-deps",
                why="test dependencies: " + ", ".join(r.spec for r in test_reqs),
                evidence=_evidence([r.evidence for r in test_reqs]),
            )
        )
    browsers = plan_browsers(facts, sel, test_reqs)
    if browsers.after and steps:
        steps.append(browsers.after)
    all_specs = (
        facts.dependencies
        + test_reqs
        + inferred
        + [r for x in facts.extras if x.name in sel.extras for r in x.requirements]
        + [r for f in facts.requirements_files if f.path in sel.requirement_files for r in f.requirements]
    )
    steps, lock_notes = _locked_and_dated(facts, python, steps)
    headers, header_notes = header_packages(facts, repo)
    steps[:0] = [s for s in (system_step(facts, all_specs, headers), browsers.system, services.step) if s]
    notes += services.notes + browsers.notes + lock_notes + header_notes + _context_notes(facts)
    if not steps:
        notes.append("nothing to install: no build files, requirements or third-party imports")
    return Plan(
        python=python,
        steps=steps[:10],
        checks=checks(facts, tests, repo),
        test_command=tests.command,
        test_runner=tests.runner,
        notes=notes,
    )  # type: ignore[arg-type]


def _locked_and_dated(facts: RepoFacts, python: str, steps: list[Step]) -> tuple[list[Step], list[str]]:
    """The lock's versions as constraints of every install (locked.py), and, in a git checkout (which has a
    commit date to resolve as of), the build tooling's exemption from that date first (timemachine.py)."""
    lock, notes = choose_lock(facts, python)
    if lock is not None and steps:
        steps = [lock_step(lock), *(constrained(s) for s in steps)]
    if facts.has_git and any("uv pip install" in s.command for s in steps):
        evidence = facts.build.evidence or next((e for s in steps for e in s.evidence), Evidence(file=".git"))
        steps.insert(0, exemption_step(evidence))
    return steps, notes


def _context_notes(facts: RepoFacts) -> list[str]:
    notes = []
    if facts.c_extensions:
        notes.append(
            "compiled code (" + ", ".join(c.name for c in facts.c_extensions[:3]) + "): headers or "
            "libraries it needs that the base image lacks are diagnosed from the build output"
        )
    unread = [f for f in facts.lock_files if f not in {lk.path for lk in facts.locks} and f != "Pipfile"]
    if unread:
        notes.append(f"lock files not installed from ({', '.join(unread)}); the plan resolves afresh")
    return notes + [f"survey: {n}" for n in facts.notes]
