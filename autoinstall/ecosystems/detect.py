"""The ecosystems in the order detection tries them, with an explicit fallback (as repo2docker's buildpacks)."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import Companion, Ecosystem, Facts, Log
from autoinstall.ecosystems.go import GoEcosystem
from autoinstall.ecosystems.java import JavaEcosystem
from autoinstall.ecosystems.nested import Nested, split_name
from autoinstall.ecosystems.node import NodeEcosystem
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.rust import RustEcosystem
from autoinstall.ecosystems.subprojects import choice_notes, choose, find_subprojects
from envs.base import SandboxFactory
from envs.grading.policy import GradingRules
from envs.spec import MAX_STEPS, Plan

PYTHON: Ecosystem = PythonEcosystem()
ECOSYSTEMS: list[Ecosystem] = [GoEcosystem(), RustEcosystem(), JavaEcosystem(), PYTHON,
                              NodeEcosystem()]
"""Tried in order; the first that detects the repository leads its plan. Go first: a root go.mod is a sure
sign, while a stray script or requirements file at the root of a Go module would make it look Python. Rust
before Python for the same reason: a root Cargo.toml is the build (a pyproject.toml beside it is often
tooling), unless Python `takes_lead`: its build compiles the crate (maturin, setuptools-rust) and it has
Python tests, so its plan leads and borrows Rust's toolchain (`Accompanied`); a root pom.xml too (a Maven build
with helper scripts beside it is more common than a Python package with a pom). Node after Python: a
package.json beside a Python package is usually tooling (docs, linters, a front end), while a Node package rarely has
Python build files at its root."""
FALLBACK: Ecosystem = PYTHON
"""Used when none detects the repository: its survey then finds nothing and the build says so."""


def _at(repo: Path) -> list[Ecosystem]:
    found = [eco for eco in ECOSYSTEMS if eco.detect(repo)]
    found.sort(key=lambda eco: not getattr(eco, "takes_lead", lambda _repo: False)(repo))
    return found


def _project_in(folder: Path) -> str | None:
    """The leading ecosystem of a folder that has a manifest of its own (a pyproject.toml, a package.json, a
    go.mod, ...): loose files such as scripts or a requirements list make no project of a folder."""
    return next((e.name for e in _at(folder)
                 if any(is_file(folder, folder / m) for m in getattr(e, "manifests", ()))), None)


def detect(repo: Path) -> list[Ecosystem]:
    """The ecosystems whose files the checkout has, in ECOSYSTEMS order except that one whose optional
    `takes_lead(repo)` is true comes first (Python over a root Cargo.toml when its own build compiles the crate
    and it has Python tests). When none has, a project in a folder below the root (subprojects.py: the one the CI
    names), nested (`Nested`: "python@packages/core"); [FALLBACK] when there is none either."""
    found = _at(Path(repo))
    if found:
        return found
    projects = find_subprojects(Path(repo), _project_in)
    chosen = choose(projects)
    if chosen is None:
        return [FALLBACK]
    # The ecosystem whose manifest made the folder a project (not merely the first that detects loose files there).
    lead = get_ecosystem(chosen.ecosystem)
    return [Nested(lead, chosen.root, choice_notes(chosen, projects))]  # type: ignore[list-item]


class Accompanied:
    """A leading ecosystem with the toolchains its build borrows from companions (recorded as "python+rust"):
    the companions' Debian packages join the lead's base image, their steps go before and after the lead's
    project step, their env prefixes it; everything else is the lead's."""

    def __init__(self, lead: Ecosystem, companions: list[Ecosystem]) -> None:
        self.lead = lead
        self.companions = companions
        self.name = "+".join([lead.name, *(c.name for c in companions)])
        self.lent: list[Companion] = [c.companion() for c in companions]  # type: ignore[attr-defined]
        self.chat_environment = " ".join([lead.chat_environment, *(c.chat_environment for c in self.lent)])

    def __getattr__(self, attr: str) -> object:
        return getattr(self.lead, attr)

    def _preferred(self, toolchains: tuple[str, ...]) -> tuple[str, ...]:
        """The toolchains the companions prefer first (Rust's: the base image whose Debian has a recent rustc)."""
        theirs = {t for c in self.lent for t in c.toolchains}
        return tuple(sorted(toolchains, key=lambda t: t not in theirs))

    @property
    def toolchains(self) -> tuple[str, ...]:
        return self._preferred(tuple(self.lead.toolchains))

    @property
    def grading(self) -> GradingRules:
        """The lead's rules and every companion's (a crate's tests and manifests are the task's too)."""
        rules = self.lead.grading
        for companion in self.companions:
            rules = rules.merged(companion.grading)
        return rules

    def propose(self, facts: Facts, repo: Path, toolchains: tuple[str, ...]) -> Plan:
        plan = self.lead.propose(facts, repo, self._preferred(toolchains or self.lead.toolchains))
        for need in getattr(facts, "companions", []):
            eco = next((c for c in self.companions if c.name == need.ecosystem), None)
            if eco is None:
                continue
            lent: Companion = eco.companion(need, Path(repo))  # type: ignore[attr-defined]
            at = next((i for i, s in enumerate(plan.steps) if s.kind == "project"), len(plan.steps))
            if lent.env and at < len(plan.steps):
                prefix = " ".join(f"{k}={v}" for k, v in lent.env.items())
                plan.steps[at] = plan.steps[at].model_copy(update={"command": f"{prefix} {plan.steps[at].command}"})
            room = MAX_STEPS - len(plan.steps) - len(lent.steps)
            after = at + 1 if at < len(plan.steps) else at
            plan.steps[after:after] = lent.after[:max(room, 0)]
            plan.steps[at:at] = lent.steps
            plan.steps = plan.steps[:MAX_STEPS]
            if room < len(lent.after):
                plan.notes.append(f"{len(lent.after) - max(room, 0)} {eco.name} step(s) after the build left "
                                  f"out: a plan has at most {MAX_STEPS} steps")
            plan.notes += lent.notes
        plan.ecosystem = self.name
        return plan

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        packages = tuple(getattr(self.lead, "PACKAGES", ())) + tuple(p for c in self.lent for p in c.packages)
        return factory.base_image(python=toolchain, log=log, packages=packages)


def looked_for() -> list[str]:
    """The files detection looks for, every ecosystem's (what a `no_build_files` failure lists)."""
    names = [m for eco in ECOSYSTEMS for m in getattr(eco, "markers", getattr(eco, "manifests", ()))]
    return list(dict.fromkeys(names))


def get_ecosystem(name: str) -> Ecosystem:
    """The ecosystem recorded in a plan or spec by its name; "lead+companion" is the lead with the
    companions' toolchains (Accompanied); "NAME@folder" is NAME's project in that folder (Nested)."""
    inner, folder = split_name(name)
    if folder is not None:
        return Nested(get_ecosystem(inner), folder)  # type: ignore[return-value]
    lead, *companions = name.split("+")
    for eco in ECOSYSTEMS:
        if eco.name == lead:
            if missing := [c for c in companions if not hasattr(get_ecosystem(c), "companion")]:
                msg = f"{name!r}: {', '.join(missing)} cannot lend its toolchain (it has no `companion`)"
                raise ValueError(msg)
            if companions:
                return Accompanied(eco, [get_ecosystem(c) for c in companions])  # type: ignore[return-value]
            return eco
    msg = f"unknown ecosystem {name!r} (available: {', '.join(e.name for e in ECOSYSTEMS)})"
    raise ValueError(msg)
