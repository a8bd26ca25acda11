"""Harbor tasks (harbor 0.25 task format), one directory per environment:

    instruction.md  task.toml  environment/Dockerfile  tests/test.sh (+ scorer, selection)  solution/solve.sh

`template`: the agent starts from the verified image; a separate verifier container (a fresh copy of the
image, with the agent's /workspace restored into it as an artifact) runs the verification tests. It has no
goal (its oracle changes nothing and an agent that does nothing scores 1), so it is a template to put a goal
into, not a task to train on: tasks with goals come from `export --tasks` (envs/export/harbor_tasks.py).
`env-setup`: the agent starts from the base image with the bare checkout and must install it; the oracle
replays the recorded steps; the verifier runs the suite in the agent's own container, since the installed
environment is what is graded (so task.toml tells `harbor lint` to expect a shared verifier).
"""
from __future__ import annotations

import json
import math
import shlex
import shutil
from pathlib import Path
from string import Template
from typing import Any

from envs.base import Limits
from envs.export.common import (
    WORKDIR,
    Entry,
    ExportError,
    ExportOptions,
    TaskKind,
    format_version,
    repo_name,
    verification_counts,
)
from envs.testrun import abilities

TEMPLATES = Path(__file__).parent / "templates"
SCHEMA_VERSION = "1.4"
"""Harbor's task.toml schema_version this writer targets."""
JUNIT = "/logs/verifier/junit.xml"
SCORER = "autoinstall_score.py"


def _template(name: str) -> Template:
    return Template((TEMPLATES / name).read_text())


def images_for(entries: list[Entry], task: TaskKind) -> list[str]:
    """The image each task starts from: the verified image, or (env-setup) the base image."""
    return [(e.spec.image if task == "template" else e.spec.base_image) or "" for e in entries]


def _context_repo(entry: Entry) -> Path:
    return Path(entry.spec.env_dir or entry.record.env_dir) / "context" / "repo"


def check_setup_sources(entries: list[Entry]) -> None:
    """env-setup tasks need each environment's base image and its checkout (<env_dir>/context/repo).

    Raises:
        ExportError: naming the environments that lack them.
    """
    missing = [e for e in entries if not e.spec.base_image or not _context_repo(e).is_dir()]
    if missing:
        names = ", ".join(f"{e.record.id} ({e.record.name}: {_context_repo(e)})" for e in missing)
        msg = (f"env-setup tasks need the checkout each environment was built from, and it is gone for: "
               f"{names}. Rebuild those environments, leave them out with --id, or export --task template.")
        raise ExportError(msg)


def _values(entry: Entry, task: TaskKind, image: str, network: str = "public") -> dict[str, str]:
    spec = entry.spec
    required = [c.name for c in spec.plan.checks if c.required and c.kind != "tests"]
    return {"name": spec.source.name, "repo": repo_name(spec.source), "workdir": WORKDIR, "image": image,
            "revision": f"commit {spec.source.commit}" if spec.source.commit else "an uncommitted checkout",
            "python": spec.python or spec.plan.python, "test_command": entry.test_command,
            "network": "off" if network == "no-network" else "on", "checks": ", ".join(required) or "none",
            "format": format_version("harbor")}


def instruction(entry: Entry, task: TaskKind, network: str = "public") -> str:
    """The task statement shown to the agent."""
    values = _values(entry, task, entry.spec.image or "", network)
    return _template(f"instruction-{task}.md").substitute(values)


def _exports(env: dict[str, str]) -> str:
    return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()))


def test_script(entry: Entry, selection: list[str] | None = None, *, require_all: bool = False,
                command: str | None = None, env: dict[str, str] | None = None, prepare: str = "") -> str:
    """tests/test.sh: the required checks, then the test command (a runner that writes a JUnit report: with the
    selection and deselections).

    selection: the tests in tests/selected.txt (default: those that passed at verification, minus flaky ones).
    require_all: the reward is 1 when every selected test passes, else 0 (tasks), not the pass fraction.
    prepare: shell lines run in the workdir before the checks (tasks: put the task's test files back).
    """
    spec = entry.spec
    selected = entry.pass_to_pass if selection is None else selection
    log = "/logs/verifier/checks.log"
    checks = "\n".join(
        f"if ! bash -c {shlex.quote(c.command)} >> {log} 2>&1; then\n"
        f"  echo {shlex.quote('required check failed: ' + c.name)} >> {log}; checks_ok=0\nfi"
        for c in spec.plan.checks if c.required and c.kind != "tests")
    command = command or entry.test_command
    runner = abilities(spec.plan.test_runner)
    if runner.junit_report is not None:  # the scorer reads its JUnit report
        if selected and runner.select is not None:
            command = runner.select.command(command, "/tests/selected.txt", "/tests")
        command = f"{command} {runner.junit_report(spec.deselected, JUNIT)}"
    run = f"bash -c {shlex.quote(command)} > /logs/verifier/test-output.txt 2>&1\nstatus=$?"
    return _template("test.sh").substitute(_values(entry, "template", ""), env=_exports(spec.env if env is None else env),
                                           checks=checks, run_tests=run, prepare=prepare,
                                           score_flags=" --require-all" if require_all else "")


