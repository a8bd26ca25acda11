"""The exceptions the CLI reports as one clear line (no traceback unless AUTOINSTALL_DEBUG is set)."""
from __future__ import annotations


def user_errors() -> tuple[type[BaseException], ...]:
    """Imported on demand, so that `autoinstall --help` does not load git, sqlite and pydantic models."""
    from autoinstall.plan.models.chat_client import ModelError
    from autoinstall.source.checkout import SourceError
    from envs.catalog import CatalogError
    from envs.errors import EnvError

    return (EnvError, SourceError, ModelError, CatalogError)
