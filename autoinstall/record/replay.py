"""The rebuild check: the replay Dockerfile built, and that image verified as the environment's own.

With the check on, the environment's image *is* the replay's build: the installed versions are read from the
install phase's last snapshot, the build context written, the Dockerfile built, and that image verified as any
environment's image is (the checks, the suite, the install phase's last run standing for the first when they
agree). So a recorded image is exactly what its Dockerfile builds, and the suite runs once per image, not once in
the snapshot's image and again in the rebuild's. The snapshot is verified only when the replay does not verify,
to tell the Dockerfile's fault (`rebuild_mismatch`) from the environment's own (`finish`).

The build itself starts earlier (`EarlyBuild`): as soon as the install's steps are done, from what they installed,
while the install phase runs its checks and suite, and again whenever a repair there adds a step or a variable;
the rebuild check takes the last one when its context is the final one, else builds its own. Once built, the
image's checks and first suite run are made at once, beside the install phase's own run (`verify_early`); the
rebuild check keeps them when nothing the verification reads changed since (the plan, the deselections) and the
install's last run agrees with them (`with_install_run`), else verifies the image again.
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.options import BuildOptions
from autoinstall.verify import verify_image
from autoinstall.verify.checks import with_install_run
from envs.base import Sandbox, SandboxFactory
from envs.errors import EnvError, ImageBuildError
from envs.spec import CheckResult, EnvSpec, TestRun, Verification

WriteContext = Callable[[str], Path]
"""Given what is installed (the ecosystem's freeze), write the replay's build context; returns its directory."""
VerifyEarly = Callable[[str, SandboxFactory], Verification]
"""Given an early build's image and the factory to start its sandboxes from, its verification of one run (raising
EnvError when it cannot run)."""


@dataclass
class Replayed:
    """What the replay came to: its image (None when the Dockerfile did not build) and that image's verification."""

    image: str | None
    verification: Verification | None
    context: Path
    seconds: float
    reason: str = ""
    early: bool = False
    """Whether the image is the build started when the install's steps were done (EarlyBuild)."""
    verified_beside: bool = False
    """Whether its checks and suite run were made beside the install phase's run (EarlyBuild's verification)."""

    @property
    def verified(self) -> bool:
        return self.image is not None and self.verification is not None and self.verification.verified

    def check(self) -> CheckResult:
        """The check on record in spec.json: `rebuild`, with its time and verdict."""
        why = self.reason or (self.verification.reason if self.verification is not None else "")
        return CheckResult(name="rebuild", kind="rebuild", command=f"docker build {self.context} && verify",
                           required=True, ok=self.verified, exit_code=0 if self.verified else 1,
                           duration_s=round(self.seconds, 1),
                           output_tail=(why if not self.verified else
                                        f"the environment's image is this build{self._beside()} ({why})")[-500:])

    def _beside(self) -> str:
        if self.verified_beside:
            return ", made and its suite run beside the install phase"
        return ", made beside the install phase" if self.early else ""


def replay(spec: EnvSpec, snapshot: str, tag: str, write_context: WriteContext, options: BuildOptions,
           factory: SandboxFactory, ecosystem: Ecosystem, prior: TestRun | None = None,
           early: EarlyBuild | None = None) -> Replayed:
    """Build the replay of `snapshot`'s install as `{tag}-rebuild` (or take `early`'s build of the same context)
    and verify it; the caller keeps or discards the image. A Dockerfile that does not build is a verdict
    (`reason`), not an error.

    Raises:
        EnvError: the engine failed (the build's own failures are not raised).
    """
    start = time.monotonic()
    with factory.sandbox(snapshot, network=False, env=spec.env) as sandbox:
        installed = ecosystem.freeze(sandbox)
    context = write_context(installed)
    taken = early.take(context) if early is not None else None
    try:
        rebuilt = taken or factory.build(context, f"{tag}-rebuild", {"autoinstall.kind": "rebuild"})
    except ImageBuildError as e:
        return Replayed(None, None, context, time.monotonic() - start, f"the replay Dockerfile did not build: {e}")
    made = early.verification(verification_inputs(spec)) if taken is not None and early is not None else None
    beside = with_install_run(made, spec.plan, prior, options.verify_runs) if made is not None else None
    try:
        verification = beside or verify_image(spec.model_copy(update={"image": rebuilt}), options, factory,
                                              ecosystem, prior)[1]
    except BaseException:
        factory.discard([rebuilt])
        raise
    return Replayed(rebuilt, verification, context, time.monotonic() - start, early=taken is not None,
                    verified_beside=beside is not None)


def verification_inputs(spec: EnvSpec) -> str:
    """What an image's verification reads of the record besides the image: the plan (test command, checks, runner)
    and the deselections. A verification made from other inputs is not the one the record asks for."""
    return spec.plan.model_dump_json() + "".join(d.model_dump_json() for d in spec.deselected)


