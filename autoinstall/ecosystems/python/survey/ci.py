"""CI workflows (GitHub Actions, GitLab, Travis), Makefile, justfile, poe tasks and doc code blocks."""

from __future__ import annotations

import re
from typing import Any

from autoinstall.ecosystems.python.survey.commands import add_script
from autoinstall.ecosystems.python.survey.compose import read_compose
from autoinstall.ecosystems.python.survey.facts import Named, RepoFacts, Service
from autoinstall.ecosystems.python.survey.taskvars import read_task_services
from autoinstall.ecosystems.repofiles import RepoFiles

DOC_NAMES = re.compile(
    r"^(README|CONTRIBUTING|DEVELOPMENT|DEVELOPING|HACKING|INSTALL)[^/]*\.(md|rst|txt)$|"
    r"^(README|CONTRIBUTING|INSTALL)$",
    re.IGNORECASE,
)


def _image(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("image") or value.get("name") or "")
    return str(value or "")


def _literal_env(*blocks: Any) -> dict[str, str]:
    """`env:`/`variables:` mappings merged in order, keeping literal scalar values only (no `${{ }}`)."""
    out: dict[str, str] = {}
    for block in blocks:
        for key, value in block.items() if isinstance(block, dict) else []:
            if isinstance(value, dict):
                value = value.get("value")  # GitLab's {value:, description:} form
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and "${{" not in str(value):
                out[str(key)] = str(value)
    return out


def _add_service(files: RepoFiles, facts: RepoFacts, rel: str, name: str, conf: Any,
                 client_env: dict[str, str]) -> None:
    image = _image(conf)
    if image and not any(s.name == name and s.image == image for s in facts.services):
        env = _literal_env(conf.get("env") or conf.get("variables")) if isinstance(conf, dict) else {}
        facts.services.append(
            Service(name=name, image=image, evidence=files.evidence(rel, image.split(":")[0]), env=env,
                    client_env=client_env)
        )


def _github(files: RepoFiles, facts: RepoFacts) -> None:
    for path in files.workflows():
        rel = files.rel(path)
        data = files.yaml(rel)
        jobs = data.get("jobs") if isinstance(data, dict) else None
        for job_name, job in jobs.items() if isinstance(jobs, dict) else []:
            if not isinstance(job, dict):
                continue
            services = job.get("services") if isinstance(job.get("services"), dict) else {}
            client_env = _literal_env(data.get("env"), job.get("env"),
                                      *[s.get("env") for s in job.get("steps") or [] if isinstance(s, dict)]
                                      if isinstance(job.get("steps"), list) else [])
            for name, conf in services.items():
                _add_service(files, facts, rel, str(name), conf, client_env)
            after = files.line_of(rel, f"{job_name}:")
            for step in job.get("steps") or [] if isinstance(job.get("steps"), list) else []:
                if isinstance(step, dict) and isinstance(step.get("run"), str):
                    add_script(files, facts, rel, step["run"], "ci", str(job_name), after)


def _gitlab_travis(files: RepoFiles, facts: RepoFacts) -> None:
    for rel in (".gitlab-ci.yml", ".travis.yml"):
        data = files.yaml(rel) if files.is_file(rel) else None
        if not isinstance(data, dict):
            continue
        jobs = {k: v for k, v in data.items() if isinstance(v, dict)}
        jobs["(top level)"] = data
        for name, job in jobs.items():
            for key in ("before_install", "install", "before_script", "script"):
                lines = job.get(key)
                for line in lines if isinstance(lines, list) else [lines] if isinstance(lines, str) else []:
                    if isinstance(line, str):
                        add_script(files, facts, rel, line, "ci", str(name))
            services = job.get("services")
            client_env = _literal_env(data.get("variables"), data.get("env"), job.get("variables"), job.get("env"))
            for service in services if isinstance(services, list) else []:
                image = _image(service)
                name = service.get("alias") if isinstance(service, dict) and service.get("alias") else image
                _add_service(files, facts, rel, str(name).split(":")[0].split("/")[-1], service, client_env)
        apt = ((data.get("addons") or {}).get("apt") or {}) if isinstance(data.get("addons"), dict) else {}
        for package in apt.get("packages", []) if isinstance(apt, dict) else []:
            facts.apt_packages.append(Named(name=str(package), evidence=files.evidence(rel, str(package))))


