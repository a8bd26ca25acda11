"""The exceptions the CLI reports as one clear line (no traceback unless AUTOINSTALL_DEBUG is set)."""
from __future__ import annotations

from envs.errors import EnvError


def _user_errors() -> tuple[type[BaseException], ...]:
    from autoinstall.models.chat_client import ModelError
    from autoinstall.source import SourceError
    from envs.catalog import CatalogError

    return (EnvError, SourceError, ModelError, CatalogError)


USER_ERRORS = _user_errors()
