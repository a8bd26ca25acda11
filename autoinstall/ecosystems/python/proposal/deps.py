"""Which requirements files, groups, extras and test dependencies a plan installs, and why."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from autoinstall.ecosystems.python.pypi_names import normalize, requirement_name
from autoinstall.ecosystems.python.survey.facts import DepSet, RepoFacts, Requirement, TaskEnv, is_test_name
from envs.spec import Evidence

TOOLS = {
    "tox",
    "nox",
    "pip",
    "uv",
    "wheel",
    "build",
    "twine",
    "poetry",
    "pre-commit",
    "coveralls",
    "codecov",
    "virtualenv",
    "pipenv",
    "flit",
    "hatch",
    "pdm",
    "tox-uv",
    "nox-uv",
    "tox-gh-actions",
    "setuptools",
}
"""Packaging and workflow tools: never installed as test dependencies."""
SETUP_TARGETS = {
    "install",
    "deps",
    "develop",
    "setup",
    "init",
    "bootstrap",
    "dev",
    "requirements",
    "venv",
    "env",
}


@dataclass
class Selection:
    """What to install, each item with the evidence that asks for it."""

    requirement_files: dict[str, Evidence] = field(default_factory=dict)
    groups: dict[str, Evidence] = field(default_factory=dict)
    extras: dict[str, Evidence] = field(default_factory=dict)
    test_deps: dict[str, Requirement] = field(default_factory=dict)
    """Keyed by normalized distribution name."""
    tool_groups: list[DepSet] = field(default_factory=list)


def _add_ref(facts: RepoFacts, sel: Selection, arg: str, evidence: Evidence) -> bool:
    """Record `-r file`, `-e .[x]`, `.[x]`, `--group g` style arguments; False if `arg` is a plain spec."""
    words = arg.split(None, 1)
    if words[0] in ("-r", "--requirement") and len(words) == 2:
        path = re.sub(r"^\./", "", words[1].strip("'\""))
        if any(f.path == path for f in facts.requirements_files):
            sel.requirement_files.setdefault(path, evidence)
        return True
    if words[0] in ("-c", "--constraint"):
        return True
    if words[0] == "--group" and len(words) == 2:
        if any(g.name == words[1] for g in facts.dependency_groups):
            sel.groups.setdefault(words[1], evidence)
        return True
    target = words[-1].strip("'\"") if words[0] in ("-e", "--editable") else arg.strip("'\"")
    if re.search(r"[*?]|\.(?:tar\.gz|whl|zip)$|^(?:dist|build)/", target):
        return True  # a built artifact or a glob (e.g. `pip install dist/*.tar.gz`): nothing to install from here
    match = re.fullmatch(r"\.?/?\.(?:\[([\w,\s-]+)\])?|file:\S*|\{toxinidir\}", target)
    if words[0] in ("-e", "--editable") or match or target.startswith("."):
        extras = match.group(1) if match and match.lastindex else ""
        for extra in filter(None, (e.strip() for e in (extras or "").split(","))):
            if any(x.name == extra for x in facts.extras):
                sel.extras.setdefault(extra, evidence)
        return True
    return False


def _add_spec(facts: RepoFacts, sel: Selection, spec: str, evidence: Evidence) -> None:
    if _add_ref(facts, sel, spec, evidence):
        return
    name = requirement_name(spec)
    if name and re.search(r"[$%{}]", spec):
        spec = name  # a version from an unresolved shell/tox variable: take any version
    if name and name not in TOOLS and name != normalize(facts.project_name or "-"):
        sel.test_deps.setdefault(name, Requirement(spec=spec, evidence=evidence))


def _main_envs(facts: RepoFacts) -> list[TaskEnv]:
    """Per tool, the env that runs the tests: tox's base testenv, nox's `tests` session, hatch's test env."""
    chosen = []
    for tool in ("tox", "nox", "hatch"):
        envs = [e for e in facts.task_envs if e.tool == tool and e.test_like]
        envs.sort(key=lambda e: (e.name not in ("testenv", "tests", "test", "hatch-test"), e.name))
        chosen += envs[:1]
    return chosen


