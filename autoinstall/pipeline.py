"""One environment end to end: source -> survey -> propose -> install/repair -> verify -> record."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autoinstall import images
from autoinstall.agent_tools import tools_over_checkout, wants_tools
from autoinstall.dockerfile import constraints_from_freeze, render_dockerfile, write_build_context
from autoinstall.install import Budgets, Installer, InstallResult
from autoinstall.paths import autoinstall_home
from autoinstall.plan import Plan
from autoinstall.spec import EnvSpec, Failure, SourceRecord, Timings
from autoinstall.verify import DEFAULT_THRESHOLD, Verification, verify
from envs.base import Limits

Report = Callable[[str, str], None]


class BuildOptions(BaseModel):
    """How to build one environment."""

    model_config = ConfigDict(extra="forbid")
    model: str = "embedded"
    """"embedded" or "openai:NAME"."""
    base_url: str | None = None
    """Endpoint of an OpenAI-compatible server, for openai:NAME models."""
    commit: str | None = None
    out_dir: Path | None = None
    """Where the spec, Dockerfile, context and logs go; default under autoinstall_home()/envs."""
    budgets: Budgets = Field(default_factory=Budgets)
    threshold: float = DEFAULT_THRESHOLD
    verify_runs: int = 2
    as_of_commit: bool = False
    """Resolve dependencies as of the commit date (uv --exclude-newer)."""
    rebuild_check: bool = False
    """Build the replay Dockerfile and verify the result too."""
    python: str | None = None
    """Force an interpreter version instead of the plan's."""
    limits: Limits = Field(default_factory=Limits)


def default_env_dir(name: str, revision: str, model: str = "embedded") -> Path:
    """`~/.autoinstall/envs/NAME-REVISION` (plus `-MODEL` for models other than the embedded one)."""
    suffix = "" if model == "embedded" else "-" + slug(model)
    return autoinstall_home() / "envs" / f"{name}-{revision}{suffix}"


def spec_dir(spec: EnvSpec) -> Path:
    """The directory holding the spec's Dockerfile, context and logs."""
    return Path(spec.env_dir) if spec.env_dir else default_env_dir(slug(spec.source.name), spec.source.revision,
                                                                    spec.model)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.") or "repo"


def write_outputs(out: Path, spec: EnvSpec) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "spec.json.tmp"
    tmp.write_text(spec.model_dump_json(indent=2))
    tmp.replace(out / "spec.json")
    if spec.dockerfile:
        (out / "Dockerfile").write_text(spec.dockerfile)


def build_environment(repo: str, options: BuildOptions | None = None, report: Report | None = None) -> EnvSpec:
    """Build and verify one environment; returns its spec (also written to the output directory).

    Raises:
        SourceError: the repository cannot be read (the message says why and what to do).
        ModelError: the model endpoint failed while proposing.
        EnvError: the Docker engine failed.
    """
    from autoinstall.source import prepare_source

    options = options or BuildOptions()
    say = report or (lambda event, text: None)
    started = time.monotonic()
    timings = Timings()
    with tempfile.TemporaryDirectory(prefix="autoinstall-src-") as scratch:
        say("phase", "source")
        src = Path(scratch) / "repo"
        source = prepare_source(repo, options.commit, src)
        timings.source_s = round(time.monotonic() - started, 3)
        record = SourceRecord(repo=repo, name=source.name, commit=source.commit, commit_date=source.commit_date,
                              is_dirty=source.is_dirty)
        if not source.commit or source.is_dirty:
            record.content_digest = tree_digest(src)
        out = options.out_dir or default_env_dir(slug(source.name), record.revision, options.model)

        say("phase", "propose")
        t0 = time.monotonic()
        model, plan = _propose(src, options)
        timings.propose_s = round(time.monotonic() - t0, 3)
        spec = EnvSpec(status="failed", source=record, env_dir=str(out), model=model.name, plan=plan,
                       python=plan.python, test_command=plan.test_command,
                       created_at=dt.datetime.now(dt.UTC).isoformat())
        if not plan.steps and plan.test_runner == "none":
            spec.failure = Failure(failure_class="no_build_files",
                                   message="nothing to install: no build files, requirements or tests found",
                                   evidence="; ".join(plan.notes))
        else:
            say("phase", "install")
            _install_and_verify(spec, model, src, out, options, say, timings)
        timings.total_s = round(time.monotonic() - started, 3)
        spec.timings = timings
        write_outputs(out, spec)
        return spec


def _propose(src: Path, options: BuildOptions) -> tuple[Any, Plan]:
    """Phase 1: the model's plan for the checkout (chat models explore it with read/search)."""
    from autoinstall.models import get_model
    from autoinstall.survey import survey

    model = get_model(options.model, base_url=options.base_url)
    facts = survey(src)
    if wants_tools(model):
        with tools_over_checkout(src) as tools:
            plan = model.propose(facts, src, tools=tools)
    else:
        plan = model.propose(facts, src)
    if options.python:
        plan.python = options.python
    return model, plan


