"""Stage 6, record: tag the image, verify it, write the replay Dockerfile + context and spec.json.

`finish()` is the one way an installed state becomes a recorded environment, for the pipeline and for
`autoinstall debug --record` alike. Files: `outputs.py` (paths, tags, spec.json), `dockerfile.py` (the
replay Dockerfile and its build context), `templates/`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autoinstall.ecosystems.base import Ecosystem
from autoinstall.options import BuildOptions
from autoinstall.record.dockerfile import render_dockerfile, write_build_context
from autoinstall.record.outputs import default_env_dir, env_tag, load_spec, slug, spec_dir, write_outputs
from autoinstall.record.replay import EarlyBuild, Replayed, early_context, replay, verification_inputs
from autoinstall.verify import judge_spec, verify_image
from envs.base import SandboxFactory
from envs.errors import EnvError, SandboxLimitError
from envs.spec import EnvSpec, Failure, TestRun, Verification

Report = Callable[[str, str], None]


def keep_failed(spec: EnvSpec, snapshot: str, factory: SandboxFactory) -> None:
    """A failed build's last good state, tagged: `autoinstall debug` starts from it."""
    tag = env_tag(slug(spec.source.name), spec.source.revision, spec.model)
    spec.image = factory.finalize(snapshot, tag, spec.env, _labels(spec))


def _labels(spec: EnvSpec) -> dict[str, str]:
    return {"autoinstall.kind": "environment", "autoinstall.source": spec.source.repo}


def replay_context(spec: EnvSpec, dest: Path, repo: Path, ecosystem: Ecosystem, installed: str,
                   stub_wheels: dict[str, bytes]) -> Path:
    """Render `spec`'s replay Dockerfile (into `spec.dockerfile`) and write its build context at `dest`, the
    installed versions (`installed`, the ecosystem's freeze) pinned; returns `dest`."""
    name = slug(spec.source.name)
    spec.dockerfile = render_dockerfile(base_image=spec.base_image or "", steps=spec.steps, env=spec.env,
                                        name=name, commit=spec.source.commit, source=spec.source.repo,
                                        pin_env=ecosystem.pin_env, toolchains=spec.toolchains)
    return write_build_context(dest, repo=repo, dockerfile=spec.dockerfile,
                               constraints=ecosystem.constraints(installed, spec.source.name),
                               stub_wheels=stub_wheels)


def finish(spec: EnvSpec, snapshot: str, repo: Path, out: Path, options: BuildOptions, factory: SandboxFactory,
           ecosystem: Ecosystem, stub_wheels: dict[str, bytes], report: Report | None = None,
           prior: TestRun | None = None, early: EarlyBuild | None = None) -> EnvSpec:
    """Tag the environment's image, verify it offline in a fresh sandbox, write the Dockerfile, context and
    spec.json. The image is `snapshot`'s, or with `options.rebuild_check` the replay Dockerfile's build when that
    verifies (replay.py); then the snapshot is verified only to tell a `rebuild_mismatch` from its own failure.

    `prior`, the install phase's last run, may stand for verification's first run (autoinstall/verify); `early`,
    the replay's build started when the install's steps were done, is taken when nothing changed since.
    A verification that cannot run (engine failure) is recorded as an `infrastructure` failure; a failed
    verification is recorded with its class. `repo` is the checkout copied into the build context.

    Raises:
        EnvError: the snapshot could not be tagged (nothing is lost: the snapshot image stays).
    """
    say = report or (lambda event, text: None)
    name = slug(spec.source.name)
    tag = spec.image or env_tag(name, spec.source.revision, spec.model)
    spec.status = "failed"
    written: list[Path] = []
    tagged: list[str] = []

    def write_context(installed: str) -> Path:
        written.append(replay_context(spec, out / "context", repo, ecosystem, installed, stub_wheels))
        return written[-1]

    def tag_image(image: str) -> None:
        spec.image = factory.finalize(image, tag, spec.env, _labels(spec))
        tagged.append(image)

    say("phase", "verify")
    replayed: Replayed | None = None
    try:
        if options.rebuild_check:
            replayed = replay(spec, snapshot, tag, write_context, options, factory, ecosystem, prior, early)
        if replayed is not None and replayed.verified:
            assert replayed.image is not None and replayed.verification is not None
            tag_image(replayed.image)
            verification = replayed.verification
        else:
            tag_image(snapshot)
            _, verification = verify_image(spec, options, factory, ecosystem, prior,
                                           on_frozen=None if written else write_context)
    except SandboxLimitError as e:
        spec.verification = None
        spec.failure = Failure(failure_class="disk_limit", message=f"verification was stopped: {e}")
    except EnvError as e:
        spec.verification = None
        spec.failure = Failure(failure_class="infrastructure", message=f"verification could not run: {e}")
    else:
        spec.verification = verification
        spec.deselected = [*spec.deselected, *verification.crashed_tests]  # left out of its runs, so recorded
        judge_spec(spec, verification)
        if replayed is not None:
            _judge_replay(spec, verification, replayed)
    finally:
        if replayed is not None and replayed.image is not None:
            factory.discard([replayed.image])  # the environment's tag holds it when it verified
    if not tagged:  # stopped before the image was tagged: `debug` starts from the snapshot's
        tag_image(snapshot)
    if not written:  # verification stopped before it read what is installed
        write_context("")
    spec.env_dir = spec.env_dir or str(out)
    write_outputs(out, spec)
    return spec


def _judge_replay(spec: EnvSpec, verification: Verification, replayed: Replayed) -> None:
    """Record the rebuild check; an environment that verifies only in the snapshot's image is a mismatch."""
    verification.checks.append(replayed.check())
    if not replayed.verified and spec.status in ("verified", "partial"):
        spec.status = "failed"
        spec.failure = Failure(failure_class="rebuild_mismatch",
                               message="the replay Dockerfile builds an image that does not verify: "
                                       + (replayed.reason or (replayed.verification.reason
                                                              if replayed.verification else "")))


def fill_cache(spec: EnvSpec, out: Path, factory: SandboxFactory, ecosystem: Ecosystem) -> None:
    """After a build, fill the shared package cache with its pinned packages from a clean base-image sandbox
    (trusted: nothing of the project runs there). Builds only ever see that cache read-only; a failure
    here costs later builds speed, never correctness, so it is not raised."""
    constraints = out / "context" / "autoinstall" / "constraints.txt"
    if not spec.base_image or not constraints.is_file():
        return
    try:
        with factory.sandbox(spec.base_image, network=True, cache=True, trusted=True) as sandbox:
            ecosystem.warm(sandbox, constraints.read_text())
    except EnvError:
        return


__all__ = ["EarlyBuild", "default_env_dir", "early_context", "env_tag", "fill_cache", "finish", "keep_failed",
           "load_spec", "replay_context", "slug", "spec_dir", "verification_inputs", "write_outputs"]
