"""What the runtime needs from where its episodes run: `EpisodeBackend`, one protocol, so that `Environment`
programs to the Sandbox protocol only. docker_backend.py is the default (containers, in-place resets over
overlay2, forks by copying files or a commit, task grading in a fresh container of the task's start image);
a test passes another (tests/envs/runtime_fakes.py runs whole episodes on envs/fake.py's FakeSandbox).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from envs.base import Sandbox
from envs.runtime.reward import Reward
from envs.runtime.spec import RuntimeSpec
from envs.task import Task
from tools.session import ToolSession

Episode = tuple[Sandbox, ToolSession]
"""One episode: its started sandbox and the tool session over it."""


@runtime_checkable
class Grader(Protocol):
    """Grades one Environment's episodes of one task, in a sandbox the agent never touched."""

    task: Task

    def prestart(self) -> None:
        """Get the next grading sandbox ready in the background (at reset: a reward() then pays no start)."""

    def grade(self, agent: Sandbox, timeout_s: float | None = None) -> Reward:
        """The task's grade of the agent's workdir as it is now."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class EpisodeBackend(Protocol):
    """Starts, resets, forks and ends episodes, and makes their graders."""

    def start(self, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float, terminal: str) -> Episode:
        """A started sandbox from the spec's image and its tool session (the sandbox removed on failure)."""
        ...

    def end(self, episode: Episode | None) -> None:
        """Stop the episode's tool session and remove its sandbox (nothing for None)."""

    def container_id(self, sandbox: Sandbox) -> str | None:
        """The sandbox's container id, where it has one."""
        ...

    def prepare_reset(self, spec: RuntimeSpec, labels: dict[str, str]) -> object | None:
        """What resets in place need, made once per Environment (blocking; called in the background): the
        source of the image's state. None: this backend cannot reset in place (every reset starts afresh)."""
        ...

    def reset_in_place(self, episode: Episode, prepared: object) -> bool:
        """Bring the running episode back to the image's state; False when that could not be done fully (the
        caller then starts a fresh one)."""
        ...

    def release(self, spec: RuntimeSpec, labels: dict[str, str]) -> None:
        """The Environment is done with what prepare_reset made."""

    def can_copy(self, episode: Episode) -> bool:
        """True when `copy` can give a fresh episode this one's files (a fork without a snapshot)."""
        ...

    def copy(self, parent: Episode, fresh: Episode) -> bool:
        """Give `fresh` the file system of `parent`; False when a copy failed (the caller forks instead)."""
        ...

    def fork(self, episode: Episode, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float,
             terminal: str) -> Episode:
        """A new episode whose sandbox starts from a snapshot of `episode`'s (owned and removed with it)."""
        ...

    def grader(self, task: Task, spec: RuntimeSpec, labels: dict[str, str]) -> Grader:
        """The grader of `task`'s episodes (UngradableTaskError without a grading record)."""
        ...
