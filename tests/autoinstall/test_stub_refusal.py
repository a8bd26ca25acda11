"""A stub only for a name the package index does not have, whoever asks (issue 9, bad input: a stub requested
for a distribution that exists). The index is answered by a monkeypatch: no network."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.install import InstallResult
from autoinstall.install.loop import Installer
from envs.base import ExecResult
from envs.spec import Repair
from tests.autoinstall.test_install_loop import OK, PASSING, PLAN, World

CONFLICT = ExecResult(exit_code=1, stderr="ERROR: No matching distribution found for requests>=99")


class Stubber:
    """A chat model that answers every install failure with a stub for `requests`."""

    name = "openai:stubber"

    def repair(self, ctx: object) -> Repair:
        return Repair(kind="stub_distribution", distribution="requests", import_name="requests",
                      reason="requests cannot be installed")


def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
    if cmd.startswith("uv pip install -e"):
        stubbed = any(k.startswith("/opt/autoinstall/stubs/requests") for k in sb.files)
        return OK if stubbed else CONFLICT
    return PASSING if "pytest" in cmd else OK


def build(monkeypatch: pytest.MonkeyPatch, answer: bool | None) -> InstallResult:
    monkeypatch.setattr("autoinstall.ecosystems.python.index.on_index", lambda name: answer)
    installer = Installer(PLAN, Path(__file__).parent, Stubber(), lambda python: World(python, behaviour))
    return installer.run()


@pytest.mark.parametrize(("answer", "says"), [(True, "has it"), (None, "could not say whether it has it")])
def test_a_stub_for_a_distribution_the_index_has_or_cannot_answer_for_is_refused(
        monkeypatch: pytest.MonkeyPatch, answer: bool | None, says: str) -> None:
    result = build(monkeypatch, answer)
    assert result.stubs == [] and not result.stub_wheels
    assert result.failure is not None and result.failure.failure_class == "model_error"
    assert "a stub for requests was asked for, but the package index (" in result.failure.message
    assert says in result.failure.message


def test_a_name_the_index_answers_404_for_is_stubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    result = build(monkeypatch, False)
    assert result.ok, result.failure
    assert [s.distribution for s in result.stubs] == ["requests"]
