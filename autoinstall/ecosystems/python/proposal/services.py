"""The services the tests need (survey `facts.services`: CI's service containers, docker-compose services,
tox/nox variables pointing at a loopback URL), run inside the environment instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autoinstall.ecosystems.python.survey.facts import RepoFacts, Service, is_test_name
from autoinstall.ecosystems.services import ServiceKind, client_env, install_command, service_named
from envs.spec import Evidence, Step


@dataclass
class ServicePlan:
    """The install step that provides the services, the variables tests read, and notes."""

    step: Step | None = None
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def service_step(kinds: list[ServiceKind], env: dict[str, str], why: str, evidence: list[Evidence]) -> Step:
    """The install step for `kinds` (Debian packages, the start script, provisioning)."""
    return Step(command=install_command(kinds, env), why=why, kind="system", evidence=evidence, timeout_s=900)


def _origin(service: Service) -> str:
    """Who says the tests need the service, for notes and the step's why."""
    return {"ci": "CI's services", "tox": "tox's setenv", "nox": "nox's session env"}.get(service.source,
                                                                                         service.evidence.file)


def plan_services(facts: RepoFacts) -> ServicePlan:
    """Known services the evidence names -> one step that runs them here; unknown ones are noted (tests
    deselected)."""
    out = ServicePlan()
    kinds: dict[str, ServiceKind] = {}
    container_env: dict[str, str] = {}
    evidence: list[Evidence] = []
    origins: list[str] = []
    # Jobs in a test-like workflow first: their variables are what the test suite reads.
    ordered = sorted(facts.services, key=lambda s: not is_test_name(Path(s.evidence.file).stem))
    for service in ordered:
        kind = service_named(service.image) or service_named(service.name)
        if kind is None:
            out.notes.append(f"{_origin(service)}: a {service.name} service ({service.image}) that Debian does "
                             "not package: tests that need it will fail to connect and are deselected with that "
                             "reason")
            continue
        kinds.setdefault(kind.name, kind)
        evidence.append(service.evidence)
        origins.append(_origin(service))
        for key, value in service.env.items():
            container_env.setdefault(key, value)
        hosts = {s.name: s.image for s in facts.services}
        for key, value in client_env(service.client_env, hosts).items():
            out.env.setdefault(key, value)
    if not kinds:
        return out
    names = ", ".join(k.name for k in kinds.values())
    packages = " ".join(p for k in kinds.values() for p in k.packages)
    out.step = service_step(list(kinds.values()), {**out.env, **container_env},
                            f"the tests need {names} ({', '.join(dict.fromkeys(origins))}): run it here from Debian "
                            f"({packages}) on loopback; the test command starts it first", evidence[:8])
    out.notes.append(f"services {names} run inside the environment (started by the test command)"
                     + (f"; tests get the variables {', '.join(sorted(out.env))}" if out.env else ""))
    return out
