"""The rebuild check: the replay Dockerfile built, and that image verified as the environment's own.

With the check on, the environment's image *is* the replay's build: the installed versions are read from the
install phase's last snapshot, the build context written, the Dockerfile built, and that image verified as any
environment's image is (the checks, the suite, the install phase's last run standing for the first when they
agree). So a recorded image is exactly what its Dockerfile builds, and the suite runs once per image, not once in
the snapshot's image and again in the rebuild's. The snapshot is verified only when the replay does not verify,
to tell the Dockerfile's fault (`rebuild_mismatch`) from the environment's own (`finish`).

The build itself starts earlier (`EarlyBuild`): as soon as the install's steps are done, from what they installed,
while the install phase runs its checks and suite, and again whenever a repair there adds a step or a variable;
the rebuild check takes the last one when its context is the final one, else builds its own.
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

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.options import BuildOptions
from autoinstall.verify import verify_image
from envs.base import SandboxFactory
from envs.errors import EnvError, ImageBuildError
from envs.spec import CheckResult, EnvSpec, TestRun, Verification

WriteContext = Callable[[str], Path]
"""Given what is installed (the ecosystem's freeze), write the replay's build context; returns its directory."""


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
                                        f"the environment's image is this build"
                                        f"{', made beside the install phase' if self.early else ''} ({why})")[-500:])


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
    try:
        _, verification = verify_image(spec.model_copy(update={"image": rebuilt}), options, factory, ecosystem,
                                       prior)
    except BaseException:
        factory.discard([rebuilt])
        raise
    return Replayed(rebuilt, verification, context, time.monotonic() - start, early=taken is not None)


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
    thread: threading.Thread | None = None
    image: str | None = None


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

    def changed(self, state: object) -> bool:
        """Whether `state` (what the install has done: steps, variables...) differs from the last one given."""
        changed, self._state = state != self._state, state
        return changed

    def start(self, context: Path) -> None:
        """Build `context` (a directory this object now owns: removed when its build ends) in a thread."""
        build = _Build(tag=f"{self.tag}-rebuild-{len(self._builds) + 1}", digest=context_digest(context))
        build.thread = threading.Thread(target=self._build, args=(build, context), name="early-replay", daemon=True)
        self._builds.append(build)
        build.thread.start()

    def _build(self, build: _Build, context: Path) -> None:
        try:
            build.image = self.factory.build(context, build.tag, {"autoinstall.kind": "rebuild"})
        except BaseException:  # noqa: BLE001, S110 - a failed early build is built again by the rebuild check
            pass
        finally:
            shutil.rmtree(context, ignore_errors=True)

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
        """Wait for every build and remove the images not taken."""
        for build in self._builds:
            assert build.thread is not None
            build.thread.join()
        self.abandon()

    def abandon(self) -> None:
        """Remove the images built and not taken, without waiting for a build still running (the build was
        interrupted): what that one leaves is `autoinstall cleanup`'s (its image names this process as owner)."""
        self.factory.discard([b.image for b in self._builds if b.image and b.image != self._taken])


def early_context() -> Path:
    """A directory for an early build's context (EarlyBuild.start removes it)."""
    return Path(tempfile.mkdtemp(prefix="autoinstall-replay-"))
