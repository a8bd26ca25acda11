"""Which interpreter a plan asks for: the nearest buildable version to what the project says it runs on.

What the project says, strongest first: `.python-version` (the one its developers run), CI matrices (what it
is tested on), tox envlists and nox sessions, trove classifiers; `requires-python` bounds them all. The
versions offered are the ones base images can be built for here (envs/hostfacts.py `buildable_pythons`).
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import BaseModel

from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.python.survey.tasks import expand_envlist
from autoinstall.ecosystems.repofiles import RepoFiles
from autoinstall.errors import AutoinstallError
from envs.hostfacts import BUILDS_ENV, builds_dir, python_patch
from envs.spec import Evidence

CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)\b")
CI_KEY = re.compile(r"^\s*-?\s*(?:python[-_]?versions?|python)\s*:\s*(.*)$", re.IGNORECASE)
CI_ITEM = re.compile(r"^\s*-\s*['\"]?[\w.-]+['\"]?\s*(?:#.*)?$")
"""One scalar of a YAML block list (`- "3.12"`), not a step (`- run: ...`)."""
VERSION = re.compile(r"(?<![\d.])(3\.\d+)(?![\d])")
TOX_ENV = re.compile(r"^py(?:thon)?(3)\.?(\d+)$")
NOX_SESSION = re.compile(r"@nox\.session\((.*?)\)", re.DOTALL)


class NoInterpreterError(AutoinstallError):
    """The project's requires-python allows none of the interpreters base images can be built for here."""


class PythonHint(BaseModel):
    """Versions one source in the repository names, and where."""

    source: str
    """".python-version", ".tool-versions", "runtime.txt", "Pipfile", "lock file", "CI matrix", "tox envlist",
    "nox sessions" or "classifiers"."""
    versions: list[str]
    evidence: Evidence


class PythonChoice(BaseModel):
    python: str
    notes: list[str]
    evidence: list[Evidence]


def python_hints(repo: Path, facts: RepoFacts | None = None) -> list[PythonHint]:
    """What the repository says it runs on, strongest first (sources with no version left out): the version
    its developers pin, a lock compiled for one interpreter, then what CI, tox, nox and classifiers name."""
    files = RepoFiles(repo)
    hints = [*_pinned(files), _lock(facts), _ci_matrix(files), _tox_envlist(files), _nox_sessions(files),
             _classifiers(files)]
    return [h for h in hints if h is not None and h.versions]


def _pinned(files: RepoFiles) -> list[PythonHint | None]:
    """`.python-version` (pyenv, uv), `.tool-versions` (asdf), `runtime.txt` (Heroku), Pipfile's [requires]."""
    pipfile = (files.toml("Pipfile") or {}) if files.text("Pipfile") is not None else {}
    requires = pipfile.get("requires") if isinstance(pipfile.get("requires"), dict) else {}
    key = next((k for k in ("python_version", "python_full_version") if isinstance(requires.get(k), str)), None)
    return [
        _first_line(files, ".python-version", re.compile(r"\s*(?:cpython-|python)?(3\.\d+)")),
        _first_line(files, ".tool-versions", re.compile(r"\s*python\s+(3\.\d+)"), needle="python"),
        _first_line(files, "runtime.txt", re.compile(r"\s*python-(3\.\d+)")),
        PythonHint(source="Pipfile", versions=VERSION.findall(requires[key])[:1],
                   evidence=files.evidence("Pipfile", key)) if key else None,
    ]


