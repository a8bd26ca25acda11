"""The time machine: the project's dependencies resolve as of its commit date; build tooling takes today's.

`as_of(date)` is the environment every install step runs with (recorded in the spec and as ENV lines of the
replay Dockerfile): UV_EXCLUDE_NEWER (the cutoff), LATEST_ENV (the packages exempt from it) and CHOICE_ENV
(what was chosen and why). The plan's first Python step (`exemption_step`) writes the exemptions into uv's
system configuration, where the installs and their isolated builds read them. When an install or the tests
still fail inside a dependency, `drift_repair` exempts that dependency, then gives up the cutoff (latest
releases); the install loop then runs every step again under the new environment.
"""

from __future__ import annotations

import datetime as dt
import re

from autoinstall.ecosystems.python.pypi_names import distribution_for, normalize
from envs.spec import Evidence, Repair, Step

BUILD_TOOLS = ("setuptools", "wheel", "pip", "uv", "hatchling", "hatch-vcs", "hatch-fancy-pypi-readme",
               "flit-core", "flit", "poetry-core", "poetry-dynamic-versioning", "pdm-backend", "pdm-pep517",
               "scikit-build", "scikit-build-core", "meson-python", "meson", "ninja", "cmake", "cython",
               "setuptools-scm", "setuptools-rust", "maturin", "packaging", "pybind11", "versioneer",
               "extension-helpers", "cffi", "pbr", "pyproject-metadata", "trove-classifiers", "vcs-versioning")
"""Exempt from the cutoff: today's installer asks today's build interface of them (`build_editable`, ...).
`packaging`, `pyproject-metadata`, `trove-classifiers`, `vcs-versioning`: what today's backends require."""
CUTOFF_ENV = "UV_EXCLUDE_NEWER"
PIP_CUTOFF_ENV = "PIP_UPLOADED_PRIOR_TO"
"""The same cutoff for a plain `pip install` (a fallback, a chat model's step, a project script): pip reads it
from 26.0 on (`--uploaded-prior-to`); older pip ignores it, so the exemption step brings pip to that."""
PIP_WITH_CUTOFF = "pip>=26.0"
LATEST_ENV = "AUTOINSTALL_LATEST_PACKAGES"
"""Space-separated distributions that take today's releases whatever the cutoff."""
CHOICE_ENV = "AUTOINSTALL_DEPENDENCIES"
"""What the dependencies resolve as of, and why, in words (the record of the choice)."""
UV_SYSTEM_CONFIG = "/etc/uv/uv.toml"


def cutoff(date: str | None, now: dt.datetime | None = None) -> tuple[str | None, str]:
    """The cutoff (RFC 3339, UTC) for a commit date, or None with the reason latest releases are used."""
    now = now or dt.datetime.now(dt.UTC)
    if not date:
        return None, "latest releases: the source has no commit date (not a git checkout)"
    try:
        when = dt.datetime.fromisoformat(date)
    except ValueError:
        return None, f"latest releases: the commit date {date!r} is not a date"
    when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    if when > now + dt.timedelta(days=1):
        return None, f"latest releases: the commit date {date} is in the future (a wrong clock in the commit)"
    stamp = when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return stamp, f"as of the commit date {stamp}; build tooling ({LATEST_ENV}) takes today's releases"


def as_of(date: str | None) -> dict[str, str]:
    """The install environment for a commit date: cutoff and exemptions, or latest releases with the reason."""
    stamp, choice = cutoff(date)
    if stamp is None:
        return {CHOICE_ENV: choice}
    return {CUTOFF_ENV: stamp, PIP_CUTOFF_ENV: stamp, LATEST_ENV: " ".join(BUILD_TOOLS), CHOICE_ENV: choice}


