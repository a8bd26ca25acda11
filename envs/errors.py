"""Infrastructure failures. A failing command is an ExecResult, not one of these."""
from __future__ import annotations


class EnvError(RuntimeError):
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