def context_digest(context: Path) -> str:
    """What a replay's build reads besides the checkout (the same for a build): the Dockerfile and autoinstall/."""
    digest = hashlib.sha256((context / "Dockerfile").read_bytes())
    for path in sorted(p for p in (context / "autoinstall").rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(context)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class _Build:
    tag: str
    digest: str
    inputs: str = ""
    verify: VerifyEarly | None = None
    thread: threading.Thread | None = None
    image: str | None = None
    verification: Verification | None = None
    sandboxes: list[Sandbox] = field(default_factory=list)


class _Watched:
    """The factory for a verification beside the install: the sandboxes it makes are kept in `sandboxes`, so that
    `EarlyBuild.abandon` can stop them from the interrupted thread (the process would leave them running)."""

    def __init__(self, factory: SandboxFactory, sandboxes: list[Sandbox], stopping: threading.Event) -> None:
        self._factory, self._sandboxes, self._stopping = factory, sandboxes, stopping

    def sandbox(self, image: str, **options: Any) -> Sandbox:
        if self._stopping.is_set():
            msg = "the build was abandoned: no verification beside it"
            raise EnvError(msg)
        sandbox = self._factory.sandbox(image, **options)
        self._sandboxes.append(sandbox)
        return sandbox

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


@dataclass
class EarlyBuild:
    """The replay's build, started as soon as the install's steps are done (`start`), while its checks and suite
    run, and again when a repair changed what is installed (`changed`). `take` hands the rebuild check the last
    build when its context is the final one, else nothing; `discard` removes every build not taken."""

    factory: SandboxFactory
    tag: str
    _builds: list[_Build] = field(default_factory=list)
    _taken: str | None = None
    _state: object = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def changed(self, state: object) -> bool:
        """Whether `state` (what the install has done: steps, variables...) differs from the last one given."""
        changed, self._state = state != self._state, state
        return changed

    def start(self, context: Path, verify: VerifyEarly | None = None, inputs: str = "") -> None:
        """Build `context` (a directory this object now owns: removed when its build ends) in a thread; then
        `verify` the image there, a verification of what `inputs` (`verification_inputs`) names."""
        build = _Build(tag=f"{self.tag}-rebuild-{len(self._builds) + 1}", digest=context_digest(context),
                       inputs=inputs, verify=verify)
        build.thread = threading.Thread(target=self._build, args=(build, context), name="early-replay", daemon=True)
        self._builds.append(build)
        build.thread.start()

    def _build(self, build: _Build, context: Path) -> None:
        try:
            build.image = self.factory.build(context, build.tag, {"autoinstall.kind": "rebuild"})
        except BaseException:  # noqa: BLE001, S110 - a failed early build is built again by the rebuild check
            return
        finally:
            shutil.rmtree(context, ignore_errors=True)
        if build.verify is not None and not self._stopping.is_set():
            watched = cast(SandboxFactory, _Watched(self.factory, build.sandboxes, self._stopping))
            try:
                build.verification = build.verify(build.image, watched)
            except BaseException:  # noqa: BLE001, S110 - the rebuild check verifies the image itself
                build.verification = None

    def verification(self, inputs: str) -> Verification | None:
        """The taken build's verification, when it was made of `inputs`."""
        taken = next((b for b in self._builds if b.image is not None and b.image == self._taken), None)
        return taken.verification if taken is not None and taken.inputs == inputs else None

    def take(self, context: Path) -> str | None:
        """The image of the last build started, if its context is `context`'s and it built; None otherwise. A
        build of another context is not waited for (it goes on, and `discard` removes it)."""
        if not self._builds or self._builds[-1].digest != context_digest(context):
            return None
        last = self._builds[-1]
        assert last.thread is not None
        last.thread.join()
        self._taken = last.image
        return self._taken

    def discard(self) -> None:
        """Wait for every build (a verification not yet begun is not begun) and remove the images not taken."""
        self._stopping.set()
        for build in self._builds:
            assert build.thread is not None
            build.thread.join()
        self.abandon()

    def abandon(self) -> None:
        """Remove the images built and not taken, without waiting for a build still running (the build was
        interrupted): what that one leaves is `autoinstall cleanup`'s (its image names this process as owner).
        A verification running beside the install has its sandbox stopped (its run ends, its thread with it)."""
        self._stopping.set()
        for sandbox in [s for b in self._builds for s in b.sandboxes]:
            try:
                sandbox.stop()
            except Exception:  # noqa: BLE001, S112 - best effort on the way out: `autoinstall cleanup` removes it
                continue
        self.factory.discard([b.image for b in self._builds if b.image and b.image != self._taken])


def early_context() -> Path:
    """A directory for an early build's context (EarlyBuild.start removes it)."""
    return Path(tempfile.mkdtemp(prefix="autoinstall-replay-"))
