"""Commands of a project in a folder of the checkout (a monorepo's package: autoinstall/ecosystems/nested.py
prefixes them with `cd FOLDER && `): the folder split off again, and a sandbox whose commands run there."""
from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from envs.base import DEFAULT_OUTPUT_CAP, ExecResult, Sandbox

_CD = re.compile(r"^\s*cd\s+((?:'[^']*'|[^\s;&|'])+)\s*&&\s*(?P<rest>\S.*)$", re.DOTALL)


def split_folder(command: str) -> tuple[str | None, str]:
    """("packages/core", "npm test") for "cd packages/core && npm test"; (None, command) without the prefix."""
    m = _CD.match(command)
    if m is None:
        return None, command
    try:
        (folder,) = shlex.split(m.group(1))
    except ValueError:
        return None, command
    return folder, m.group("rest")


class InFolder:
    """A sandbox whose commands run in `root` (relative to its workdir) unless they name a cwd of their own:
    for the inner ecosystem's freeze, which reads its lock file where it runs (`cat package-lock.json`), and for
    the Node runner, which reads the folder's package.json and moves deselected files aside there."""

    def __init__(self, sandbox: Sandbox, root: str) -> None:
        self._sandbox, self._root = sandbox, root

    def exec(self, cmd: str | Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None, output_cap: int = DEFAULT_OUTPUT_CAP) -> ExecResult:
        where = posixpath.normpath(posixpath.join(self._root, cwd or "."))  # an absolute cwd stays as it is
        return self._sandbox.exec(cmd, cwd=where, env=env, timeout=timeout, output_cap=output_cap)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._sandbox, attr)


__all__ = ["InFolder", "split_folder"]
