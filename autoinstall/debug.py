"""`autoinstall debug`: a shell in a new container at an environment's last good state, and keeping what
the user ran there as new steps (snapshotted, verified again, replayed by the Dockerfile, catalogued).

Recording: the shell is bash with an rc file whose PROMPT_COMMAND appends, before every prompt, the exit
status, starting directory and text of the command just run to a NUL-separated log inside the container
(STATE_DIR, removed before the snapshot). It needs no cooperation from the user, works for `exit` and Ctrl-D
alike, and the log is read back with `docker exec cat` once the shell has gone.
"""
from __future__ import annotations

import datetime as dt
import posixpath
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Self

from pydantic import BaseModel

from autoinstall import images
from autoinstall.dockerfile import constraints_from_freeze, render_dockerfile, write_build_context
from autoinstall.paths import cache_dir
from autoinstall.plan import Evidence, Step
from autoinstall.spec import EnvSpec, Failure, StepLog
from autoinstall.stubs import STUB_DIR
from envs.base import ExecResult, Limits
from envs.catalog import Catalog, EnvRecord
from envs.docker import DockerSandbox, DockerSandboxConfig, image_labels
from envs.errors import EnvError

WORKDIR = "/workspace"
STATE_DIR = "/var/tmp/autoinstall-debug"
"""Inside the debug container: rc file, command log and bash history. Not on /tmp: that is a tmpfs, which
`docker cp` cannot reach. Removed before the container is snapshotted."""
RECORDED_WHY = "recorded in autoinstall debug"
NAVIGATION = frozenset({
    "cd", "pushd", "popd", "ls", "ll", "la", "dir", "tree", "pwd", "cat", "less", "more", "head", "tail",
    "bat", "vi", "vim", "nvim", "nano", "emacs", "view", "grep", "rg", "find", "file", "stat", "du", "df",
    "wc",
    "which", "type", "whereis", "man", "help", "history", "clear", "reset", "echo", "printf", "env",
    "printenv", "id", "whoami", "hostname", "date", "true", "exit", "logout", "pytest",
})
"""Commands that only look around (and `pytest`, which checks rather than sets up): never kept as steps,
unless they redirect output into a file."""
INSPECT = (("pip", "list"), ("pip", "show"), ("pip", "freeze"), ("pip", "check"), ("git", "status"),
           ("git", "log"), ("git", "diff"), ("git", "show"), ("python", "-m", "pytest"))
_CONTROL = {"&&", "||", ";", "|", "&", "(", ")", "\n"}

RC_SCRIPT = r"""# autoinstall debug: the rc file of this shell
[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc
[ -f ~/.bashrc ] && . ~/.bashrc
HISTFILE=__STATE__/bash_history
HISTSIZE=100000 HISTCONTROL= HISTIGNORE= HISTTIMEFORMAT=
PS1='(autoinstall debug) \w\$ '
__ai_last=init
__ai_pwd=$PWD
__ai_record() {
  local rc=$? entry num=
  entry=$(builtin history 1)
  [[ $entry =~ ^\ *([0-9]+)[\ *]\ (.*)$ ]] && num=${BASH_REMATCH[1]}
  if [[ $__ai_last != init && -n $num && $num != "$__ai_last" ]]; then
    printf '%s\0%s\0%s\0' "$rc" "$__ai_pwd" "${BASH_REMATCH[2]}" >> __STATE__/commands
  fi
  __ai_last=$num
  __ai_pwd=$PWD
  return $rc
}
__RECORD__
"""


class DebugError(RuntimeError):
    """The environment cannot be debugged as asked; the message says what to do instead."""


class Recorded(BaseModel):
    """One command the user ran in the debug shell."""

    command: str
    exit_code: int
    cwd: str = WORKDIR
    """The directory it started in."""


def rc_script(state_dir: str = STATE_DIR, *, record: bool = True) -> str:
    """The bash rc file of the debug shell; with `record`, every command is logged under `state_dir`."""
    hook = "PROMPT_COMMAND=__ai_record" if record else ""
    return RC_SCRIPT.replace("__STATE__", state_dir).replace("__RECORD__", hook)


