"""Render the replayable Dockerfile of an environment and lay out its build context."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from string import Template

from envs.spec import Step
from envs.toolchain_record import ToolchainRecord

CONSTRAINTS = "/opt/autoinstall/constraints.txt"
"""Where the build context's constraints file lands in the image."""
TEMPLATE = Template((Path(__file__).parent / "templates" / "env.Dockerfile").read_text())


def _json_str(value: str) -> str:
    return json.dumps(value)


def _label(value: str) -> str:
    """`value` inside a LABEL's double quotes, on one line: quotes, backslashes and controls escaped, `$` not
    expanded (a REPO with a newline, a JSON line's or a folder's, would start an instruction of its own)."""
    return json.dumps(value, ensure_ascii=False)[1:-1].replace("$", "\\$")


def render_dockerfile(*, base_image: str, steps: list[Step], env: dict[str, str], name: str,
                      commit: str | None, source: str, pin_env: tuple[str, ...] = (),
                      toolchains: list[ToolchainRecord] | None = None) -> str:
    """A Dockerfile whose RUN lines are the successful steps, in order, each in bash.

    `pin_env`: the variables through which the ecosystem's installers read the constraints file.
    `toolchains`: named in a comment, where they come from (the host's are in the base image; a registry's are
    fetched by the steps under the recorded variables). A Debian suite's are installed again by their recipe on
    the image under their layer, when no host toolchain lies on top of it (envs/debian_layer.py).
    """
    base_image, layers = _replayed_layers(base_image, toolchains or [])
    pins = " ".join(f"{k}={CONSTRAINTS}" for k in pin_env)
    env_lines = "".join(f"# Toolchain: {t.name} {t.version} from the {t.origin}: {t.source}"
                        f"{f' (in the base image at {t.home})' if t.home else ''}\n" for t in toolchains or [])
    env_lines += (f"# Installed versions are pinned: the installers read these constraints for every step below.\n"
                  f"ENV {pins}\n" if pins else "")
    env_lines += "".join(f"ENV {k}={_json_str(v)}\n" for k, v in sorted(env.items()))
    runs = "\n".join(f"RUN [\"bash\", \"-c\", {_json_str(s.command)}]" for s in steps)
    return TEMPLATE.substitute(base_image=base_image, toolchain_layers=layers, env=env_lines, steps=runs, name=name,
                               commit=commit or "unknown", source=_label(source))


def _replayed_layers(base_image: str, toolchains: list[ToolchainRecord]) -> tuple[str, str]:
    """(the image the replay starts from, the Debian toolchains' recipes that follow it): the image under the
    first Debian layer and every recipe, when every layered toolchain is Debian's and recorded with its recipe;
    else `base_image` as it is (it carries them)."""
    layered = [t for t in toolchains if t.origin in ("host", "debian")]
    if not layered or any(t.origin != "debian" or not t.recipe or not t.base for t in layered):
        return base_image, ""
    return layered[0].base, "".join(f"# Debian {t.suite}'s {t.name} {t.version}: the layer under the steps\n"
                                    f"{t.recipe}\n" for t in layered)


def write_build_context(dest: Path, *, repo: Path, dockerfile: str, constraints: str,
                        stub_wheels: dict[str, bytes]) -> Path:
    """Lay out Dockerfile, repo/ and autoinstall/{constraints.txt,stubs/} under `dest`; returns dest."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(repo, dest / "repo", symlinks=True)
    (dest / "autoinstall" / "stubs").mkdir(parents=True)
    (dest / "autoinstall" / "constraints.txt").write_text(constraints)
    for name, data in stub_wheels.items():
        (dest / "autoinstall" / "stubs" / name).write_bytes(data)
    (dest / "Dockerfile").write_text(dockerfile)
    return dest