def _first_line(files: RepoFiles, rel: str, pattern: re.Pattern[str], needle: str = "") -> PythonHint | None:
    """The version on the file's first meaningful line (the first containing `needle`)."""
    for number, line in enumerate((files.text(rel) or "").splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#") and needle in line:
            m = pattern.match(line)
            return PythonHint(source=rel, versions=[m[1]] if m else [],
                              evidence=Evidence(file=rel, line=number, text=line.strip()[:200]))
    return None


def _lock(facts: RepoFacts | None) -> PythonHint | None:
    """A pip-tools lock compiled for one interpreter (`requirements-cp311.txt`)."""
    locks = [lock for lock in (facts.locks if facts else []) if lock.python]
    if not locks:
        return None
    return PythonHint(source="lock file", versions=_unique([lock.python or "" for lock in locks]),
                      evidence=locks[0].evidence)


def _ci_matrix(files: RepoFiles) -> PythonHint | None:
    """Versions under a `python-version:` (or `python:`) key of the GitHub workflows, inline or as a list."""
    found: list[str] = []
    first: Evidence | None = None
    for path in files.workflows():
        rel = files.rel(path)
        lines = (files.text(rel) or "").splitlines()
        for i, line in enumerate(lines):
            m = CI_KEY.match(line)
            if not m:
                continue
            versions = _cpython_versions(m[1].split(","))
            if not m[1].strip():  # a block list on the following lines
                items = lines[i + 1:i + 40]
                end = next((n for n, item in enumerate(items) if not CI_ITEM.match(item)), len(items))
                versions = _cpython_versions(items[:end])
            if versions:
                first = first or Evidence(file=rel, line=i + 1, text=line.strip()[:200])
                found += versions
    return PythonHint(source="CI matrix", versions=_unique(found), evidence=first) if first else None


def _cpython_versions(items: list[str]) -> list[str]:
    """The 3.x versions a list of CI items names, PyPy's left out."""
    return [v for item in items if "pypy" not in item.lower() for v in VERSION.findall(item)]


def _tox_envlist(files: RepoFiles) -> PythonHint | None:
    for rel, section in (("tox.ini", "tox"), ("setup.cfg", "tox:tox")):
        cfg = files.ini(rel) if files.text(rel) is not None else None
        if cfg is None or not cfg.has_section(section):
            continue
        key = "envlist" if cfg.has_option(section, "envlist") else "env_list"
        if not cfg.has_option(section, key):
            continue
        versions = [f"{m[1]}.{m[2]}" for name in expand_envlist(cfg.get(section, key))
                    for factor in name.split("-") if (m := TOX_ENV.match(factor))]
        return PythonHint(source="tox envlist", versions=_unique(versions), evidence=files.evidence(rel, key))
    return None


def _nox_sessions(files: RepoFiles) -> PythonHint | None:
    text = files.text("noxfile.py") or ""
    versions = [v for m in NOX_SESSION.finditer(text) if "python" in m[1] for v in VERSION.findall(m[1])]
    if not versions:
        return None
    return PythonHint(source="nox sessions", versions=_unique(versions), evidence=files.evidence("noxfile.py",
                                                                                                 "nox.session"))


def _classifiers(files: RepoFiles) -> PythonHint | None:
    for rel in ("pyproject.toml", "setup.cfg", "setup.py"):
        versions = CLASSIFIER.findall(files.text(rel) or "")
        if versions:
            return PythonHint(source="classifiers", versions=_unique(versions),
                              evidence=files.evidence(rel, f"Programming Language :: Python :: {versions[0]}"))
    return None


def _unique(versions: list[str]) -> list[str]:
    return sorted(set(versions), key=_key)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _distance(a: str, b: str) -> int:
    (a1, a2), (b1, b2) = _key(a)[:2], _key(b)[:2]
    return abs(a2 - b2) + 100 * abs(a1 - b1)


def nearest(targets: list[str], allowed: list[str]) -> str:
    """The allowed version nearest to any target; ties go to the one earlier in `allowed` (preference)."""
    return min(allowed, key=lambda v: (min(_distance(v, t) for t in targets), allowed.index(v)))


def requires_python(facts: RepoFacts) -> SpecifierSet | None:
    """The project's requires-python as a specifier set (None when absent or unreadable)."""
    text = facts.requires_python
    if not text:
        return None
    try:
        return SpecifierSet(re.sub(r"(?<=\d)\s+(?=[<>=!~])", ",", text.strip().rstrip(",")))
    except InvalidSpecifier:
        return None


def choose_python(facts: RepoFacts, repo: Path, pythons: tuple[str, ...]) -> PythonChoice:
    """The interpreter for the plan: among `pythons` (preferred first) those requires-python allows, the one
    nearest to the strongest hint (`python_hints`), else nearest to the preferred default.

    A single version offered is a forced one (`--python`, the embedded model's `python`): there is nothing to
    choose, so it is used even where requires-python excludes it, and the note says so.

    Raises:
        NoInterpreterError: requires-python allows none of several `pythons`; the message names them.
    """
    spec, default = requires_python(facts), pythons[0]
    notes: list[str] = []
    evidence = [facts.requires_python_evidence] if facts.requires_python_evidence else []
    if facts.requires_python and spec is None:
        notes.append(f"requires-python {facts.requires_python!r} is not a valid specifier; ignored")
    if len(pythons) == 1:
        return _forced(facts, default, spec, notes, evidence)
    allowed = [v for v in pythons if spec is None or spec.contains(python_patch(v), prereleases=True)]
    if not allowed:
        where = f" ({_at(evidence[0])})" if evidence else ""
        msg = (f"requires-python {facts.requires_python!r}{where} allows none of the interpreters base images "
               f"can be built for here: {', '.join(sorted(pythons, key=_key))}. Add a CPython build of a "
               f"version it allows under {builds_dir()} (${BUILDS_ENV}), or fix requires-python.")
        raise NoInterpreterError(msg)
    for hint in python_hints(repo, facts):
        named = [v for v in allowed if v in hint.versions]
        python = nearest([default], named) if named else nearest(hint.versions, allowed)
        said = ", ".join(hint.versions)
        how = "" if named else f" (none of them {'allowed and ' if spec else ''}buildable here; the nearest)"
        where = _at(hint.evidence)
        where = where if hint.evidence.file == hint.source else f"{hint.source} ({where})"
        notes.append(f"Python {python}: {where} names {said}{how}")
        if spec is not None and default not in allowed:
            notes.append(f"requires-python {facts.requires_python!r} excludes {default}")
        return PythonChoice(python=python, notes=notes, evidence=[hint.evidence, *evidence])
    python = nearest([default], allowed)
    if python != default:
        notes.append(f"requires-python {facts.requires_python!r} excludes {default}; using {python}, the "
                     f"nearest it allows")
    return PythonChoice(python=python, notes=notes, evidence=evidence)


def _forced(facts: RepoFacts, python: str, spec: SpecifierSet | None, notes: list[str],
            evidence: list[Evidence]) -> PythonChoice:
    """The one interpreter offered, whatever the repository says (a requires-python that excludes it noted)."""
    if spec is not None and not spec.contains(python_patch(python), prereleases=True):
        where = f" ({_at(evidence[0])})" if evidence else ""
        notes.append(f"Python {python}: forced by --python; requires-python {facts.requires_python!r}{where} does "
                     "not allow it (an installer that enforces it fails; uv ignores upper bounds)")
    else:
        notes.append(f"Python {python}: forced by --python")
    return PythonChoice(python=python, notes=notes, evidence=evidence)


def _at(evidence: Evidence) -> str:
    return f"{evidence.file}:{evidence.line}" if evidence.line else evidence.file


def switch_target(complaint: str, current: str, available: list[str], tried: list[str]) -> str | None:
    """For an installer's "requires a different Python" complaint (a specifier, possibly empty): the version
    nearest to `current` it allows, skipping `current` and versions already switched to; None when none."""
    try:
        spec = SpecifierSet(complaint)
    except InvalidSpecifier:
        spec = SpecifierSet()
    fits = [v for v in available if v != current and v not in tried
            and spec.contains(python_patch(v), prereleases=True)]
    return nearest([current], fits) if fits else None


__all__ = ["NoInterpreterError", "PythonChoice", "PythonHint", "choose_python", "python_hints", "switch_target"]