def _recipes(files: RepoFiles, facts: RepoFacts, rel: str, source: str) -> None:
    text = files.text(rel)
    if text is None:
        return
    target = ""
    header = re.compile(
        r"^@?([A-Za-z0-9_.-]+)(\s+[^:=]*)?:(?!=)"
        if source == "just"
        else r"^([A-Za-z0-9_.%/-]+(?:\s+[A-Za-z0-9_.%/-]+)*)\s*::?(?!=)"
    )
    for number, line in enumerate(text.splitlines(), 1):
        if line and not line[0].isspace():
            match = header.match(line)
            target = match.group(1) if match else ""
        elif target and line.strip() and not line.strip().startswith("#"):
            script = re.sub(r"^[@-]+", "", line.strip())
            add_script(files, facts, rel, script, source, target, number)  # type: ignore[arg-type]


def _poe(files: RepoFiles, facts: RepoFacts) -> None:
    tasks = ((((files.toml("pyproject.toml") or {}).get("tool") or {}).get("poe") or {}).get("tasks")) or {}
    for name, task in tasks.items() if isinstance(tasks, dict) else []:
        if isinstance(task, dict):
            task = task.get("cmd") or task.get("shell") or ""
        for command in task if isinstance(task, list) else [task]:
            if isinstance(command, str):
                add_script(files, facts, "pyproject.toml", command, "poe", str(name))


def _code_blocks(text: str, markdown: bool) -> list[tuple[int, str]]:
    """(line, text) of each line inside fenced (Markdown) or literal (reST `::`) blocks."""
    lines, out, inside, literal = text.splitlines(), [], False, False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if markdown and stripped.startswith(("```", "~~~")):
            inside = not inside
        elif markdown and inside:
            out.append((number, stripped))
        elif not markdown:
            if stripped.endswith("::"):
                literal = True
            elif literal and line[:1].isspace() and stripped:
                out.append((number, stripped))
            elif literal and stripped:
                literal = False
    return out


def _docs(files: RepoFiles, facts: RepoFacts) -> None:
    candidates = [p for p in files.listdir() if DOC_NAMES.match(p.name) and files.is_file(files.rel(p))]
    for folder in ("docs", ".github", "doc"):
        candidates += [
            p
            for p in files.listdir(folder)
            if re.match(r"(contributing|development|install)", p.name, re.IGNORECASE)
            and files.is_file(files.rel(p))
        ]
    for path in candidates:
        rel = files.rel(path)
        text = files.text(rel) or ""
        for number, line in _code_blocks(text, markdown=not rel.endswith((".rst", ".txt"))):
            command = re.sub(r"^(\$|>|%|#\s*\$)\s+", "", line)
            if command != line or not line.startswith(("#", ">>>")):
                add_script(files, facts, rel, command, "docs", rel, number)


def read_ci_and_tasks(files: RepoFiles, facts: RepoFacts) -> None:
    """Install, test and apt commands and services from CI, task runners and docs; services also from
    docker-compose files (compose.py) and tox/nox variables (taskvars.py)."""
    _github(files, facts)
    _gitlab_travis(files, facts)
    read_compose(files, facts)
    read_task_services(files, facts)
    for rel, source in (
        ("Makefile", "make"),
        ("makefile", "make"),
        ("GNUmakefile", "make"),
        ("justfile", "just"),
        ("Justfile", "just"),
        (".justfile", "just"),
    ):
        if files.is_file(rel):
            _recipes(files, facts, rel, source)
    _poe(files, facts)
    _docs(files, facts)