def parse_commands(raw: str) -> list[Recorded]:
    """The command log written by the rc file: (exit status, directory, command) triples, NUL-separated."""
    fields = raw.split("\0")
    out = []
    for i in range(0, len(fields) - 2, 3):
        code, cwd, command = fields[i:i + 3]
        if code.strip().lstrip("-").isdigit() and command.strip():
            out.append(Recorded(command=command.strip(), exit_code=int(code), cwd=cwd or WORKDIR))
    return out


def _command_words(command: str) -> list[list[str]] | None:
    """The simple commands of a command line (as word lists), or None when it writes into a file."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    parts: list[list[str]] = [[]]
    for i, token in enumerate(tokens):
        target = tokens[i + 1] if i + 1 < len(tokens) else ""
        if ">" in token and (token.startswith(">") or token.endswith(">")):
            if not (token == ">&" or target == "/dev/null" or target.startswith("&")):
                return None
        elif token in _CONTROL or set(token) <= set("&|;()"):
            parts.append([])
        elif parts[-1] or "=" not in token.lstrip("="):
            parts[-1].append(token)
    return [p for p in parts if p]


def is_navigation(command: str) -> bool:
    """Whether a command only looks around (cd, ls, cat, an editor, `pip list`...): nothing to replay."""
    parts = _command_words(command)
    if not parts:
        return parts is not None
    for words in parts:
        head = [posixpath.basename(words[0]), *words[1:]]
        if head[0] in ("uv", "sudo") and len(head) > 1:
            head = head[1:]
        if head[0] not in NAVIGATION and not any(tuple(head[:len(p)]) == p for p in INSPECT):
            return False
    return True


def _export(command: str) -> dict[str, str] | None:
    """`export A=1 B=2` as {A: 1, B: 2}: environment for the image, not a step (None for anything else)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2 or words[0] != "export" or not all("=" in w and w[0] != "=" for w in words[1:]):
        return None
    if any(c in command for c in "$`;&|"):
        return None
    return dict(w.split("=", 1) for w in words[1:])


def keepable(recorded: Recorded) -> bool:
    """Whether a command is worth replaying: it succeeded and was not navigation."""
    return recorded.exit_code == 0 and not is_navigation(recorded.command)


def _history_entry(r: Recorded) -> str:
    """One command in the session log: a comment line, then the command (continuation lines marked `> `)."""
    command = r.command.replace("\n", "\n> ")
    return f"# exit {r.exit_code} in {r.cwd}\n$ {command}\n"


def to_steps(recorded: list[Recorded], evidence_file: str) -> tuple[list[Step], dict[str, str]]:
    """The keepable commands as new steps (run from /workspace, so a command started elsewhere gets a `cd`
    first) and the variables they export; evidence points at the command's line in write_history's log."""
    steps, env, line = [], {}, 0
    for r in recorded:
        first, line = line + 2, line + _history_entry(r).count("\n")
        if not keepable(r):
            continue
        exported = _export(r.command)
        if exported is not None:
            env.update(exported)
            continue
        command = r.command
        if r.cwd.rstrip("/") != WORKDIR:
            rel = posixpath.relpath(r.cwd, WORKDIR)
            where = r.cwd if rel.startswith("..") else rel
            command = f"cd {shlex.quote(where)} && {command}"
        steps.append(Step(command=command, why=RECORDED_WHY, kind="other",
                          evidence=[Evidence(file=evidence_file, line=first, text=r.command)]))
    return steps, env


# -- reading the record ---------------------------------------------------------------------------------
def load(catalog: Catalog, env_id: str) -> tuple[EnvRecord, EnvSpec | None]:
    """The record and its spec (None for builds that raised before writing one).

    Raises:
        CatalogError: unknown or ambiguous id (the message shows how to list ids).
    """
    record = catalog.get(env_id)
    return record, catalog.get_spec(record.id)


def failing_entry(spec: EnvSpec) -> StepLog | None:
    """The last command that failed during the build."""
    return next((e for e in reversed(spec.log) if e.exit_code != 0), None)


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def failing_output(env_dir: Path, spec: EnvSpec, lines: int = 40) -> str:
    """The tail of the failing command's log file, else the failure's evidence."""
    entry = failing_entry(spec)
    if entry is not None and entry.log_file and (env_dir / entry.log_file).is_file():
        return tail((env_dir / entry.log_file).read_text(errors="replace"), lines)
    return tail(spec.failure.evidence, lines) if spec.failure else ""


