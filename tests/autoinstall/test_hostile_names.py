"""Strangers' strings stay where they are put: a REPO (a batch file's JSON line, a folder's name) with a newline,
quotes, `$` or a trailing backslash is one label value in the replay Dockerfile, never an instruction of its
own; a chat model's (a repository's prompt can steer it) variable name is a variable name."""
from __future__ import annotations

import pytest

from autoinstall.plan.models.chat import _repair_from_args
from autoinstall.record.dockerfile import render_dockerfile
from envs.spec import Step

HOSTILE_SOURCES = ["/srv/repos/evil\nRUN touch /pwned\nLABEL x=\"", "/srv/a\"b $(id) ${HOME} \\", "/srv/x\r\nUSER root",
                   "https://example.invalid/o/r\\\nRUN id"]
INSTRUCTIONS = ["FROM", "COPY", "COPY", "WORKDIR", "RUN", "LABEL"]
"""What the replay Dockerfile of one step holds, in order."""


@pytest.mark.parametrize("source", HOSTILE_SOURCES)
def test_a_repo_string_is_one_label_value_in_the_replay_dockerfile(source: str) -> None:
    dockerfile = render_dockerfile(base_image="python:3.12-slim", steps=[Step(command="pip install .", why="x")],
                                   env={}, name="evil", commit=None, source=source)
    lines = [ln for ln in dockerfile.splitlines() if ln.strip() and not ln.startswith("#")]
    assert [ln.split()[0] for ln in lines] == INSTRUCTIONS, dockerfile
    label = lines[-1]
    assert not label.endswith("\\") and "\r" not in label
    value = label.split('autoinstall.source="', 1)[1].rsplit('" autoinstall.commit=', 1)[0]
    assert '"' not in value.replace('\\"', "") and "$" not in value.replace("\\$", ""), value


@pytest.mark.parametrize("name", ["A\nRUN id", "X=1", "PATH Y", "1X", "-e"])
def test_a_chat_models_variable_name_must_be_one(name: str) -> None:
    with pytest.raises(ValueError, match="is not a variable name"):
        _repair_from_args({"kind": "set_env", "reason": "r", "env_name": name, "env_value": "1"}, ["3.11"])
    assert _repair_from_args({"kind": "set_env", "reason": "r", "env_name": "PIP_NO_CACHE_DIR", "env_value": "1"},
                             ["3.11"]).env == {"PIP_NO_CACHE_DIR": "1"}
