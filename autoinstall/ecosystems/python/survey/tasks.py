"""Task envs: tox (tox.ini, tox.toml, `[tool.tox]`), nox sessions (ast, never imported), hatch envs."""

from __future__ import annotations

import ast
import configparser
import re
from typing import Any

from autoinstall.ecosystems.python.survey.facts import RepoFacts, Requirement, TaskEnv, is_test_name
from autoinstall.ecosystems.python.survey.setuppy import parse_python
from autoinstall.ecosystems.repofiles import RepoFiles

TEST_TOOLS = re.compile(r"\b(pytest|py\.test|unittest|testtools\.run|trial|nose2?|stestr|subunit)\b")
_FACTOR = re.compile(r"^[A-Za-z0-9_.,!{}-]+:\s+(?=\S)")


_INNER = re.compile(r"\{([^{}]*)\}")


def _resolve(inner: str) -> str | None:
    """One substitution with nothing nested left in it (`posargs:tests` -> `tests`); None to keep it."""
    key, _, rest = inner.partition(":")
    if key == "posargs":
        return rest
    if key == "env":
        return rest.partition(":")[2]  # its default, if any
    if key == "tty":
        return rest.partition(":")[2]  # not a terminal
    if inner in ("envpython", "envbindir/python", "envbindir/python3"):
        return "python"
    return {"toxinidir": ".", "tox_root": ".", "/": "/", ":": ":"}.get(inner)


def tox_substitute(line: str) -> str:
    """A tox command or dep with its substitutions resolved for a plain shell at the repository root,
    innermost first (`{posargs:{toxinidir}/tests}` -> `./tests`); unknown ones (`{envtmpdir}`) are kept."""
    line = re.sub(r"\{envbindir\}/", "", line)
    kept: list[str] = []
    while match := _INNER.search(line):
        value = _resolve(match[1])
        if value is None:  # kept as it is, out of the way of the outer ones
            kept.append(match[0])
            value = f"\0{len(kept) - 1}\0"
        line = line[:match.start()] + value + line[match.end():]
    line = re.sub(r"\0(\d+)\0", lambda m: kept[int(m[1])], line)
    line = re.sub(r"(?<![\w./])\./(?=\s|$)", ". ", line).replace("./ ", ". ")
    line = re.sub(r"(?<![\w./])\.//", "./", line)
    line = re.sub(r"^(-[rc])(?=[^\s-])", r"\1 ", line)  # -rfile -> -r file
    return re.sub(r"\s+", " ", line).strip()


def _section_refs(value: str, cfg: configparser.ConfigParser, depth: int = 0) -> str:
    """`{[testenv]commands}` (another section's value) replaced by that value, as tox does."""
    def ref(m: re.Match[str]) -> str:
        section, key = m[1], m[2]
        if depth > 5 or not cfg.has_option(section, key):
            return m[0]
        return _section_refs(cfg.get(section, key), cfg, depth + 1)
    return re.sub(r"\{\[([^\]]+)\]([^{}:]+)\}", ref, value)


def _is_test_env(name: str, commands: list[str]) -> bool:
    if any(TEST_TOOLS.search(c) for c in commands):
        return True
    return name == "testenv" or is_test_name(name) or bool(re.fullmatch(r"py\d*", name))


