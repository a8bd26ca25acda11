"""The full environment spec (autoinstall.spec.EnvSpec), one JSON line per environment."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from envs.export.common import Entry

if TYPE_CHECKING:
    from envs.export.common import ExportOptions

FILE = "envs.jsonl"


def write(entries: list[Entry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/envs.jsonl: each line is an EnvSpec (with `id`, the catalog id); `image` names the exported
    reference (the pushed one after --images push)."""
    lines = []
    for e in entries:
        spec = e.spec.model_copy(update={"image": refs[e.spec.image or ""]})
        lines.append(json.dumps({"id": e.record.id, **spec.model_dump(mode="json")}))
    (out / FILE).write_text("".join(line + "\n" for line in lines))
    return [FILE]
