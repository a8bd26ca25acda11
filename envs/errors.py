"""The project's one error root, and the environments' infrastructure failures.

`UserFacingError` lives here, in the bottom layer, so that the builder (`AutoinstallError`), the environments
(`EnvError`) and the tools (`ToolServerError`) can all derive from it. A failing command is an ExecResult,
not one of these.
"""
from __future__ import annotations


class UserFacingError(Exception):
    """The root of every error a user sees: `cli.main()` prints its message as one red line and exits 2.

    The message is all the user gets (the traceback only with $AUTOINSTALL_DEBUG), so it must say what
    happened, naming the thing concerned (the repository, image, environment id, file), and what to do
    next: the flag to pass, the command to run, the value to change. Subclass the package's root
    (`AutoinstallError`, `EnvError`, `ToolServerError`) when the error is of its kind, and add the builtin a
    caller may catch it as (ValueError, TimeoutError, LookupError, ...). Anything else reaching the CLI is a
    bug and keeps its traceback (exit 1); tests/test_errors.py lists the few internal exceptions allowed.
    """


class EnvError(UserFacingError, RuntimeError):
    """The sandbox backend failed; the message says what to do next."""


class EngineUnavailableError(EnvError, ConnectionError):
    """No Docker engine answers."""


class EnvNotStartedError(EnvError):
    """A method that needs a running sandbox was called before start() or after stop()."""


class ImageBuildError(EnvError):
    """A base or environment image could not be built."""


class ImageNotFoundError(EnvError, LookupError):
    """The image asked for does not exist locally and cannot be pulled."""


class SandboxLimitError(EnvError):
    """The sandbox went past one of its limits (disk) and was stopped."""


class RegistryError(EnvError):
    """A container registry refused or could not be reached for a push or pull."""
