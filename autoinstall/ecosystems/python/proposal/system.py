"""The interpreter and the Debian packages a plan asks for."""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from autoinstall.ecosystems.debian_names import APT
from autoinstall.ecosystems.python.pypi_names import requirement_name
from autoinstall.ecosystems.python.survey.facts import RepoFacts, Requirement
from envs.spec import Evidence, Step

PYTHONS = {"3.11": "3.11.2", "3.13": "3.13.5", "3.9": "3.9.2"}
"""The interpreters these machines can bootstrap (Debian bookworm, trixie, bullseye) and their patch versions."""
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


def choose_python(facts: RepoFacts, pythons: tuple[str, ...] = tuple(PYTHONS)) -> tuple[str, list[str]]:
    """The first interpreter requires-python allows (3.11, then 3.13, then 3.9) and notes when the choice is
    forced."""
    spec_text = facts.requires_python
    if not spec_text:
        return pythons[0], []
    try:
        spec = SpecifierSet(re.sub(r"(?<=\d)\s+(?=[<>=!~])", ",", spec_text.strip().rstrip(",")))
    except InvalidSpecifier:
        return pythons[0], [f"requires-python {spec_text!r} is not a valid specifier; using {pythons[0]}"]
    fits = [v for v in pythons if spec.contains(PYTHONS.get(v, f"{v}.0"), prereleases=True)]
    if not fits:
        note = (
            f"requires-python {spec_text!r} excludes {', '.join(pythons)} (the interpreters "
            f"these machines can bootstrap); trying {pythons[0]}"
        )
        return pythons[0], [note]
    notes = (
        []
        if fits[0] == pythons[0]
        else [f"requires-python {spec_text!r} excludes {pythons[0]}; using {fits[0]}"]
    )
    return fits[0], notes


def _library_packages(specs: list[Requirement]) -> dict[str, Evidence]:
    found: dict[str, Evidence] = {}
    for req in specs:
        name = requirement_name(req.spec)
        for package in LIBRARIES.get(name or "", []):
            found.setdefault(package, req.evidence)
    return found


def system_step(facts: RepoFacts, specs: list[Requirement]) -> Step | None:
    """One apt-get step for packages CI or the docs install, and libraries that known dependencies need."""
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
    if not packages:
        return None
    names = sorted(packages)[:20]
    why = (
        "Debian packages the project's CI or docs install"
        if named_by_repo
        else "system libraries that these Python dependencies build against or load"
    )
    if named_by_repo and len(packages) > named_by_repo:
        why += ", and libraries its dependencies need"
    evidence = list({(e.file, e.line): e for e in packages.values()}.values())[:8]
    return Step(command=f"{APT} {' '.join(names)}", why=why, kind="system", evidence=evidence, timeout_s=600)
