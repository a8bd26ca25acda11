"""The builder's exception root.

`AutoinstallError` is the builder's root (`SourceError`, `ModelError`, `DebugError` subclass it), as `EnvError`
(envs/errors.py) is the environments' and `ToolServerError` (tools/session.py) the tools'. All three derive
from `UserFacingError` (envs/errors.py), the one root `cli.main()` catches and reports as one line (exit 2);
anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

from envs.errors import UserFacingError


class AutoinstallError(UserFacingError):
    """The builder cannot do what was asked (repository, model endpoint, debug session); the message says
    what to do next."""