def solve_script(entry: Entry, task: TaskKind) -> str:
    """solution/solve.sh: nothing for templates; the recorded steps, in order, for env-setup."""
    steps = "\n".join(f"bash -c {shlex.quote(s.command)}" for s in entry.spec.steps)
    return _template(f"solve-{task}.sh").substitute(_values(entry, task, ""), env=_exports(entry.spec.env),
                                                    steps=steps, count=str(len(entry.spec.steps)))


def task_config(entry: Entry, task: TaskKind, image: str, *, network: str = "public",
                limits: Limits | None = None) -> dict[str, Any]:
    """The task.toml content, with harbor's field names (harbor.models.task.config.TaskConfig)."""
    spec, limits = entry.spec, limits or Limits()
    runs = spec.verification.runs if spec.verification else []
    test_s = max((r.duration_s for r in runs), default=0.0)
    checks = "\n".join(f"    {c.name}: {c.command}" for c in spec.plan.checks)
    environment: dict[str, Any] = {
        "build_timeout_sec": 600.0, "cpus": limits.cpus, "memory_mb": limits.memory_mb,
        "storage_mb": limits.disk_mb, "network_mode": network,
        "workdir": WORKDIR}
    if task == "template":
        environment["docker_image"] = image
    metadata: dict[str, Any] = {
        "autoinstall_format": format_version("harbor"), "autoinstall_id": entry.record.id, "task_kind": task,
        "repo": repo_name(spec.source), "commit": spec.source.commit or "", "revision": spec.source.revision,
        "image": image, "test_command": entry.test_command, "verification_checks": checks,
        "verification": verification_counts(spec)}
    if task == "env-setup":
        metadata["harbor"] = {"lint": {"ignore": ["shared-verifier"]}}
    config: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if task == "template":
        config["artifacts"] = [WORKDIR]
    suffix, goal = (("-template", "a template without a goal (its tests already pass)") if task == "template"
                    else ("-setup", "install it so its tests pass"))
    config |= {
        "task": {"name": f"autoinstall/{entry.slug}{suffix}",
                 "description": f"{spec.source.name}: {goal}",
                 "keywords": ["autoinstall", task]},
        "metadata": metadata,
        "verifier": {"timeout_sec": float(max(600, math.ceil(test_s * 10) + 120)),
                     "environment_mode": "separate" if task == "template" else "shared"},
        "agent": {"timeout_sec": float(1800 if task == "template"
                                       else max(1800, math.ceil(spec.timings.install_s * 4)))},
        "environment": environment}
    return config


def to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """TOML for nested dicts of strings, numbers, booleans and lists of those (all task.toml needs)."""
    scalars = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    text = "\n".join(scalars) + ("\n" if scalars else "")
    for key, value in data.items():
        if isinstance(value, dict):
            name = f"{prefix}.{key}" if prefix else key
            text += f"\n[{name}]\n" + to_toml(value, name)
    return text


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table (inside a list: Harbor's artifact entries)
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    msg = f"cannot write {value!r} to TOML"
    raise TypeError(msg)


def write_task(entry: Entry, task: TaskKind, image: str, dest: Path, network: str = "public") -> None:
    """Write one task directory at `dest` (built beside it, then moved into place)."""
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for sub in ("environment", "tests", "solution"):
        (tmp / sub).mkdir(parents=True)
    values = _values(entry, task, image)
    (tmp / "instruction.md").write_text(instruction(entry, task, network))
    (tmp / "task.toml").write_text(to_toml(task_config(entry, task, image, network=network)))
    (tmp / "environment" / "Dockerfile").write_text(_template(f"Dockerfile-{task}").substitute(values))
    (tmp / "tests" / "selected.txt").write_text("".join(t + "\n" for t in entry.pass_to_pass))
    for name, text in (select.files if (select := abilities(entry.spec.plan.test_runner).select) else {}).items():
        (tmp / "tests" / name).write_text(text)
    shutil.copy(TEMPLATES / SCORER, tmp / "tests" / SCORER)
    _script(tmp / "tests" / "test.sh", test_script(entry))
    _script(tmp / "solution" / "solve.sh", solve_script(entry, task))
    if task == "env-setup":
        context = _context_repo(entry).parent
        shutil.copytree(context / "repo", tmp / "environment" / "repo", symlinks=True)
        shutil.copytree(context / "autoinstall", tmp / "solution" / "autoinstall", symlinks=True)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def write(entries: list[Entry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """One task directory per environment under OUT; returns their names."""
    images = images_for(entries, options.task)
    names = []
    for entry, image in zip(entries, images, strict=True):
        name = f"{entry.slug}-template" if options.task == "template" else f"{entry.slug}-setup"
        write_task(entry, options.task, refs[image], out / name, options.network)
        names.append(name)
    return names
