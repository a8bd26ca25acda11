"""setup.py (read with ast, never run) and setup.cfg."""

from __future__ import annotations

import ast
from typing import Any

from autoinstall.ecosystems.python.survey.facts import (
    DepSet,
    EntryPoint,
    Named,
    RepoFacts,
    Requirement,
    Versioning,
    is_test_name,
)
from autoinstall.ecosystems.repofiles import RepoFiles

SETUP_PY = "setup.py"
SETUP_CFG = "setup.cfg"


def parse_python(files: RepoFiles, rel: str, text: str, *, noted: bool = True) -> ast.Module | None:
    """The module's syntax tree, or None with a note: a syntax error, a NUL byte, or nesting deep enough to
    exhaust the parser (MemoryError, RecursionError) is the file's fault, never a crash."""
    try:
        return ast.parse(text)
    except SyntaxError as e:
        why = f"{e.msg}, line {e.lineno}"
    except (ValueError, MemoryError, RecursionError) as e:
        why = f"{type(e).__name__}: {str(e)[:100]}".rstrip(": ")
    if noted:
        files.note(f"{rel}: cannot be parsed ({why}); not read")
    return None


def _module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    consts: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            consts[node.targets[0].id] = node.value
    return consts


def _literal(node: ast.expr, consts: dict[str, ast.expr]) -> Any:
    """The literal value of a keyword argument, following one module-level name; None if computed."""
    if isinstance(node, ast.Name) and node.id in consts:
        node = consts[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _setup_call(tree: ast.Module) -> ast.Call | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name == "setup":
                return node
    return None


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.splitlines()
    return (
        [v.strip() for v in value if isinstance(v, str) and v.strip()]
        if isinstance(value, list | tuple)
        else []
    )


def _reqs(files: RepoFiles, rel: str, specs: list[str], after: int) -> list[Requirement]:
    return [
        Requirement(spec=s, evidence=files.evidence(rel, s, after)) for s in specs if not s.startswith("#")
    ]


def _console_scripts(files: RepoFiles, rel: str, value: Any) -> list[EntryPoint]:
    if isinstance(value, dict):
        value = value.get("console_scripts", [])
    scripts = []
    for line in _lines(value):
        if "=" in line:
            name, target = (p.strip() for p in line.split("=", 1))
            scripts.append(
                EntryPoint(name=name, target=target, evidence=files.evidence(rel, line.split("=")[0]))
            )
    return scripts


def read_setup_py(files: RepoFiles, facts: RepoFacts) -> None:
    """Name, requirements, extras, python range, scripts and compiled extensions from setup.py."""
    text = files.text(SETUP_PY)
    if text is None:
        return
    if (tree := parse_python(files, SETUP_PY, text)) is None:
        return
    for needle in ("ext_modules", "Extension(", "cythonize(", "cffi_modules"):
        if needle in text:
            facts.c_extensions.append(
                Named(name=needle.rstrip("("), evidence=files.evidence(SETUP_PY, needle))
            )
            break
    call = _setup_call(tree)
    if call is None:
        return
    consts = _module_constants(tree)
    kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    line = call.lineno
    for key in ("install_requires", "extras_require", "python_requires", "name"):
        if key in kwargs and _literal(kwargs[key], consts) is None:
            files.notes.append(f"{SETUP_PY}:{kwargs[key].lineno}: {key} is computed; not read")
    facts.project_name = facts.project_name or _literal(kwargs.get("name", ast.Constant(None)), consts)
    python = _literal(kwargs.get("python_requires", ast.Constant(None)), consts)
    if isinstance(python, str) and not facts.requires_python:
        facts.requires_python = python
        facts.requires_python_evidence = files.evidence(SETUP_PY, "python_requires")
    install = _lines(_literal(kwargs["install_requires"], consts)) if "install_requires" in kwargs else []
    facts.dependencies += _reqs(files, SETUP_PY, install, line)
    extras = _literal(kwargs["extras_require"], consts) if "extras_require" in kwargs else None
    for name, specs in (extras or {}).items() if isinstance(extras, dict) else []:
        facts.extras.append(
            DepSet(
                name=str(name),
                requirements=_reqs(files, SETUP_PY, _lines(specs), line),
                test_like=is_test_name(str(name)),
                evidence=files.evidence(SETUP_PY, str(name), line),
            )
        )
    tests_require = _lines(_literal(kwargs["tests_require"], consts)) if "tests_require" in kwargs else []
    if tests_require:
        facts.tool_groups.append(
            DepSet(
                name="tests_require",
                test_like=True,
                requirements=_reqs(files, SETUP_PY, tests_require, line),
                evidence=files.evidence(SETUP_PY, "tests_require"),
            )
        )
    if "entry_points" in kwargs:
        facts.entry_points += _console_scripts(files, SETUP_PY, _literal(kwargs["entry_points"], consts))


def read_setup_cfg(files: RepoFiles, facts: RepoFacts) -> None:
    """The declarative setuptools configuration in setup.cfg."""
    cfg = files.ini(SETUP_CFG)
    if cfg is None:
        return
    if cfg.has_option("metadata", "name"):
        facts.project_name = facts.project_name or cfg.get("metadata", "name").strip()
    if cfg.has_option("options", "python_requires") and not facts.requires_python:
        facts.requires_python = cfg.get("options", "python_requires").strip()
        facts.requires_python_evidence = files.evidence(SETUP_CFG, "python_requires")
    options_line = files.line_of(SETUP_CFG, "[options]")
    if cfg.has_option("options", "install_requires"):
        facts.dependencies += _reqs(
            files, SETUP_CFG, _lines(cfg.get("options", "install_requires")), options_line
        )
    if cfg.has_section("options.extras_require"):
        after = files.line_of(SETUP_CFG, "[options.extras_require]")
        for name, value in cfg.items("options.extras_require"):
            facts.extras.append(
                DepSet(
                    name=name,
                    requirements=_reqs(files, SETUP_CFG, _lines(value), after),
                    test_like=is_test_name(name),
                    evidence=files.evidence(SETUP_CFG, name, after),
                )
            )
    if cfg.has_option("options.entry_points", "console_scripts"):
        facts.entry_points += _console_scripts(
            files, SETUP_CFG, cfg.get("options.entry_points", "console_scripts")
        )
    if cfg.has_section("versioneer") and facts.versioning is None:
        facts.versioning = Versioning(scheme="versioneer", evidence=files.evidence(SETUP_CFG, "[versioneer]"))