def exemption_step(evidence: Evidence) -> Step:
    """Write LATEST_ENV's packages into uv's system configuration as exempt from the cutoff (a no-op list
    when the build resolves with latest releases)."""
    command = (f"mkdir -p {UV_SYSTEM_CONFIG.rsplit('/', 1)[0]} && echo '[exclude-newer-package]' > {UV_SYSTEM_CONFIG}"
               f" && for p in ${LATEST_ENV}; do echo \"$p = false\" >> {UV_SYSTEM_CONFIG}; done"
               f" && if [ -n \"${CUTOFF_ENV}\" ] && python -m pip --version >/dev/null 2>&1; then"
               f" uv pip install -q --exclude-newer-package pip=false '{PIP_WITH_CUTOFF}'; fi")
    return Step(command=command, kind="python", evidence=[evidence],
                why=f"dependencies resolve as of the commit date ({CUTOFF_ENV}) but build tooling, listed in "
                    f"{LATEST_ENV}, takes today's releases: uv reads these exemptions from {UV_SYSTEM_CONFIG}; "
                    f"pip becomes {PIP_WITH_CUTOFF}, which honours the cutoff too ({PIP_CUTOFF_ENV})")


SITE = r"(?:site|dist)-packages/(?P<mod>[A-Za-z_]\w*)"
RAISED_IN_DEPENDENCY = re.compile(
    rf"File \"[^\"]*{SITE}[^\"]*\", line \d+, in [^\n]*\n(?:[^\n]*\n){{0,3}}?(?:E\s+)?"
    r"(?P<err>(?:ImportError: cannot import name|AttributeError|TypeError|[\w.]*PluginValidationError|"
    r"(?:Pending)?DeprecationWarning|[\w.]*Warning)):")
PLUGIN_VALIDATION = re.compile(r"PluginValidationError: .{0,200}?plugin[^\n]*?(?:<module '|: )(?P<mod>[A-Za-z_]\w*)")
WARNING_FROM = re.compile(rf"{SITE}\S*:\d+: (?P<err>\w*(?:Deprecation)?Warning):")
OLD_BUILD_FAILED = re.compile(r"Failed to build `(?P<mod>[A-Za-z0-9][\w.-]*)==[^`]+`")
"""A dependency's sdist as of the cutoff does not build here (often: no wheels yet for this interpreter)."""


def drift_subject(output: str) -> str | None:
    """The dependency a failure was raised inside (import name), when the output shows it; else None."""
    for pattern in (PLUGIN_VALIDATION, WARNING_FROM, OLD_BUILD_FAILED):
        if (match := pattern.search(output)) is not None:
            return match.group("mod")
    matches = list(RAISED_IN_DEPENDENCY.finditer(output))
    if matches:
        return matches[-1].group("mod")
    return None


def drift_repair(env: dict[str, str], subject: str, evidence: str, tried: list[Repair]) -> Repair | None:
    """Exempt the dependency the failure comes from; once that was tried, latest releases; None when no
    cutoff is in force (the failure is not the time machine's)."""
    if not env.get(CUTOFF_ENV):
        return None
    dist = normalize(distribution_for(subject)) if subject else ""
    exempt = env.get(LATEST_ENV, "").split()
    if dist and dist not in exempt and not any(dist in r.env.get(LATEST_ENV, "").split() for r in tried):
        return Repair(kind="set_env", env={LATEST_ENV: " ".join([*exempt, dist])},
                      reason=f"the failure is raised inside {dist} ({evidence[:120]}): {dist} takes today's "
                             f"release instead of the one as of {env[CUTOFF_ENV]}")
    if any(CUTOFF_ENV in r.env for r in tried):
        return None
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    choice = f"latest releases (as of {now}): as of the commit date {env[CUTOFF_ENV]} a dependency failed " \
             f"({evidence[:120]})"
    return Repair(kind="set_env", env={CUTOFF_ENV: now, PIP_CUTOFF_ENV: now, CHOICE_ENV: choice},
                  reason=f"dependencies as of {env[CUTOFF_ENV]} still fail inside a dependency: latest releases")
