"""One environment end to end: source -> survey -> plan -> install -> verify -> record.

Only stage entry points are called here; each stage is a folder of `autoinstall/`.
"""
from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.detect import get_ecosystem, looked_for
from autoinstall.ecosystems.base import Ecosystem
from autoinstall.install import InstallResult, install
from autoinstall.options import BuildOptions, docker_factory
from autoinstall.plan import propose
from autoinstall.record import (EarlyBuild, default_env_dir, early_context, env_tag, fill_cache, finish, keep_failed,
                                replay_context, slug, verification_inputs, write_outputs)
from autoinstall.record.lock import build_lock
from autoinstall.source import check_out
from autoinstall.verify import verify_image
from envs.base import Sandbox, SandboxFactory
from envs.errors import EnvError
from envs.spec import EnvSpec, Failure, SourceRecord, Timings

Report = Callable[[str, str], None]


def build_environment(repo: str, options: BuildOptions | None = None, report: Report | None = None,
                      factory: SandboxFactory | None = None) -> EnvSpec:
    """Build and verify one environment; returns its spec (also written to the output directory).

    Args:
        repo: URL, directory or git directory (bare ok).
        options: budgets, threshold, model, Python, limits.
        report: called with (event, text) as the build goes ("phase", "step", "done", "fail", "repair").
        factory: where sandboxes come from (default: the local Docker engine).

    Raises:
        SourceError: the repository cannot be read (the message says why and what to do).
        ModelError: the model endpoint failed while proposing.
        EnvError: the Docker engine failed.
    """
    options = options or BuildOptions()
    say = report or (lambda event, text: None)
    started = time.monotonic()
    timings = Timings()
    with tempfile.TemporaryDirectory(prefix="autoinstall-src-") as scratch:
        say("phase", "source")
        src = Path(scratch) / "repo"
        record = check_out(repo, options.commit, src)
        timings.source_s = round(time.monotonic() - started, 3)
        out = options.out_dir or default_env_dir(slug(record.name), record.revision, options.model)
        with build_lock(record.repo, record.revision, options.model, f"{record.name} at {record.revision}"):
            return _build(src, record, out, options, say, timings, started, factory)


def _build(src: Path, record: SourceRecord, out: Path, options: BuildOptions, say: Report, timings: Timings,
           started: float, factory: SandboxFactory | None) -> EnvSpec:
    """Propose, install, verify and record one checkout (the caller holds the build lock)."""
    say("phase", "propose")
    t0 = time.monotonic()
    model, plan = propose(src, options)
    plan.notes[:0] = record.notes  # what the checkout left out (links out of it, FIFOs, parts of .git)
    timings.propose_s = round(time.monotonic() - t0, 3)
    spec = EnvSpec(status="failed", source=record, env_dir=str(out), model=model.name, plan=plan,
                   python=plan.python, test_command=plan.test_command,
                   created_at=dt.datetime.now(dt.UTC).isoformat())
    if not plan.steps and plan.test_runner == "none":
        spec.failure = Failure(failure_class="no_build_files",
                               message="nothing to install: no build files, requirements or tests found (looked "
                                       f"for {', '.join(looked_for())} at the root, and for a project's "
                                       "manifest in folders up to 3 levels below it)",
                               evidence="; ".join(plan.notes))
    else:
        say("phase", "install")
        _install_and_record(spec, model, src, out, options, say, timings,
                            factory or docker_factory(options.limits))
    timings.total_s = round(time.monotonic() - started, 3)
    spec.timings = timings
    write_outputs(out, spec)
    return spec


def _install_and_record(spec: EnvSpec, model: object, src: Path, out: Path, options: BuildOptions, say: Report,
                        timings: Timings, factory: SandboxFactory) -> None:
    """Phase 2, then verification and the record; fills in `spec`. Snapshots are discarded at the end."""
    t0 = time.monotonic()
    ecosystem = get_ecosystem(spec.plan.ecosystem)
    env = {} if options.latest_deps else ecosystem.as_of(spec.source.commit_date)  # type: ignore[arg-type]
    if options.latest_deps:
        spec.plan.notes.append("--latest-deps: dependencies resolve with today's releases, not as of the commit")
    early = EarlyBuild(factory, env_tag(slug(spec.source.name), spec.source.revision, spec.model))

    def steps_done(sandbox: Sandbox, installed: InstallResult) -> None:  # the replay builds beside the suite
        if not early.changed((installed.python, [s.command for s in installed.steps], sorted(installed.env.items()),
                              sorted(installed.stub_wheels))):
            return
        where = early_context()
        try:
            draft = _installed(spec.model_copy(deep=True), installed, ecosystem, factory, src)
            context = replay_context(draft, where, src, ecosystem, ecosystem.freeze(sandbox), installed.stub_wheels)
        except (EnvError, OSError):  # no early build: the rebuild check builds the replay when it starts
            shutil.rmtree(where, ignore_errors=True)
            return
        one_run = options.model_copy(update={"verify_runs": 1})  # the install's last run may stand for the other
        early.start(context, lambda image, beside: verify_image(draft.model_copy(update={"image": image}), one_run,
                                                                beside, ecosystem)[1], verification_inputs(draft))

    try:
        result = install(spec.plan, src, model, factory, ecosystem, options, env, out / "logs", say,
                         on_steps_done=steps_done if options.rebuild_check else None)
        timings.install_s = round(time.monotonic() - t0, 3)
        _installed(spec, result, ecosystem, factory, src)
        spec.failure = result.failure
        try:
            if result.snapshot is not None and result.failure is None:
                t0 = time.monotonic()
                finish(spec, result.snapshot, src, out, options, factory, ecosystem, result.stub_wheels, say,
                       prior=result.last_run, early=early)
                timings.verify_s = round(time.monotonic() - t0, 3)
                fill_cache(spec, out, factory, ecosystem)
            elif result.snapshot is not None:
                keep_failed(spec, result.snapshot, factory)
        finally:
            factory.discard(result.snapshots)
    except Exception:
        early.discard()
        raise
    except BaseException:  # Ctrl-C, SIGTERM, a batch stopping: no wait for a replay still building
        early.abandon()
        raise
    else:
        early.discard()


def _installed(spec: EnvSpec, result: InstallResult, ecosystem: Ecosystem, factory: SandboxFactory,
               src: Path) -> EnvSpec:
    """`spec` with what the install phase did (steps, variables, deselections...), its base image and
    toolchains; returns it."""
    spec.python, spec.steps, spec.env = result.python, list(result.steps), dict(result.env)
    spec.stubs, spec.deselected, spec.log, spec.skipped = result.stubs, result.deselected, result.log, result.skipped
    if result.plan is not None:
        spec.plan, spec.test_command = result.plan, result.plan.test_command
    spec.base_image = ecosystem.base_image(factory, result.python)
    spec.toolchains = toolchains.records(ecosystem, result.python, result.env, src, spec.base_image)
    return spec
