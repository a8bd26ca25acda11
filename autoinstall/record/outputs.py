"""Where an environment's files go on the host, and writing/reading its spec.json."""
from __future__ import annotations

import json
import re
from pathlib import Path

from envs.home import autoinstall_home
from envs.spec import EnvSpec


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.") or "repo"


def env_tag(name: str, revision: str, model: str = "embedded") -> str:
    """`autoinstall-env/NAME:REVISION` (plus `-MODEL` for other models), lower-case as Docker requires.

    The model is part of the tag so that builds of one commit by two models never share an image.
    """
    repo = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._") or "repo"
    suffix = "" if model == "embedded" else "-" + re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-._")
    return f"autoinstall-env/{repo}:{(revision + suffix)[:128]}"


def default_env_dir(name: str, revision: str, model: str = "embedded") -> Path:
    """`~/.autoinstall/envs/NAME-REVISION` (plus `-MODEL` for models other than the embedded one)."""
    suffix = "" if model == "embedded" else "-" + slug(model)
    return autoinstall_home() / "envs" / f"{name}-{revision}{suffix}"


def spec_dir(spec: EnvSpec) -> Path:
    """The directory holding the spec's Dockerfile, context and logs."""
    return Path(spec.env_dir) if spec.env_dir else default_env_dir(slug(spec.source.name), spec.source.revision,
                                                                    spec.model)


def write_outputs(out: Path, spec: EnvSpec) -> None:
    """spec.json (atomically) and the Dockerfile."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "spec.json.tmp"
    tmp.write_text(spec.model_dump_json(indent=2))
    tmp.replace(out / "spec.json")
    if spec.dockerfile:
        (out / "Dockerfile").write_text(spec.dockerfile)


def load_spec(path: Path) -> EnvSpec:
    return EnvSpec.model_validate(json.loads(path.read_text()))
