"""One base for the ecosystems whose lock files pin every dependency and whose toolchain comes from Debian
(Go, Rust, Node, Java): a language states only what differs (its name, manifests, Debian packages, registry,
chat text, grading rules and its own functions: one `Language`); `CompiledEcosystem` supplies the rest of
the Ecosystem protocol (autoinstall/ecosystems/base.py): detection by manifest, the deselection evidence, the
base image with the toolchain's packages, no stubs and nothing to resolve as of a date."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from autoinstall.ecosystems import toolchains as toolchain_images
from autoinstall.ecosystems.base import Facts, Log, RepairContext
from autoinstall.ecosystems.browsers import unobtainable_browser
from autoinstall.ecosystems.repofiles import is_file
from autoinstall.ecosystems.services import well_known_service
from autoinstall.errors import AutoinstallError
from envs.base import Sandbox, SandboxFactory
from envs.grading.policy import GradingRules
from envs.spec import Diagnosis, Plan, Repair


class DiagnosisModule(Protocol):
    """A language's diagnosis.py: what a failed command's output means, and what a test prints when it needs a
    service that is not running or the internet (the only evidence a deselection is accepted on)."""

    SERVICE_REFUSED: re.Pattern[str]
    NETWORK_OFF: re.Pattern[str]

    def diagnose(self, output: str, *, timed_out: bool = False) -> Diagnosis: ...


class PinsModule(Protocol):
    """A language's pins.py: the installed versions, the constraints the replay pins to, the cache warm-up."""

    def freeze(self, sandbox: Sandbox) -> str: ...

    def warm(self, sandbox: Sandbox, constraints: str) -> None: ...

    def constraints(self, freeze: str, project: str | None) -> str: ...


@dataclass(frozen=True)
class Language:
    """What one language states, in the order the stages ask: how to recognise it, survey and plan it, its
    toolchain's Debian packages, how to read and repair its failures, how to pin what was installed, and what
    of a task belongs to the task. The protocol's methods call its functions and modules as they are."""

    name: str
    """Recorded in plans and specs, e.g. "go"."""
    manifests: tuple[str, ...]
    """Files that make a folder a project of its own (detection; subprojects.py: a monorepo's packages)."""
    survey: Callable[[Path], Facts]
    propose: Callable[..., Plan]
    """(its facts, the checkout, the base image's Python) -> the embedded model's plan."""
    chat_environment: str
    """What chat models, which plan instead, are told about the container."""
    packages: tuple[str, ...]
    """Debian packages of the toolchain, added to the base image."""
    diagnosis: DiagnosisModule
    repair: Callable[[RepairContext], "Repair | None"]
    registry: str
    """Where its packages come from (named when a stub is asked for: none can be)."""
    pins: PinsModule
    grading: GradingRules
    """What of an agent's change belongs to the task, not to the fix (envs/grading/policy.py)."""


class CompiledEcosystem:
    """The Ecosystem protocol for a language whose lock files pin every dependency and whose packages cannot
    be stood in for: a subclass sets `language`; instances hold no state."""

    language: ClassVar[Language]
    toolchains: tuple[str, ...] = ("3.13",)
    """The base image's Python (for the tool server): trixie's, whose Debian has the newest toolchains."""
    stub_env: dict[str, str] = {}
    pin_env: tuple[str, ...] = ()
    """Nothing: the lock file (or the local repository) pins every version, and the replay Dockerfile's
    steps read the constraints file themselves where they need it."""

    @property
    def name(self) -> str:
        return self.language.name

    @property
    def manifests(self) -> tuple[str, ...]:
        return self.language.manifests

    @property
    def PACKAGES(self) -> tuple[str, ...]:  # noqa: N802 - the name Accompanied (detect.py) reads
        return self.language.packages

    @property
    def chat_environment(self) -> str:
        return self.language.chat_environment

    @property
    def grading(self) -> GradingRules:
        return self.language.grading

    def detect(self, repo: Path) -> bool:
        return any(is_file(repo, repo / manifest) for manifest in self.manifests)

    def survey(self, repo: Path) -> Facts:
        return self.language.survey(repo)

    def propose(self, facts: Facts, repo: Path, toolchains: tuple[str, ...]) -> Plan:
        # `toolchains` are the model's Python versions, not this language's: the image is always its own.
        return self.language.propose(facts, Path(repo), self.toolchains[0])

    def diagnose(self, output: str, *, timed_out: bool = False) -> Diagnosis:
        return self.language.diagnosis.diagnose(output, timed_out=timed_out)

    def repair(self, context: RepairContext) -> Repair | None:
        return self.language.repair(context)

    def justifies_deselection(self, message: str) -> bool:
        """A refusal on a well-known service's port, no internet (services.well_known_service), or a browser build
        no source here has (browsers.unobtainable_browser)."""
        refused = self.language.diagnosis.SERVICE_REFUSED.search(message) and well_known_service(message)
        return bool(refused or self.language.diagnosis.NETWORK_OFF.search(message) or unobtainable_browser(message))

    def base_image(self, factory: SandboxFactory, toolchain: str, log: Log | None = None) -> str:
        return toolchain_images.base_image(factory, toolchain, log, self.PACKAGES)  # "3.13+rust-1.95.0": toolchains.py

    def stub(self, distribution: str, import_name: str, output: str) -> tuple[str, bytes]:
        """Not applicable: the embedded rules never ask; a model that does ends the build with this error."""
        msg = (f"a stub for {distribution} was asked for, but {self.name} packages cannot be stubbed: make "
               f"it reachable through {self.language.registry}, or build with a model that does not propose "
               "stubs")
        raise AutoinstallError(msg)

    def stub_users(self, repo: Path, import_name: str) -> list[str]:
        return []

    def freeze(self, sandbox: Sandbox) -> str:
        return self.language.pins.freeze(sandbox)

    def as_of(self, date: str) -> dict[str, str]:
        """Nothing: the lock file pins every version, whatever the date."""
        return {}

    def warm(self, sandbox: Sandbox, constraints: str) -> None:
        self.language.pins.warm(sandbox, constraints)

    def constraints(self, freeze: str, project: str | None) -> str:
        return self.language.pins.constraints(freeze, project)
