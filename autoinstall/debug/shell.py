"""The debug container: a shell in a new container at an environment's last good state, and keeping what
the user ran there as new steps (snapshotted, verified again, replayed by the Dockerfile, catalogued).

Recording: the shell is bash with an rc file whose PROMPT_COMMAND appends, before every prompt, the exit
status, starting directory and text of the command just run to a NUL-separated log inside the container
(STATE_DIR, removed before the snapshot). It needs no cooperation from the user, works for `exit` and Ctrl-D
alike, and the log is read back with `docker exec cat` once the shell has gone.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
from pathlib import Path
from typing import Self

from autoinstall.debug.steps import WORKDIR, Recorded, parse_commands
from autoinstall.ecosystems.base import STUB_DIR
from autoinstall.errors import AutoinstallError
from envs.base import ExecResult, Limits, read_capped
from envs.docker import DockerSandbox, DockerSandboxConfig
from envs.home import cache_dir
from envs.spec import EnvSpec

STATE_DIR = "/var/tmp/autoinstall-debug"
"""Inside the debug container: rc file, command log and bash history. Not on /tmp: that is a tmpfs, which
`docker cp` cannot reach. Removed before the container is snapshotted."""
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


STUB_WHEEL_CAP = 1024 * 1024
"""Bytes of one stub wheel the host reads back (a stub is a few KiB: a module that raises on use)."""
MAX_STUB_WHEELS = 100


class DebugError(AutoinstallError, RuntimeError):
    """The environment cannot be debugged as asked; the message says what to do instead."""


def rc_script(state_dir: str = STATE_DIR, *, record: bool = True) -> str:
    """The bash rc file of the debug shell; with `record`, every command is logged under `state_dir`."""
    hook = "PROMPT_COMMAND=__ai_record" if record else ""
    return RC_SCRIPT.replace("__STATE__", state_dir).replace("__RECORD__", hook)



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
        env = self.sandbox.exec_env  # the sandbox's own (caches, proxies): given per exec, passed by name
        names = [arg for name in env for arg in ("-e", name)]
        return subprocess.run([docker, "exec", "-it", "-w", WORKDIR, *names, cid, *argv], check=False,
                              env=os.environ | env).returncode

    def run(self, command: str) -> ExecResult:
        """Run one command with bash in /workspace (no timeout; output capped like install steps)."""
        return self.sandbox.exec(["bash", "-c", command])

    def recorded(self) -> list[Recorded]:
        """What the user ran in the recording shell, in order."""
        result = self.sandbox.exec(["cat", f"{STATE_DIR}/commands"])
        return parse_commands(result.stdout) if result.ok else []

    def stub_wheels(self, spec: EnvSpec) -> dict[str, bytes]:
        """The stub wheels baked into the image (the replay context needs them): the regular `*.whl` files of
        STUB_DIR, each read up to STUB_WHEEL_CAP. What the container holds is the user's session's and the
        project's: a planted link, a huge file or a thousand wheels reach the host as none of those."""
        if not spec.stubs:
            return {}
        listed = self.sandbox.exec(["find", STUB_DIR, "-maxdepth", "1", "-type", "f", "-name", "*.whl",
                                    "-size", f"-{STUB_WHEEL_CAP // 1024 + 1}k"])
        wheels: dict[str, bytes] = {}
        for path in listed.stdout.splitlines()[:MAX_STUB_WHEELS] if listed.ok else []:
            data, cut = read_capped(self.sandbox, path, STUB_WHEEL_CAP)
            if not cut and posixpath.dirname(path) == STUB_DIR.rstrip("/"):
                wheels[posixpath.basename(path)] = data
        return wheels

    def snapshot(self) -> str:
        """Commit the container (its debug state directory removed first); returns the snapshot tag."""
        self.sandbox.exec(["rm", "-rf", STATE_DIR])
        return self.sandbox.snapshot("debug")
