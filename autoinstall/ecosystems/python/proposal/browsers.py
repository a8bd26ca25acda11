"""Suites that drive a browser (playwright's Python package, pytest-playwright, selenium): Debian's chromium,
planned from the evidence before anything fails (the shared repairs in autoinstall/ecosystems/browsers.py
handle what this misses).

The evidence: test requirements (test extras, dependency groups, requirements files, tox/nox deps, the test
deps a plan installs) naming one of their distributions, test modules importing them, and CI commands running
`playwright install`, which downloads a build these machines cannot reach. Two steps:
- with the system packages: chromium (chromium-driver for selenium, whose Selenium Manager takes a driver on
  PATH and is told to stay offline), and the flags a container needs;
- after the test dependencies, for playwright: a link to Debian's chromium at each path playwright looks for
  its own build (headless shell and full browser), found by asking playwright itself: each launch fails at
  once with "Executable doesn't exist at PATH" (their names change with its version, so nothing is guessed).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from autoinstall.ecosystems.browsers import CHROMIUM, chromium_step
from autoinstall.ecosystems.python.pypi_names import normalize, requirement_name
from autoinstall.ecosystems.python.proposal.deps import Selection
from autoinstall.ecosystems.python.survey.facts import RepoFacts, Requirement
from envs.spec import Evidence, Step

PLAYWRIGHT = frozenset({"playwright", "pytest-playwright", "pytest-playwright-asyncio"})
SELENIUM = frozenset({"selenium", "pytest-selenium"})
"""Distributions (and, as import names, modules) whose tests drive Chromium through playwright or a WebDriver."""
PLAYWRIGHT_LINKS = f"""import os, re
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    for headless in (True, False):
        try:
            p.chromium.launch(headless=headless).close()
        except Exception as e:
            m = re.search(r"Executable doesn't exist at (/\\S+)", str(e))
            if m and not os.path.lexists(m[1]):
                os.makedirs(os.path.dirname(m[1]), exist_ok=True)
                os.symlink("{CHROMIUM}", m[1])
                print(m[1], "->", "{CHROMIUM}")
"""
"""Run after playwright is installed: a link at every path its chromium launches look for a build."""


@dataclass
class BrowserPlan:
    """The system step (chromium), the step after the test dependencies (playwright's links), notes."""

    system: Step | None = None
    after: Step | None = None
    notes: list[str] = field(default_factory=list)


def _test_requirements(facts: RepoFacts, sel: Selection, test_reqs: list[Requirement]) -> list[Requirement]:
    """Requirements the tests install: not the runtime dependencies (a scraper's tests may never launch one)."""
    out = list(test_reqs)
    out += [r for x in facts.extras if x.test_like or x.name in sel.extras for r in x.requirements]
    out += [r for g in facts.dependency_groups if g.test_like or g.name in sel.groups for r in g.requirements]
    out += [r for f in facts.requirements_files if f.test_like for r in f.requirements]
    out += [r for env in facts.task_envs if env.test_like for r in env.deps]
    return out


def _evidence(facts: RepoFacts, sel: Selection, test_reqs: list[Requirement], names: frozenset[str]) -> list[Evidence]:
    """Where the repository shows its tests use one of `names` (file:line), at most 8."""
    found = [r.evidence for r in _test_requirements(facts, sel, test_reqs)
             if normalize(requirement_name(r.spec) or "") in names]
    found += [m.evidence for m in facts.imports if m.in_tests and m.top in {n.replace("-", "_") for n in names}]
    if "playwright" in names:
        found += [c.evidence for c in facts.commands if "playwright install" in c.text]
    return list({(e.file, e.line): e for e in found}.values())[:8]


def plan_browsers(facts: RepoFacts, sel: Selection, test_reqs: list[Requirement]) -> BrowserPlan:
    """Debian's chromium when the evidence shows a suite that drives it, with playwright's links after it."""
    playwright = _evidence(facts, sel, test_reqs, PLAYWRIGHT)
    selenium = _evidence(facts, sel, test_reqs, SELENIUM)
    out = BrowserPlan()
    if not playwright and not selenium:
        return out
    both = list({(e.file, e.line): e for e in playwright + selenium}.values())[:8]
    out.system = chromium_step([], both, driver=bool(selenium))
    users = " and ".join(n for n, e in (("playwright", playwright), ("selenium", selenium)) if e)
    out.notes.append(f"the tests drive a browser through {users} ({_where(both)}): Debian's chromium stands in "
                     "for the build their installers would download")
    if playwright:
        out.after = Step(command=f"python -c {shlex.quote(PLAYWRIGHT_LINKS)}", kind="test-deps",
                         evidence=playwright[:8],
                         why=f"playwright looks for its own chromium build: a link to {CHROMIUM} where it looks")
    return out


def _where(evidence: list[Evidence]) -> str:
    return ", ".join(f"{e.file}:{e.line}" if e.line else e.file for e in evidence[:3])
