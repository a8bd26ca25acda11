"""The builder's exception root, and the three roots the CLI reports as one line (exit 2).

`AutoinstallError` is the builder's root (`SourceError`, `ModelError`, `DebugError` subclass it); `EnvError`
(envs/errors.py) is the environments' root (sandboxes, base images, the catalog, exports); `ToolServerError`
(tools/session.py) is the tool server's. `cli.main()` catches these three once; anything else is a bug and
keeps its traceback.
"""
from __future__ import annotations


class AutoinstallError(Exception):
    """The builder cannot do what was asked (repository, model endpoint, debug session); the message says
    what to do next."""


def error_roots() -> tuple[type[Exception], ...]:
    """(AutoinstallError, EnvError, ToolServerError): the errors a user gets as one line, not a traceback."""
    # Imported on demand: envs and tools load pydantic, which `autoinstall --help` does not need.
    from envs.errors import EnvError
    from tools.session import ToolServerError

    return (AutoinstallError, EnvError, ToolServerError)
