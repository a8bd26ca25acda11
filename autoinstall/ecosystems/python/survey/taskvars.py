"""Services tox and nox envs point the tests at: a loopback URL or host of a known service in their variables.

tox `setenv`/`set_env` (tox.ini, tox.toml, pyproject's `[tool.tox]`) and nox's `session.env[...] = ...`,
`session.env.update(...)` and `session.run(..., env={...})`. A variable such as
`DATABASE_URL=postgresql://app:secret@localhost/app_test` or `REDIS_HOST=127.0.0.1` says the suite expects that
service on this machine: it becomes a `Service` (source "tox"/"nox") whose `env` provisions what the URL logs
in as and whose `client_env` is the env's variables, the same structure CI services feed the plan.
`passenv` names variables without values, so it says nothing about where a service runs and is not read.
"""

from __future__ import annotations

import ast
import configparser
import re
from typing import Any

from autoinstall.ecosystems.python.survey.facts import RepoFacts, Service, ServiceSource
from autoinstall.ecosystems.python.survey.setuppy import parse_python
from autoinstall.ecosystems.python.survey.tasks import tox_substitute
from autoinstall.ecosystems.repofiles import RepoFiles
from autoinstall.ecosystems.services import LOOPBACK, ServiceKind, service_named, service_url
from envs.spec import Evidence

HOST_PREFIX = {"PG": "postgresql", "POSTGRES": "postgresql", "POSTGRESQL": "postgresql", "MYSQL": "mysql",
               "MARIADB": "mysql", "REDIS": "redis", "MEMCACHE": "memcached", "MEMCACHED": "memcached",
               "RABBIT": "rabbitmq", "RABBITMQ": "rabbitmq", "AMQP": "rabbitmq"}
"""The first word of a `*_HOST` variable (PGHOST too) -> the service it locates."""
Variable = tuple[str, str, Evidence]


def _host_service(key: str, value: str) -> ServiceKind | None:
    """`REDIS_HOST=localhost`, `PGHOST=127.0.0.1`: the service a loopback host variable locates."""
    key = key.upper()
    if not (key.endswith("HOST") and LOOPBACK.match(value.strip())):
        return None
    word = "PG" if key == "PGHOST" else key.split("_")[0]
    return service_named(HOST_PREFIX.get(word, "-"))


def _add(facts: RepoFacts, source: ServiceSource, variables: list[Variable]) -> None:
    """One Service per known service the variables point at on loopback, carrying all of them as client env."""
    client_env = {key: value for key, value, _ in variables}
    for key, value, evidence in variables:
        url = service_url(value)
        kind = url.kind if url and url.loopback else _host_service(key, value)
        if kind is None:
            continue
        env = url.provision_env() if url else {}
        if url and url.port and url.port != kind.port:
            facts.notes.append(f"{evidence.file}:{evidence.line}: {key} points at port {url.port}; the environment "
                               f"runs {kind.name} on its default port {kind.port}, so tests that connect to "
                               f"{url.port} fail to connect and are deselected")
        same = next((s for s in facts.services if s.source == source and s.name == kind.name
                     and s.evidence.file == evidence.file), None)
        if same is None:
            facts.services.append(Service(name=kind.name, image=kind.name, evidence=evidence, env=env,
                                          client_env=client_env, source=source))
            continue
        for k, v in env.items():
            same.env.setdefault(k, v)
        for k, v in client_env.items():
            same.client_env.setdefault(k, v)


def _ini_setenv(files: RepoFiles, facts: RepoFacts, rel: str, cfg: configparser.ConfigParser) -> None:
    for section in cfg.sections():
        if not (section == "testenv" or section.startswith("testenv:")) or not cfg.has_option(section, "setenv"):
            continue
        after = files.line_of(rel, f"[{section}]")
        variables = []
        for raw in cfg.get(section, "setenv").splitlines():
            line = re.sub(r"^[\w.,!{}-]+:\s+(?=\S)", "", raw.strip())  # a factor condition (`py311: X=1`)
            key, sep, value = line.partition("=")
            if sep and re.fullmatch(r"[A-Za-z_]\w*", key.strip()):
                variables.append((key.strip(), tox_substitute(value.strip()), files.evidence(rel, raw.strip(), after)))
        _add(facts, "tox", variables)


def _toml_setenv(files: RepoFiles, facts: RepoFacts, rel: str, tox: dict[str, Any]) -> None:
    named = tox.get("env") if isinstance(tox.get("env"), dict) else {}
    for conf in [tox.get("env_run_base"), *named.values()]:
        set_env = conf.get("set_env") if isinstance(conf, dict) else None
        if isinstance(set_env, dict):
            _add(facts, "tox", [(str(k), tox_substitute(str(v)), files.evidence(rel, str(v)))
                                for k, v in set_env.items() if isinstance(v, (str, int))])


def _strings(node: ast.AST | None) -> dict[str, str]:
    """A literal `{"KEY": "value"}` dict (non-literal entries skipped)."""
    out = {}
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                out[str(key.value)] = value.value
    return out


def _nox_env(files: RepoFiles, facts: RepoFacts) -> None:
    rel = "noxfile.py"
    text = files.text(rel)
    if (tree := parse_python(files, rel, text or "", noted=False)) is None:
        return  # read_nox has noted it
    lines = (text or "").splitlines()
    for func in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        found: dict[str, tuple[str, int]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                    and ast.unparse(node.targets[0].value).endswith(".env") \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                key = node.targets[0].slice
                if isinstance(key, ast.Constant):
                    found[str(key.value)] = (node.value.value, node.lineno)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "update" and ast.unparse(node.func.value).endswith(".env"):
                    pairs = _strings(node.args[0] if node.args else None)
                    pairs |= {k.arg: k.value.value for k in node.keywords if k.arg
                              and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}
                elif node.func.attr in ("run", "run_install"):
                    pairs = _strings(next((k.value for k in node.keywords if k.arg == "env"), None))
                else:
                    continue
                found |= {k: (v, node.lineno) for k, v in pairs.items()}
        _add(facts, "nox", [(k, v, Evidence(file=rel, line=n, text=lines[n - 1].strip()[:200]))
                            for k, (v, n) in found.items()])


def read_task_services(files: RepoFiles, facts: RepoFacts) -> None:
    """Services tox `setenv` and nox session variables point the tests at (see the module doc)."""
    noted = len(files.notes)
    cfg = files.ini("tox.ini") if files.text("tox.ini") is not None else None
    tox = ((files.toml("pyproject.toml") or {}).get("tool") or {}).get("tox")
    if cfg is not None:
        _ini_setenv(files, facts, "tox.ini", cfg)
    elif files.text("tox.toml") is not None:
        _toml_setenv(files, facts, "tox.toml", files.toml("tox.toml") or {})
    elif isinstance(tox, dict) and isinstance(tox.get("legacy_tox_ini"), str):
        legacy = files.ini("pyproject.toml", text=tox["legacy_tox_ini"])
        if legacy is not None:
            _ini_setenv(files, facts, "pyproject.toml", legacy)
    elif isinstance(tox, dict):
        _toml_setenv(files, facts, "pyproject.toml", tox)
    del files.notes[noted:]  # a malformed tox.ini or pyproject.toml was already noted by read_tox/read_project
    if files.text("noxfile.py") is not None:
        _nox_env(files, facts)