def _install_and_verify(spec: EnvSpec, model: Any, src: Path, out: Path, options: BuildOptions, say: Report,
                        timings: Timings) -> None:
    """Phase 2, then verification of the result; fills in `spec`. Snapshots are discarded at the end."""
    t0 = time.monotonic()
    env = {"UV_EXCLUDE_NEWER": spec.source.commit_date} if options.as_of_commit and spec.source.commit_date else {}
    installer = Installer(spec.plan, src, model, images.sandbox_factory(options.limits, env),
                          budgets=options.budgets.model_copy(update={"threshold": options.threshold}),
                          log_dir=out / "logs", report=say)
    installer.result.env.update(env)
    result = installer.run()
    timings.install_s = round(time.monotonic() - t0, 3)
    spec.python, spec.steps, spec.env = result.python, result.steps, result.env
    spec.stubs, spec.deselected, spec.log, spec.skipped = result.stubs, result.deselected, result.log, result.skipped
    if result.plan is not None:
        spec.plan, spec.test_command = result.plan, result.plan.test_command
    spec.base_image = images.base_image_for(result.python)
    spec.failure = result.failure
    name = slug(spec.source.name)
    try:
        if result.snapshot is not None and result.failure is None:
            say("phase", "verify")
            t0 = time.monotonic()
            _finish(spec, result, src, out, options, name)
            timings.verify_s = round(time.monotonic() - t0, 3)
        elif result.snapshot is not None:
            # Keep the last good state of a failed build: `autoinstall debug` starts from it.
            spec.image = images.finalize(result.snapshot, images.env_tag(name, spec.source.revision, spec.model),
                                         spec.env, source=spec.source.repo)
    finally:
        images.discard(result.snapshots)


def _finish(spec: EnvSpec, result: InstallResult, src: Path, out: Path, options: BuildOptions, name: str) -> None:
    """Tag the image, freeze versions, write the replay Dockerfile and verify in a fresh container."""
    tag = images.env_tag(name, spec.source.revision, spec.model)
    spec.image = images.finalize(result.snapshot or "", tag, spec.env, source=spec.source.repo)
    constraints, verification = verify_image(spec, options)
    project = spec.source.name
    spec.dockerfile = render_dockerfile(base_image=spec.base_image or "", steps=spec.steps, env=spec.env,
                                        name=name, commit=spec.source.commit, source=spec.source.repo)
    context = write_build_context(out / "context", repo=src, dockerfile=spec.dockerfile,
                                  constraints=constraints_from_freeze(constraints, project),
                                  stub_wheels=result.stub_wheels)
    spec.verification = verification
    judge_spec(spec, verification)
    if options.rebuild_check and spec.status == "verified":
        rebuilt = images.build_context(context, f"{tag}-rebuild")
        try:
            _, again = verify_image(spec.model_copy(update={"image": rebuilt}), options)
        finally:
            images.discard([rebuilt])
        if not again.verified:
            spec.status = "failed"
            spec.failure = Failure(failure_class="rebuild_mismatch",
                                   message=f"the replay Dockerfile builds an image that does not verify: {again.reason}")


def verify_image(spec: EnvSpec, options: BuildOptions) -> tuple[str, Verification]:
    """In a fresh container from the image with the network off: freeze, then run the suite."""
    with images.sandbox_from_image(spec.image or "", options.limits, network=False) as sandbox:
        freeze = sandbox.exec(["uv", "pip", "freeze", "--exclude-editable"], timeout=120)
        verification = verify(sandbox, spec.plan, spec.deselected, runs=options.verify_runs,
                              threshold=options.threshold, timeout_s=options.budgets.test_timeout_s)
    return freeze.stdout if freeze.ok else "", verification


def judge_spec(spec: EnvSpec, verification: Verification) -> None:
    if spec.plan.test_runner == "none" or verification.last_run is None:
        spec.failure = Failure(failure_class="no_tests", message="installed, but the project has no tests to run",
                               evidence="; ".join(spec.plan.notes))
    elif verification.verified:
        spec.status = "verified"
        spec.failure = None
    else:
        last = verification.last_run
        cls = "collection_failed" if not last.collection_ok else "tests_failing"
        spec.failure = Failure(failure_class=cls, message=verification.reason, evidence=last.output_tail[-1500:])


def tree_digest(root: Path) -> str:
    """sha256 over the relative paths and contents of every file under `root`, .git excluded."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_spec(path: Path) -> EnvSpec:
    return EnvSpec.model_validate(json.loads(path.read_text()))
