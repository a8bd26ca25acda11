"""Services a docker-compose file starts (postgres, redis, ...): evidence the tests need them, like CI's.

Read: `docker-compose.yml`, `compose.yaml` and their variants (`docker-compose.test.yml`) at the root and
under tests/, test/, ci/, .ci/, docker/. A service whose image is one the environment can run
(autoinstall/ecosystems/services.py) or one Debian does not package (noted by the plan) becomes a `Service`
with the compose `environment:` (provisioning: POSTGRES_USER, MYSQL_DATABASE, ...); the other services' literal
variables about a service (an app's `DATABASE_URL: postgres://db/app`) are what the tests read. Other images
(the project's own, `build:`) are not services and are left out.
"""

from __future__ import annotations

import re
from typing import Any

from autoinstall.ecosystems.python.survey.facts import RepoFacts, Service
from autoinstall.ecosystems.repofiles import RepoFiles
from autoinstall.ecosystems.services import not_in_debian, service_named

FOLDERS = ("", "tests", "test", "ci", ".ci", "docker")
COMPOSE_FILE = re.compile(r"^(?:docker-)?compose(?:[.-][\w-]+)?\.ya?ml$")
_DEFAULTED = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _literal(value: Any) -> str | None:
    """A compose value with `${VAR:-default}` given its default; None when a variable has no default."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value)
    if any(m.group(2) is None for m in _DEFAULTED.finditer(text)):
        return None
    text = _DEFAULTED.sub(lambda m: m.group(2) or "", text)
    return None if "$" in text.replace("$$", "") else text.replace("$$", "$")


def _environment(conf: dict[str, Any]) -> dict[str, str]:
    """`environment:` as a mapping or a `KEY=value` list, literal values only."""
    block = conf.get("environment")
    items: list[tuple[Any, Any]] = []
    if isinstance(block, dict):
        items = list(block.items())
    elif isinstance(block, list):
        items = [tuple(str(e).split("=", 1)) for e in block if isinstance(e, str) and "=" in e]  # type: ignore[misc]
    out = {}
    for key, value in items:
        text = _literal(value)
        if text is not None and re.fullmatch(r"[A-Za-z_]\w*", str(key)):
            out[str(key)] = text
    return out


def _published(conf: dict[str, Any]) -> list[tuple[str, str]]:
    """(host port, container port) of each published port (`"5433:5432"`, `127.0.0.1:6380:6379`, long form)."""
    out = []
    for port in conf.get("ports") or [] if isinstance(conf.get("ports"), list) else []:
        if isinstance(port, dict):
            out.append((str(port.get("published") or ""), str(port.get("target") or "")))
        elif isinstance(port, (str, int)):
            parts = str(port).split("/")[0].split(":")
            out.append((parts[-2] if len(parts) > 1 else "", parts[-1]))
    return [(host, target) for host, target in out if target.isdigit()]


def _key_line(text: str, name: str) -> int:
    """The 1-based line of the service's own key (`  db:`), 0 when not found."""
    key = re.compile(rf"^\s+['\"]?{re.escape(name)}['\"]?\s*:\s*(?:#.*)?$")
    return next((n for n, line in enumerate(text.splitlines(), 1) if key.match(line)), 0)


def compose_files(files: RepoFiles) -> list[str]:
    """The compose files the survey reads, root first."""
    found = []
    for folder in FOLDERS:
        found += [files.rel(p) for p in files.listdir(folder)  # a folder linked out of the checkout: none
                  if COMPOSE_FILE.match(p.name) and files.is_file(files.rel(p))]
    return found


def _read_one(files: RepoFiles, facts: RepoFacts, rel: str) -> None:
    data = files.yaml(rel)  # malformed: a note from RepoFiles, nothing else
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        return
    confs = {str(n): c for n, c in services.items() if isinstance(c, dict)}
    images = {n: _literal(c.get("image")) or "" for n, c in confs.items()}
    known = {n for n, image in images.items() if image and (service_named(image) or not_in_debian(image))}
    client_env = {k: v for n in confs if n not in known for k, v in _environment(confs[n]).items()}
    for name in sorted(known, key=list(confs).index):
        image, conf = images[name], confs[name]
        if any(s.name == name and s.image == image for s in facts.services):
            continue
        after = _key_line(files.text(rel) or "", name)
        evidence = files.evidence(rel, "image:", after)
        facts.services.append(Service(name=name, image=image, evidence=evidence, env=_environment(conf),
                                      client_env=client_env, source="compose"))
        kind = service_named(image)
        for host, target in _published(conf):
            if kind and host and host != str(kind.port):
                facts.notes.append(f"{rel}:{evidence.line}: {name} is published on port {host} (container "
                                   f"{target}); the environment runs {kind.name} on its default port {kind.port}, "
                                   f"so tests that connect to {host} fail to connect and are deselected")


def read_compose(files: RepoFiles, facts: RepoFacts) -> None:
    """Services from the repository's docker-compose files (see the module doc)."""
    for rel in compose_files(files):
        _read_one(files, facts, rel)