def start_image(record: EnvRecord, spec: EnvSpec | None) -> str:
    """The image a debug container starts from.

    Raises:
        DebugError: the build stopped before its first snapshot, so there is none.
    """
    image = spec.image if spec is not None else None
    if not image:
        why = record.failure_message or (spec.failure.message if spec and spec.failure else "")
        msg = (f"{record.id} has no image to open a shell in: the build stopped before its first snapshot"
               f"{f' ({why})' if why else ''}. Read the logs in {record.env_dir}/logs, fix the cause, and "
               f"build it again with `autoinstall run {record.repo}`.")
        raise DebugError(msg)
    return image


def check_present(record: EnvRecord, image: str) -> None:
    """Raise DebugError unless `image` is on the Docker engine (EngineUnavailableError: no engine)."""
    if image_labels(image) is None:
        msg = (f"The image {image} of {record.id} is no longer on this Docker engine (removed by "
               f"`docker rmi` or `catalog rm`?); build it again with `autoinstall run {record.repo}`.")
        raise DebugError(msg)


# -- the container --------------------------------------------------------------------------------------
class DebugShell:
    """A new container from an environment image: network on, install limits, host caches and CA bundle."""

    def __init__(self, image: str, *, env_id: str, limits: Limits | None = None) -> None:
        self.sandbox = DockerSandbox(DockerSandboxConfig(
            image=image, limits=limits or Limits(), network=True, cache_dir=cache_dir(),
            labels={"autoinstall.debug": env_id}))

    def __enter__(self) -> Self:
        self.sandbox.start()
        self.sandbox.write_file(f"{STATE_DIR}/rc.bash", rc_script().encode())
        return self

    def __exit__(self, *exc: object) -> None:
        self.sandbox.__exit__(*exc)

    def interactive(self, shell: str = "bash", *, record: bool = True) -> int:
        """Run a shell on this terminal (`docker exec -it`) until the user leaves; returns its exit status.

        Raises:
            DebugError: no docker CLI, or `record` with a shell other than bash.
        """
        docker = shutil.which("docker")
        if docker is None:
            msg = ("The interactive shell needs the docker CLI on PATH (`apt-get install -y docker.io`); "
                   "without it, run single commands with --command CMD.")
            raise DebugError(msg)
        if posixpath.basename(shell) == "bash":
            rc = f"{STATE_DIR}/rc.bash" if record else f"{STATE_DIR}/plain.bash"
            if not record:
                self.sandbox.write_file(rc, rc_script(record=False).encode())
            argv = [shell, "--rcfile", rc, "-i"]
        elif record:
            msg = "--record works with bash only (it reads bash's history); drop --record or use --shell bash"
            raise DebugError(msg)
        else:
            argv = [shell]
        cid = self.sandbox.container_id or ""
        return subprocess.run([docker, "exec", "-it", "-w", WORKDIR, cid, *argv], check=False).returncode

    def run(self, command: str) -> ExecResult:
        """Run one command with bash in /workspace (no timeout; output capped like install steps)."""
        return self.sandbox.exec(["bash", "-c", command])

    def recorded(self) -> list[Recorded]:
        """What the user ran in the recording shell, in order."""
        result = self.sandbox.exec(["cat", f"{STATE_DIR}/commands"])
        return parse_commands(result.stdout) if result.ok else []

    def stub_wheels(self, spec: EnvSpec) -> dict[str, bytes]:
        """The stub wheels baked into the image (the replay context needs them)."""
        if not spec.stubs:
            return {}
        with tempfile.TemporaryDirectory(prefix="autoinstall-stubs-") as tmp:
            self.sandbox.get(STUB_DIR, Path(tmp) / "stubs")
            return {p.name: p.read_bytes() for p in (Path(tmp) / "stubs").glob("*.whl")}

    def snapshot(self) -> str:
        """Commit the container (its debug state directory removed first); returns the snapshot tag."""
        self.sandbox.exec(["rm", "-rf", STATE_DIR])
        return self.sandbox.snapshot("debug")


# -- keeping the session --------------------------------------------------------------------------------
Report = Callable[[str], None]


