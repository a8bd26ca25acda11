"""The full environment spec (autoinstall.spec.EnvSpec), one JSON line per environment."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from envs.export.common import Entry, repo_name, verification_counts

if TYPE_CHECKING:
    from envs.export.common import ExportOptions

FILE = "envs.jsonl"


def write(entries: list[Entry], out: Path, refs: dict[str, str], options: ExportOptions) -> list[str]:
    """OUT/envs.jsonl: each line is an EnvSpec (with `id`, the catalog id, and `counts`, what verification
    counted as every format's metadata has it: `verification_counts`); `image` names the exported
    reference (the pushed one after --images push). No host path: `env_dir` is left out and `source.repo` is
    the repository's owner/name (or URL, or name), as in every export."""
    lines = []
    for e in entries:
        source = e.spec.source.model_copy(update={"repo": repo_name(e.spec.source)})
        spec = e.spec.model_copy(update={"image": refs[e.spec.image or ""], "env_dir": None, "source": source})
        lines.append(json.dumps({"id": e.record.id, "counts": verification_counts(e.spec),
                                 **spec.model_dump(mode="json")}))
    (out / FILE).write_text("".join(line + "\n" for line in lines))
    return [FILE]
