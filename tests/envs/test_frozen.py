"""`DockerSandbox.frozen()` pauses the container while the host reads its files. Under load the cgroup freezer
can refuse ("unable to freeze"); the pause is tried again after a short wait instead of failing the caller."""
from __future__ import annotations

import docker.errors
import pytest
import requests

from envs.docker import DockerSandbox
from envs.docker import channel as channel_module
from envs.errors import EnvError


def _engine_error(text: str) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = 500
    return docker.errors.APIError("500 Server Error", response=response, explanation=text)


class FakeApi:
    """A container's engine API that refuses the first `refusals` pauses with `text`."""

    def __init__(self, refusals: int, text: str = "OCI runtime pause failed: unable to freeze: unknown") -> None:
        self.refusals, self.text = refusals, text
        self.calls: list[str] = []

    def pause(self, cid: str) -> None:
        self.calls.append("pause")
        if self.refusals:
            self.refusals -= 1
            raise _engine_error(self.text)

    def unpause(self, cid: str) -> None:
        self.calls.append("unpause")


class FakeClient:
    def __init__(self, api: FakeApi) -> None:
        self.api = api


def _sandbox(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> DockerSandbox:
    monkeypatch.setattr(channel_module.time, "sleep", lambda s: None)
    sb = DockerSandbox(image="unused")
    sb._client, sb._cid = FakeClient(api), "c0ffee"  # type: ignore[assignment]
    return sb


def test_a_pause_the_freezer_refuses_once_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi(refusals=1)
    with _sandbox(api, monkeypatch).frozen():
        assert api.calls == ["pause", "pause"]
    assert api.calls == ["pause", "pause", "unpause"]


def test_a_freezer_that_keeps_refusing_fails_with_the_engines_words(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi(refusals=100)
    with pytest.raises(EnvError, match="unable to freeze"), _sandbox(api, monkeypatch).frozen():
        pass
    assert api.calls == ["pause"] * (len(channel_module.PAUSE_BACKOFF_S) + 1)


def test_other_pause_failures_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi(refusals=1, text="container c0ffee is not running")
    with pytest.raises(EnvError, match="not running"), _sandbox(api, monkeypatch).frozen():
        pass
    assert api.calls == ["pause"]
