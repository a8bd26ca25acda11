"""Poetry's `[tool.poetry]` tables: dependency tables and groups, converted to PEP 508."""

from __future__ import annotations

import re
from typing import Any

from autoinstall.ecosystems.python.survey.facts import DepSet, EntryPoint, Requirement, is_test_name
from autoinstall.ecosystems.repofiles import RepoFiles

PYPROJECT = "pyproject.toml"


def _bump(parts: list[int], index: int) -> str:
    return ".".join(str(p) for p in [*parts[:index], parts[index] + 1])


def poetry_constraint(constraint: str) -> str:
    """A poetry version constraint as a PEP 440 specifier (`^1.2` -> `>=1.2,<2`); '' for any."""
    constraint = constraint.strip()
    if constraint in ("", "*") or "||" in constraint or "|" in constraint:
        return ""
    out = []
    for part in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", constraint):
        match = re.fullmatch(r"([~^]?)(=?)\s*(\d+(?:\.\d+)*)", part)
        if match and match.group(1):
            nums = [int(n) for n in match.group(3).split(".")]
            if match.group(1) == "^":
                index = next((i for i, n in enumerate(nums) if n), len(nums) - 1)
            else:
                index = 1 if len(nums) > 1 else 0
            out.append(f">={match.group(3)},<{_bump(nums, index)}")
        elif re.fullmatch(r"\d[\w.*+!-]*", part):
            out.append(f"=={part}")
        elif part:
            out.append(part.replace(" ", ""))
    return ",".join(out)


def poetry_requirement(name: str, value: Any) -> str | None:
    """One poetry dependency entry as PEP 508, or None for git/path/url entries."""
    if isinstance(value, list):
        value = value[0] if value else "*"
    if isinstance(value, str):
        return name + poetry_constraint(value)
    if not isinstance(value, dict) or any(k in value for k in ("git", "path", "url")):
        return None
    extras = value.get("extras") or []
    spec = name + (f"[{','.join(extras)}]" if extras else "")
    spec += poetry_constraint(str(value.get("version", "*")))
    if value.get("markers"):
        spec += f"; {value['markers']}"
    return spec


def _entries(files: RepoFiles, header: str, table: Any) -> list[tuple[str, Requirement, bool]]:
    """(name, requirement, optional) for each entry of a poetry dependency table."""
    after = files.line_of(PYPROJECT, header)
    entries = []
    for name, value in table.items() if isinstance(table, dict) else []:
        if name.lower() == "python":
            continue
        spec = poetry_requirement(name, value)
        evidence = files.evidence(PYPROJECT, name, after)
        if spec is None:
            files.notes.append(
                f"{PYPROJECT}:{evidence.line}: poetry dependency {name} is a git/path/url "
                "entry, not installed from an index"
            )
            continue
        optional = isinstance(value, dict) and bool(value.get("optional"))
        entries.append((name, Requirement(spec=spec, evidence=evidence), optional))
    return entries


def _table(files: RepoFiles, header: str, table: Any) -> list[Requirement]:
    return [req for _, req, _ in _entries(files, header, table)]


def read_poetry(files: RepoFiles, poetry: dict[str, Any]) -> dict[str, Any]:
    """Name, python, dependencies, extras, groups and scripts from `[tool.poetry]`."""
    deps_table = poetry.get("dependencies") or {}
    entries = _entries(files, "[tool.poetry.dependencies]", deps_table)
    by_name = {name: req for name, req, _ in entries}
    groups = []
    for name, group in (poetry.get("group") or {}).items():
        header = f"[tool.poetry.group.{name}.dependencies]"
        reqs = _table(files, header, (group or {}).get("dependencies"))
        groups.append(
            DepSet(
                name=name,
                requirements=reqs,
                test_like=is_test_name(name),
                evidence=files.evidence(PYPROJECT, header),
            )
        )
    if poetry.get("dev-dependencies"):
        header = "[tool.poetry.dev-dependencies]"
        reqs = _table(files, header, poetry["dev-dependencies"])
        groups.append(
            DepSet(name="dev", requirements=reqs, test_like=True, evidence=files.evidence(PYPROJECT, header))
        )
    extras = []
    for name, members in (poetry.get("extras") or {}).items():
        reqs = [by_name[m] for m in members if m in by_name] if isinstance(members, list) else []
        extras.append(
            DepSet(
                name=name,
                requirements=reqs,
                test_like=is_test_name(name),
                evidence=files.evidence(PYPROJECT, name, files.line_of(PYPROJECT, "[tool.poetry.extras]")),
            )
        )
    scripts = []
    for name, target in (poetry.get("scripts") or {}).items():
        target = target.get("callable", "") if isinstance(target, dict) else str(target)
        scripts.append(EntryPoint(name=name, target=target, evidence=files.evidence(PYPROJECT, f"{name} =")))
    python = deps_table.get("python") if isinstance(deps_table, dict) else None
    return {
        "dependencies": [req for _, req, optional in entries if not optional],
        "python": poetry_constraint(str(python)) if python else None,
        "groups": groups,
        "extras": extras,
        "scripts": scripts,
        "name": poetry.get("name"),
    }