def _install_args(command: str) -> list[str]:
    """The arguments of an install command, with `-r x`, `-e x`, `--group x` kept together."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if "install" in words:
        words = words[words.index("install") + 1 :]
    elif "sync" in words:
        words = words[words.index("sync") + 1 :]
    else:
        return []
    args, i = [], 0
    while i < len(words):
        word = words[i]
        if word in (
            "-r",
            "--requirement",
            "-e",
            "--editable",
            "--group",
            "-c",
            "--constraint",
        ) and i + 1 < len(words):
            args.append(f"{word} {words[i + 1]}")
            i += 2
            continue
        if word in ("--extra", "--with", "-G", "--only") and i + 1 < len(words):
            args += (
                [f".[{x}]" for x in words[i + 1].split(",")]
                if word == "--extra"
                else [f"--group {x}" for x in words[i + 1].split(",")]
            )
            i += 2
            continue
        if not word.startswith("-") and word not in ("&&", "|", ";"):
            args.append(word)
        i += 1
    return args


def _test_contexts(facts: RepoFacts) -> set[tuple[str, str]]:
    contexts = {(c.source, c.context) for c in facts.commands if c.purpose == "test"}
    contexts |= {
        (c.source, c.context)
        for c in facts.commands
        if c.source in ("make", "just", "poe") and (c.context in SETUP_TARGETS or is_test_name(c.context))
    }
    return contexts


def select(facts: RepoFacts) -> Selection:
    """Requirements files, groups, extras and test deps, from manifests, task envs, CI, make and docs."""
    sel = Selection()
    for env in _main_envs(facts):
        for dep in env.deps:
            _add_spec(facts, sel, dep.spec, dep.evidence)
        for extra in env.extras:
            if any(x.name == extra for x in facts.extras):
                sel.extras.setdefault(extra, env.evidence or Evidence(file="tox.ini"))
        for group in env.groups:
            if any(g.name == group for g in facts.dependency_groups):
                sel.groups.setdefault(group, env.evidence or Evidence(file="tox.ini"))
    contexts = _test_contexts(facts)
    for command in facts.commands:
        if command.purpose != "install":
            continue
        for arg in _install_args(command.text):
            if command.source != "docs" and (command.source, command.context) in contexts:
                _add_spec(facts, sel, arg, command.evidence)
            elif arg.startswith(("-", ".")):
                _add_ref(facts, sel, arg, command.evidence)  # elsewhere only files and extras are trusted
    _defaults(facts, sel)
    return sel


def _prefer_test(names: list[str]) -> list[str]:
    tests = [n for n in names if "test" in n.lower()]
    return tests or names


def _defaults(facts: RepoFacts, sel: Selection) -> None:
    """Test-ish extras, groups and requirements files that nothing else chose."""
    for extra in _prefer_test([x.name for x in facts.extras if x.test_like]):
        sel.extras.setdefault(
            extra, next(x.evidence for x in facts.extras if x.name == extra) or Evidence(file="?")
        )
    if not sel.groups:
        for group in _prefer_test([g.name for g in facts.dependency_groups if g.test_like]):
            sel.groups[group] = next(
                g.evidence for g in facts.dependency_groups if g.name == group
            ) or Evidence(file="pyproject.toml")
    test_groups = [g for g in facts.tool_groups if g.test_like]
    sel.tool_groups = [g for g in test_groups if g.name in _prefer_test([t.name for t in test_groups])]
    files = [f for f in facts.requirements_files if not f.docs_like]
    for f in files:
        if f.path in ("requirements.txt", "requirements/base.txt", "requirements/main.txt"):
            sel.requirement_files.setdefault(
                f.path, f.requirements[0].evidence if f.requirements else Evidence(file=f.path)
            )
    if not any(f.test_like for f in files if f.path in sel.requirement_files):
        for path in _prefer_test([f.path for f in files if f.test_like and not f.path.endswith(".in")])[:2]:
            sel.requirement_files.setdefault(path, Evidence(file=path))
    txt = {p for p in sel.requirement_files if p.endswith(".txt")}
    for path in [p for p in sel.requirement_files if p.endswith(".in") and p[:-3] + ".txt" in txt]:
        del sel.requirement_files[path]


def declared_names(facts: RepoFacts, sel: Selection) -> set[str]:
    """Normalized names of everything the selection installs (transitively through files and groups)."""
    names = {requirement_name(r.spec) for r in facts.dependencies}
    names |= {requirement_name(r.spec) for x in facts.extras if x.name in sel.extras for r in x.requirements}
    groups = {g.name: g for g in facts.dependency_groups}
    pending = list(sel.groups)
    while pending:
        group = groups.get(pending.pop())
        if group:
            names |= {requirement_name(r.spec) for r in group.requirements}
            pending += group.includes
    names |= {requirement_name(r.spec) for g in sel.tool_groups for r in g.requirements}
    by_path = {f.path: f for f in facts.requirements_files}
    pending, seen = list(sel.requirement_files), set()
    while pending:
        path = pending.pop()
        if path in seen or path not in by_path:
            continue
        seen.add(path)
        names |= {requirement_name(r.spec) for r in by_path[path].requirements}
        pending += [re.sub(r"^\./", "", p) for p in by_path[path].references]
    names |= set(sel.test_deps)
    return {n for n in names if n}