def write_history(env_dir: Path, recorded: list[Recorded]) -> str:
    """The whole session (kept or not) as a log file; returns its path relative to env_dir."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    rel = f"logs/debug-{stamp}.log"
    (env_dir / "logs").mkdir(parents=True, exist_ok=True)
    (env_dir / rel).write_text("".join(_history_entry(r) for r in recorded))
    return rel


def add_steps(spec: EnvSpec, recorded: list[Recorded], history_file: str) -> EnvSpec:
    """A copy of the spec with the keepable commands appended as steps (and logged as successful commands)."""
    new = spec.model_copy(deep=True)
    steps, env = to_steps(recorded, history_file)
    new.env.update(env)
    for step in steps:
        new.steps.append(step)
        new.log.append(StepLog(index=len(new.log) + 1, phase="install", command=step.command, exit_code=0,
                               duration_s=0.0, log_file=history_file))
    return new


def reverify(spec: EnvSpec, env_dir: Path, snapshot: str, stub_wheels: dict[str, bytes],
             report: Report) -> EnvSpec:
    """Finalize the snapshot under the spec's tag, verify it offline in a fresh container, re-render the
    Dockerfile and build context, and write spec.json. Never raises for a failed verification: the spec says
    failed with the new reason, and keeps the steps."""
    from autoinstall.pipeline import BuildOptions, judge_spec, slug, verify_image, write_outputs
    from autoinstall.verify import DEFAULT_THRESHOLD

    name = slug(spec.source.name)
    tag = spec.image or images.env_tag(name, spec.source.revision, spec.model)
    report(f"saving the container as {tag}")
    try:
        spec.image = images.finalize(snapshot, tag, spec.env, source=spec.source.repo)
    except EnvError as e:
        msg = (f"Could not save the container as {tag} ({e}). Nothing is lost: the container is the image "
               f"{snapshot} (`docker run -it {snapshot} bash`) and your commands are in {env_dir}/logs; "
               "fix the engine and run `autoinstall debug --record` again.")
        raise DebugError(msg) from e
    images.discard([snapshot])
    threshold = spec.verification.threshold if spec.verification else DEFAULT_THRESHOLD
    spec.status, freeze = "failed", ""
    report("verifying in a fresh container, network off")
    try:
        freeze, verification = verify_image(spec, BuildOptions(threshold=threshold))
    except EnvError as e:
        spec.verification = None
        spec.failure = Failure(failure_class="infrastructure", message=f"verification could not run: {e}")
    else:
        spec.verification = verification
        judge_spec(spec, verification)
    spec.dockerfile = render_dockerfile(base_image=spec.base_image or "", steps=spec.steps, env=spec.env,
                                        name=name, commit=spec.source.commit, source=spec.source.repo)
    problem = _write_context(spec, env_dir, constraints_from_freeze(freeze, spec.source.name), stub_wheels)
    if problem:
        report(f"warning: {problem}")
    spec.env_dir = spec.env_dir or str(env_dir)
    write_outputs(env_dir, spec)
    return spec


def _write_context(spec: EnvSpec, env_dir: Path, constraints: str, stub_wheels: dict[str, bytes]) -> str:
    """Rewrite env_dir/context for the new Dockerfile; returns a warning, or "" when written."""
    from autoinstall.source import SourceError, prepare_source

    with tempfile.TemporaryDirectory(prefix="autoinstall-debug-src-") as scratch:
        repo = Path(scratch) / "repo"
        existing = env_dir / "context" / "repo"
        try:
            if existing.is_dir():
                shutil.copytree(existing, repo, symlinks=True)
            else:
                prepare_source(spec.source.repo, spec.source.commit, repo)
        except (SourceError, OSError) as e:
            return (f"the Dockerfile is updated but its build context is not ({e}); the image itself is "
                    "complete")
        write_build_context(env_dir / "context", repo=repo, dockerfile=spec.dockerfile or "",
                            constraints=constraints, stub_wheels=stub_wheels)
    return ""


def record_result(catalog: Catalog, record: EnvRecord, spec: EnvSpec) -> EnvRecord:
    """Update the catalog record from the new spec."""
    return catalog.upsert_spec(spec, Path(record.env_dir), requested_commit=record.requested_commit)
