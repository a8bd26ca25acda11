"""The rebuild check, beside the image's own verification: the replay Dockerfile built and its image verified
once, in a thread that starts as soon as the build context is written (it needs only the installed versions,
the first thing verification reads).

The two mostly wait on different things (the build on downloads and the engine, the image's suite on one
process of two cores), so a build with the check takes about the longer of the two, not their sum. The replay
verifies a copy of the spec as it was before the image's verification, the deselections the install phase
made; a test its run crashes in, it leaves out by itself (autoinstall/verify/checks.py), as the image's does.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.options import BuildOptions
from autoinstall.verify import verify_image
from envs.base import SandboxFactory
from envs.spec import CheckResult, EnvSpec, Failure, Verification


class Replay:
    """`start(context)` builds and verifies in a thread; `judge(spec)` waits for it and records what it found."""

    def __init__(self, spec: EnvSpec, tag: str, options: BuildOptions, factory: SandboxFactory,
                 ecosystem: Ecosystem) -> None:
        self._spec, self._tag, self._factory, self._ecosystem = spec, tag, factory, ecosystem
        self._once = options.model_copy(update={"verify_runs": 1})  # flakiness is judged on the installed image
        self._abandoned = threading.Event()
        self._thread: threading.Thread | None = None
        self._context: Path | None = None
        self._again: Verification | None = None
        self._error: BaseException | None = None
        self._seconds = 0.0

    def start(self, context: Path) -> None:
        self._context = context
        before = self._spec.model_copy(deep=True)  # what the image's verification records stays its own
        self._thread = threading.Thread(target=self._run, args=(before, context), name="replay", daemon=True)
        self._thread.start()

    def judge(self, spec: EnvSpec) -> None:
        """Wait for the replay; when `spec` verified, record the check (a mismatch fails the spec) or raise what
        stopped the replay. When it did not, what the replay found is not wanted: a replay still building stops
        at the end of its build."""
        if self._thread is None:
            return
        if spec.status != "verified":
            self._abandoned.set()
        self._thread.join()
        if spec.status != "verified":
            return
        if self._error is not None:
            raise self._error
        again = self._again
        assert again is not None
        if spec.verification is not None:  # on record: the replay was built and verified, and how that went
            spec.verification.checks.append(CheckResult(
                name="rebuild", kind="rebuild", command=f"docker build {self._context} && verify once",
                required=True, ok=again.verified, exit_code=0 if again.verified else 1,
                duration_s=round(self._seconds, 1), output_tail=again.reason[-500:]))
        if not again.verified:
            spec.status = "failed"
            spec.failure = Failure(failure_class="rebuild_mismatch",
                                   message="the replay Dockerfile builds an image that does not verify: "
                                           + again.reason)

    def _run(self, before: EnvSpec, context: Path) -> None:
        start = time.monotonic()
        rebuilt = ""
        try:
            rebuilt = self._factory.build(context, f"{self._tag}-rebuild", {"autoinstall.kind": "rebuild"})
            if not self._abandoned.is_set():
                _, self._again = verify_image(before.model_copy(update={"image": rebuilt}), self._once,
                                              self._factory, self._ecosystem)
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread by `judge`
            self._error = e
        finally:
            self._seconds = time.monotonic() - start
            if rebuilt:
                self._factory.discard([rebuilt])
