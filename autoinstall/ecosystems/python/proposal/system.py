"""The Debian packages a plan asks for (the interpreter: interpreter.py)."""

from __future__ import annotations

import re

from autoinstall.ecosystems.debian_names import APT
from autoinstall.ecosystems.python.pypi_names import requirement_name
from autoinstall.ecosystems.python.survey.facts import RepoFacts, Requirement
from envs.spec import Evidence, Step

ALREADY_THERE = {
    "build-essential",
    "gcc",
    "g++",
    "make",
    "git",
    "python3",
    "python3-dev",
    "python3-venv",
    "python3-pip",
    "python-dev",
    "python3-setuptools",
    "python3-wheel",
    "ca-certificates",
    "curl",
    "sudo",
    "software-properties-common",
    "apt-transport-https",
    "gnupg",
    "lsb-release",
    "wget",
}
SERVERS = re.compile(
    r"^(postgresql(-\d+)?|postgresql-contrib|mysql-server|mariadb-server|redis-server|redis|"
    r"rabbitmq-server|memcached|mongodb.*|docker.*|containerd.*)$"
)
APT_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]{1,60}$")
LIBRARIES = {
    "psycopg2": ["libpq-dev"],
    "psycopg": ["libpq5"],
    "mysqlclient": ["default-libmysqlclient-dev", "pkg-config"],
    "python-ldap": ["libldap2-dev", "libsasl2-dev"],
    "pycairo": ["libcairo2-dev", "pkg-config"],
    "lxml": ["libxml2-dev", "libxslt1-dev"],
    "pyaudio": ["portaudio19-dev"],
    "dbus-python": ["libdbus-1-dev", "pkg-config"],
    "gssapi": ["libkrb5-dev"],
    "pykerberos": ["libkrb5-dev"],
    "xmlsec": ["libxmlsec1-dev", "pkg-config"],
    "pygraphviz": ["libgraphviz-dev"],
    "python-magic": ["libmagic1"],
    "pyodbc": ["unixodbc-dev"],
    "python-snappy": ["libsnappy-dev"],
    "pycurl": ["libcurl4-openssl-dev", "libssl-dev"],
}
"""Distributions that build against (or load) a system library, and the Debian packages that provide it."""


def _library_packages(specs: list[Requirement]) -> dict[str, Evidence]:
    found: dict[str, Evidence] = {}
    for req in specs:
        name = requirement_name(req.spec)
        for package in LIBRARIES.get(name or "", []):
            found.setdefault(package, req.evidence)
    return found


def system_step(facts: RepoFacts, specs: list[Requirement],
                headers: dict[str, Evidence] | None = None) -> Step | None:
    """One apt-get step for packages CI or the docs install, libraries that known dependencies need, and
    `headers`: the packages an optionally built extension compiles against (proposal/compiled.py)."""
    packages: dict[str, Evidence] = {}
    project = re.sub(r"[_.]", "-", (facts.project_name or "").lower())
    own = {f"python3-{project}", f"python-{project}", project}  # Debian's build of the project itself
    for named in facts.apt_packages:
        name = named.name.split(":")[0]
        if APT_NAME.match(name) and name not in ALREADY_THERE and not SERVERS.match(name) and name not in own:
            packages.setdefault(name, named.evidence)
    named_by_repo = len(packages)
    for package, evidence in _library_packages(specs).items():
        packages.setdefault(package, evidence)
    from_headers = [p for p in (headers or {}) if p not in packages and p not in ALREADY_THERE]
    for package in from_headers:
        packages[package] = (headers or {})[package]
    if not packages:
        return None
    names = sorted(packages)[:20]
    why = (
        "Debian packages the project's CI or docs install"
        if named_by_repo
        else "system libraries that these Python dependencies build against or load"
    )
    if named_by_repo and len(packages) > named_by_repo + len(from_headers):
        why += ", and libraries its dependencies need"
    if from_headers:
        why = "" if len(from_headers) == len(packages) else why + "; "
        why += (f"{', '.join(from_headers)} for the headers its optionally built extensions include (without "
                "them the build would leave those extensions out silently)")
    evidence = list({(e.file, e.line): e for e in packages.values()}.values())[:8]
    return Step(command=f"{APT} {' '.join(names)}", why=why, kind="system", evidence=evidence, timeout_s=600)