def _ini_list(value: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", value)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def _tox_ini(files: RepoFiles, cfg: configparser.ConfigParser, offset_rel: str) -> list[TaskEnv]:
    base = dict(cfg.items("testenv")) if cfg.has_section("testenv") else {}
    envs = []
    for section in cfg.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        name = section.split(":", 1)[1] if ":" in section else "testenv"
        options = {k: _section_refs(v, cfg) for k, v in {**base, **dict(cfg.items(section))}.items()}
        after = files.line_of(offset_rel, f"[{section}]")
        deps = []
        for raw in _ini_list(options.get("deps", "")):
            dep = tox_substitute(_FACTOR.sub("", raw))
            if dep.startswith("{"):
                continue
            deps.append(
                Requirement(
                    spec=re.sub(r"^-([rc])\s*", r"-\1 ", dep), evidence=files.evidence(offset_rel, raw, after)
                )
            )
        commands = [
            tox_substitute(_FACTOR.sub("", c)).lstrip("- ") for c in _ini_list(options.get("commands", ""))
        ]
        extras = [e for e in re.split(r"[\s,]+", options.get("extras", "")) if e]
        groups = [g for g in re.split(r"[\s,]+", options.get("dependency_groups", "")) if g]
        envs.append(
            TaskEnv(
                tool="tox",
                name=name,
                deps=deps,
                extras=extras,
                groups=groups,
                commands=commands,
                test_like=_is_test_env(name, commands),
                evidence=files.evidence(offset_rel, f"[{section}]"),
            )
        )
    tox = dict(cfg.items("tox")) if cfg.has_section("tox") else {}
    _mark_default(envs, expand_envlist(tox.get("envlist") or tox.get("env_list") or ""))
    return envs


def expand_envlist(value: str | list[str]) -> list[str]:
    """tox's envlist as env names: `py3{10,11}-unit, docs` -> py310-unit, py311-unit, docs."""
    text = ",".join(value) if isinstance(value, list) else value
    names: list[str] = []
    depth, item = 0, ""
    for char in text + ",":  # split on commas and newlines outside braces
        depth += (char == "{") - (char == "}")
        if char in ",\n" and depth == 0:
            names += _product(item.strip()) if item.strip() and not item.strip().startswith("#") else []
            item = ""
        else:
            item += char
    return names


def _product(name: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", name)
    if match is None:
        return [name]
    return [n for part in match[1].split(",") for n in _product(name[:match.start()] + part.strip()
                                                               + name[match.end():])]


def _mark_default(envs: list[TaskEnv], envlist: list[str]) -> None:
    """The envs `tox` with no `-e` runs: each envlist name's own section, else `[testenv]` (which every
    name without a section of its own runs); with no envlist, `[testenv]`."""
    named = {e.name: e for e in envs}
    for name in envlist or ["testenv"]:
        env = named.get(name) or named.get("testenv")
        if env is not None:
            env.default = True


def _toml_command(command: Any) -> str:
    parts = []
    for part in command if isinstance(command, list) else [command]:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("replace") == "posargs":
            parts.extend(p for p in part.get("default", []) if isinstance(p, str))
    return tox_substitute(" ".join(parts))


def _tox_toml(files: RepoFiles, rel: str, tox: dict[str, Any]) -> list[TaskEnv]:
    base = tox.get("env_run_base") if isinstance(tox.get("env_run_base"), dict) else {}
    named = tox.get("env") if isinstance(tox.get("env"), dict) else {}
    envs = []
    for name, conf in [("testenv", base), *named.items()]:
        if not isinstance(conf, dict) or (name == "testenv" and not conf):
            continue
        conf = {**base, **conf}
        commands = [
            _toml_command(c) for c in conf.get("commands", []) if isinstance(conf.get("commands"), list)
        ]
        deps = [
            Requirement(spec=tox_substitute(d), evidence=files.evidence(rel, d))
            for d in conf.get("deps", [])
            if isinstance(d, str)
        ]
        envs.append(
            TaskEnv(
                tool="tox",
                name=name,
                deps=deps,
                extras=list(conf.get("extras", [])),
                groups=list(conf.get("dependency_groups", [])),
                commands=commands,
                test_like=_is_test_env(name, commands),
                evidence=files.evidence(rel, name),
            )
        )
    env_list = tox.get("env_list") if isinstance(tox.get("env_list"), list) else []
    _mark_default(envs, expand_envlist([str(e) for e in env_list]))
    return envs


def read_tox(files: RepoFiles, facts: RepoFacts) -> None:
    """Tox envs from tox.ini, tox.toml or pyproject's `[tool.tox]` (native or `legacy_tox_ini`)."""
    cfg = files.ini("tox.ini")
    if cfg is not None:
        facts.task_envs += _tox_ini(files, cfg, "tox.ini")
        return
    tox_toml = files.toml("tox.toml")
    if tox_toml:
        facts.task_envs += _tox_toml(files, "tox.toml", tox_toml)
        return
    tox = ((files.toml("pyproject.toml") or {}).get("tool") or {}).get("tox")
    if isinstance(tox, dict) and isinstance(tox.get("legacy_tox_ini"), str):
        cfg = files.ini("pyproject.toml", text=tox["legacy_tox_ini"])
        if cfg is not None:
            facts.task_envs += _tox_ini(files, cfg, "pyproject.toml")
    elif isinstance(tox, dict):
        facts.task_envs += _tox_toml(files, "pyproject.toml", tox)


def _session_name(func: ast.FunctionDef) -> str | None:
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        text = ast.unparse(target)
        if text in ("nox.session", "session", "nox_uv.session"):
            if isinstance(deco, ast.Call):
                for kw in deco.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        return str(kw.value.value)
            return func.name
    return None


def _call_args(call: ast.Call, consts: dict[str, list[str]]) -> list[str] | None:
    args: list[str] = []
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(arg.value)
        elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and arg.value.id in consts:
            args.extend(consts[arg.value.id])
        else:
            return None
    return args


def _join_options(args: list[str]) -> list[str]:
    out: list[str] = []
    for arg in args:
        if out and out[-1] in ("-r", "-c", "-e", "--requirement", "--constraint", "--editable", "--group"):
            out[-1] = f"{out[-1]} {arg}"
        else:
            out.append(arg)
    return out


def read_nox(files: RepoFiles, facts: RepoFacts) -> None:
    """Nox sessions: names, `session.install(...)` arguments and `session.run(...)` commands."""
    rel = "noxfile.py"
    text = files.text(rel)
    if text is None:
        return
    if (tree := parse_python(files, rel, text)) is None:
        return
    consts: dict[str, list[str]] = {}
    defaults: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "nox.options.sessions":
            try:
                defaults = [str(v) for v in ast.literal_eval(node.value)]
            except (ValueError, TypeError, SyntaxError):
                pass
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError):
                continue
            if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                consts[node.targets[0].id] = list(value)
    for func in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        name = _session_name(func)
        if name is None:
            continue
        env = TaskEnv(tool="nox", name=name, evidence=files.evidence(rel, f"def {func.name}("))
        for call in [
            n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        ]:
            args = _call_args(call, consts)
            if args is None:
                continue
            line = (text.splitlines()[call.lineno - 1]).strip()
            if call.func.attr == "install":
                env.deps += [
                    Requirement(spec=a, evidence=files.evidence(rel, line, call.lineno))
                    for a in _join_options(args)
                ]
            elif call.func.attr in ("run", "run_install") and args:
                env.commands.append(" ".join(args))
        env.test_like = _is_test_env(name, env.commands)
        env.default = defaults is not None and name in defaults
        facts.task_envs.append(env)


def read_hatch(files: RepoFiles, facts: RepoFacts) -> None:
    """Hatch environments (`[tool.hatch.envs.NAME]`): dependencies, features and scripts."""
    envs = (((files.toml("pyproject.toml") or {}).get("tool") or {}).get("hatch") or {}).get("envs") or {}
    rel = "pyproject.toml"
    for name, conf in envs.items() if isinstance(envs, dict) else []:
        if not isinstance(conf, dict):
            continue
        header = files.line_of(rel, f"[tool.hatch.envs.{name}")
        deps = [
            Requirement(spec=d, evidence=files.evidence(rel, d, header))
            for key in ("dependencies", "extra-dependencies")
            for d in conf.get(key, [])
            if isinstance(d, str)
        ]
        scripts = conf.get("scripts") if isinstance(conf.get("scripts"), dict) else {}
        commands = [
            c for v in scripts.values() for c in (v if isinstance(v, list) else [v]) if isinstance(c, str)
        ]
        if name == "hatch-test":
            commands = commands or ["pytest"]
        facts.task_envs.append(
            TaskEnv(
                tool="hatch",
                name=name,
                deps=deps,
                extras=list(conf.get("features", [])),
                commands=commands,
                test_like=_is_test_env(name, commands),
                evidence=files.evidence(rel, f"[tool.hatch.envs.{name}"),
            )
        )
