"""Prior models: `protocol.py` (the PriorModel protocol), `embedded.py` (the ecosystems' rules, the default).

Pick one with `get_model("embedded")` or `get_model("openai:NAME", base_url=URL)` (`chat.py`).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from autoinstall.plan.models.chat import ChatModel
from autoinstall.plan.models.chat_client import ModelError
from autoinstall.plan.models.embedded import EmbeddedModel
from autoinstall.plan.models.protocol import PriorModel

CHOICES = ("embedded", "openai:NAME")


def get_model(spec: str = "embedded", **kwargs: Any) -> PriorModel:
    """The model for a spec: `embedded` (default) or `openai:NAME`.

    Options whose value is None are ignored, so callers can pass `base_url=None` to any model.

    Raises:
        ModelError: the spec is unknown, that model is not available yet, or an option does not apply.
    """
    spec = (spec or "embedded").strip()
    options = {k: v for k, v in kwargs.items() if v is not None}
    if spec == "embedded":
        try:
            return EmbeddedModel(**options)
        except ValidationError as e:
            names = ", ".join(str(err["loc"][0]) for err in e.errors() if err["loc"])
            msg = f"the embedded model takes no option {names} (--base-url is for openai:NAME models)"
            raise ModelError(msg) from e
    if spec.startswith("openai:"):
        name = spec.removeprefix("openai:").strip()
        base_url = options.pop("base_url", None) or os.environ.get("OPENAI_BASE_URL")
        if not name or not base_url:
            msg = (f"model {spec!r} needs a model name and an endpoint: --model openai:NAME --base-url URL "
                   "(or set OPENAI_BASE_URL)")
            raise ModelError(msg)
        return ChatModel(name, base_url, **options)
    msg = f"unknown model {spec!r}; choose one of: {', '.join(CHOICES)}"
    raise ModelError(msg)


__all__ = ["CHOICES", "ModelError", "PriorModel", "get_model"]
