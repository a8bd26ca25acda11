"""What the user ran in a debug shell, and which of it becomes install steps."""
from __future__ import annotations

import datetime as dt
import posixpath
import shlex
from pathlib import Path

from pydantic import BaseModel

from envs.spec import EnvSpec, Evidence, Step, StepLog

WORKDIR = "/workspace"
"""Where the debug shell starts: the environment's workspace."""
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


class Recorded(BaseModel):
    """One command the user ran in the debug shell."""

    command: str
    exit_code: int
    cwd: str = WORKDIR
    """The directory it started in."""


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
