"""Environment: reset, step, reward and close over one episode at a time, from threads or asyncio."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Self, TypeVar

from pydantic import BaseModel

from envs.base import LABEL, Sandbox
from envs.errors import EnvNotStartedError
from envs.runtime.backend import Episode, EpisodeBackend, Grader
from envs.runtime.docker_backend import DockerBackend
from envs.runtime.episode import executor
from envs.runtime.reward import Reward, run_reward, write_plugin
from envs.runtime.spec import RuntimeSpec
from envs.runtime.taskstate import apply_bug
from envs.task import Task
from tools.profiles import get_profile
from tools.session import DEFAULT_CALL_TIMEOUT_S, ToolSession

T = TypeVar("T")


class EnvironmentStateError(EnvNotStartedError):
    """A call that needs a running episode came before reset() or after close()."""


class Observation(BaseModel):
    """What one step gives back to the model."""

    output: str
    """The text the model reads."""
    is_error: bool = False
    """True when the call failed (unknown tool, bad arguments, tool error); output says why."""
    tool: str
    """The tool name as the model called it."""
    data: dict[str, Any] | None = None
    """Structured extras from the tool (exit code, matches, ...)."""
    duration_s: float = 0.0


class Environment:
    """One episode at a time of a verified environment: reset, step, reward, close."""

    def __init__(
        self,
        spec: RuntimeSpec,
        *,
        profile: str | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT_S,
        prestart: bool = False,
        labels: dict[str, str] | None = None,
        base_url: str | None = None,
        terminal: str = "persistent",
        in_place: bool = True,
        backend: EpisodeBackend | None = None,
    ) -> None:
        """Args:
            spec: what to start (see RuntimeSpec's constructors).
            profile: tool profile; default spec.profile.
            call_timeout: seconds a tool call may wait for its answer (terminal adds its own timeout).
            prestart: keep the next episode's container and tool server started in the background, so
                reset() only swaps them in (one idle container more per environment, ~10 MiB).
            labels: extra labels on the containers (e.g. to find them for cleanup).
            base_url: Docker engine address (default DOCKER_HOST or the local socket).
            terminal: "persistent" (one shell per episode: cd, variables, venvs, background jobs carry
                over) or "fresh" (a new shell per command).
            in_place: (the default) reset() keeps the container and brings it back to the image's state: every
                process but the tool server is killed (background jobs however detached, the persistent shell
                with its variables and cwd), /tmp and /dev/shm emptied, SysV IPC objects removed, and the files
                the episode changed (contents, modes, owners, mtimes, links, FIFOs, removed trees) copied back
                from a pristine container of the image (one per image, labels and process, shared, started at
                the first in-place reset, so an environment reset once never starts it;
                envs/runtime/restore.py; tests/envs/test_runtime_leaks.py). Needs a local overlay2 engine and
                root; else, or when a process or IPC object cannot be removed, reset() starts a fresh
                container as with False. Not reset: directories' link counts (overlayfs reports 1 for a
                directory both layers have), sizes on disk, extended attributes, POSIX message queues. False: a
                fresh container every episode (0.2-0.9 s under load instead of 0.04-0.23 s).
            backend: where episodes run (envs/runtime/backend.py); default Docker at `base_url`.

        Raises:
            UnknownProfileError: the profile does not exist.
        """
        self.spec = spec
        self.profile = get_profile(profile or spec.profile)
        self.call_timeout = call_timeout
        self.labels = {f"{LABEL}.runtime": "1", **(labels or {})}
        self.base_url = base_url
        self.terminal = terminal
        self._lock = threading.RLock()
        self.prestart = prestart
        self.backend: EpisodeBackend = backend or DockerBackend(base_url)
        self._sandbox: Sandbox | None = None
        self._session: ToolSession | None = None
        self._spare: Future[Episode] | None = None
        self._removing: list[Future[None]] = []
        self._closed = False
        self._episode = 0
        self._plugin_ready = False
        self._task: Task | None = None
        self._grader: Grader | None = None
        self.in_place = in_place
        self._pristine: Future[object | None] | None = None

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas of the tools, named as in the chosen profile."""
        return self.profile.schemas()

    @property
    def container_id(self) -> str | None:
        return self.backend.container_id(self._sandbox) if self._sandbox else None

    def reset(self, task: Task | None = None) -> dict[str, Any]:
        """Start a new episode from the image's state. By default (`in_place`) the running container is brought
        back to it (a fresh one when that fails, and for the first episode); with in_place=False, a fresh
        container from the image and its tool server, the previous episode's container removed in the
        background (close() waits for that). With a
        task (default spec.task), the episode starts from its bug state and reward() scores its tests
        (envs/runtime/taskstate.py).

        Returns:
            Info: tools (schemas), profile, workdir, image, container_id, episode, prestarted (the
            container was started ahead, see `prestart`), in_place (the container was reset in place), reset_s.

        Raises:
            EnvironmentStateError: the environment was closed.
            EnvError: the engine or image is unavailable, or the tool server did not start.
        """
        start = time.perf_counter()
        with self._lock:
            self._check_open()
            if self.in_place and self._pristine is None and self._sandbox is not None:  # first needed now
                self._pristine = executor().submit(self.backend.prepare_reset, self.spec, self.labels)
            spare = None
            restored = self.in_place and self._restore()
            if not restored:
                old = self._take()
                self._removing = [
                    f for f in self._removing if not f.done() or f.exception()
                ]  # keep errors for close
                if old is not None:
                    self._removing.append(executor().submit(self.backend.end, old))
                spare = self._take_spare()
                self._sandbox, self._session = spare or self._start_episode()
                if self.prestart:
                    self._spare = executor().submit(self._start_episode)
            sandbox, self._plugin_ready = self._sandbox, False
            assert sandbox is not None
            self._task = task or self.spec.task
            if self._task is not None:
                self._task_grader(self._task).prestart()
                apply_bug(sandbox, self._task, self.spec.workdir)
            self._episode += 1
            return {
                "tools": self.tools(),
                "profile": self.profile.name,
                "workdir": self.spec.workdir,
                "image": self.spec.image,
                "container_id": self.backend.container_id(sandbox),
                "episode": self._episode,
                "prestarted": spare is not None,
                "in_place": restored,
                "reset_s": time.perf_counter() - start,
            }

    def step(self, tool_name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """Run one tool call as the model made it.

        Args:
            tool_name: a tool name of the profile.
            arguments: its arguments, as a dict or the JSON text the model produced.

        Returns:
            The observation; the model's mistakes (unknown tool, bad arguments, failing tool) come
            back with is_error=True, never as exceptions.

        Raises:
            EnvironmentStateError: no episode is running (reset() not called, or closed).
        """
        session = self._running()[1]
        start = time.perf_counter()
        result = self.profile.call(session, tool_name, arguments)
        return Observation(
            output=result.output,
            is_error=result.is_error,
            tool=tool_name,
            data=result.data,
            duration_s=time.perf_counter() - start,
        )

    def reward(self, tests: list[str] | None = None, *, timeout_s: float | None = None) -> Reward:
        """Run the verification tests in the episode's container and score them; a task's episode is graded
        in a fresh container of the task's start image instead (envs/runtime/grade.py): only the agent's
        change to product code counts there, and the value is 1.0 when every FAIL_TO_PASS and PASS_TO_PASS
        test passes, else 0.0.

        Args:
            tests: test ids (pytest's: also files, classes) to run; None = the spec's `tests`; [] = all.
            timeout_s: seconds for the run (default spec.test_timeout_s).

        Returns:
            The pass fraction over the selection (a selected test that did not run counts as failed),
            or over all tests that ran, with per-test outcomes.

        Raises:
            EnvironmentStateError: no episode is running.
            ValueError: the spec has no test command, or a selection but the runner's run named no test.
        """
        sandbox = self._running()[0]
        if self._task is not None and tests is None:
            return self._task_grader(self._task).grade(sandbox, timeout_s)
        selection = self.spec.tests if tests is None else tests
        return run_reward(sandbox, self.spec, selection, timeout_s, lambda: self._install_plugin(sandbox))

    def wait_removed(self) -> None:
        """Wait until earlier episodes' containers are removed (reset() removes them in the background).

        Raises:
            EnvError: a container could not be removed.
        """
        with self._lock:
            removing = list(self._removing)
        for f in removing:
            f.result()

    def fork(self, *, copy: bool = True) -> Environment:
        """A new Environment whose episode starts with this episode's file system state, for branching
        rollouts and tree search: a fresh container of the image (the prestarted one when there is one; each
        fork starts the next one's in the background) into which the files this episode changed are copied
        on this host (envs/runtime/restore.py); where that cannot be done, a `docker commit` of this container
        and a container from that image (removed with it).
        Running processes (the shell, background jobs) and /tmp are not carried over; files that background
        jobs write meanwhile may be copied half-written. Its reset() starts episodes from the spec like this
        one's. `copy=False`: always the commit.

        Raises:
            EnvironmentStateError: no episode is running.
            EnvError: the engine failed to start (or commit) a container.
        """
        episode = self._running()  # not locked meanwhile: steps go on
        child = Environment(self.spec, profile=self.profile.name, call_timeout=self.call_timeout,
                            labels=self.labels, base_url=self.base_url, terminal=self.terminal,
                            in_place=self.in_place, backend=self.backend)
        fresh = None
        if copy and self.backend.can_copy(episode):
            with self._lock:
                fresh = self._take_spare()
                if not self._closed:  # the next fork's container (or the next reset's), started meanwhile
                    self._spare = executor().submit(self._start_episode)
            fresh = fresh or self._start_episode()
            if not self.backend.copy(episode, fresh):
                self.backend.end(fresh)
                fresh = None
        child._sandbox, child._session = fresh or self.backend.fork(episode, self.spec, self.labels,
                                                                    self.call_timeout, self.terminal)
        child._task, child._episode = self._task, 1
        return child

    def close(self) -> None:
        """Remove the episode's container (and the prestarted one) and end the tool session, waiting
        for earlier episodes' removals too. Idempotent; the environment cannot be reset afterwards.

        Raises:
            EnvError: a container could not be removed (the engine stopped answering).
        """
        with self._lock:
            self._closed = True
            try:
                self.backend.end(self._take())
                self.backend.end(self._take_spare())
                self._release_pristine()
                if self._grader is not None:
                    self._grader.close()
            finally:
                removing, self._removing = self._removing, []
                errors = [e for e in (f.exception() for f in removing) if e is not None]
            if errors:
                raise errors[0]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # asyncio
    async def areset(self, task: Task | None = None) -> dict[str, Any]:
        """reset() in a worker thread."""
        return await _in_thread(lambda: self.reset(task))

    async def astep(self, tool_name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """step() in a worker thread."""
        return await _in_thread(lambda: self.step(tool_name, arguments))

    async def areward(self, tests: list[str] | None = None, *, timeout_s: float | None = None) -> Reward:
        """reward() in a worker thread."""
        return await _in_thread(lambda: self.reward(tests, timeout_s=timeout_s))

    async def aclose(self) -> None:
        """close() in a worker thread."""
        await _in_thread(self.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # internals
    def _check_open(self) -> None:
        if self._closed:
            raise EnvironmentStateError("this Environment is closed; create a new one to start more episodes")

    def _running(self) -> tuple[Sandbox, ToolSession]:
        with self._lock:
            self._check_open()
            if self._sandbox is None or self._session is None:
                raise EnvironmentStateError("no episode is running: call reset() first")
            return self._sandbox, self._session

    def _install_plugin(self, sandbox: Sandbox) -> None:
        with self._lock:
            if not self._plugin_ready:
                write_plugin(sandbox, self.spec.test_runner)
                self._plugin_ready = True

    def _task_grader(self, task: Task) -> Grader:
        """The grader of `task`'s episodes (one at a time; UngradableTaskError without a grading record)."""
        with self._lock:
            if self._grader is None or self._grader.task is not task:
                if self._grader is not None:
                    self._grader.close()
                self._grader = self.backend.grader(task, self.spec, self.labels)
            return self._grader

    def _start_episode(self) -> Episode:
        return self.backend.start(self.spec, self.labels, self.call_timeout, self.terminal)

    def _restore(self) -> bool:
        """Reset the running episode in place; False when there is none or it could not be (see `in_place`)."""
        if self._sandbox is None or self._session is None or self._pristine is None:
            return False
        try:
            pristine = self._pristine.result()
        except Exception:  # the pristine container did not start: fresh containers then
            return False
        if pristine is None:
            return False
        return self.backend.reset_in_place((self._sandbox, self._session), pristine)

    def _release_pristine(self) -> None:
        pristine, self._pristine = self._pristine, None
        if pristine is not None and pristine.exception() is None and pristine.result() is not None:
            self.backend.release(self.spec, self.labels)

    def _take(self) -> Episode | None:
        """The running episode, which the caller now owns (it is no longer the environment's)."""
        episode = (self._sandbox, self._session) if self._sandbox and self._session else None
        self._sandbox = self._session = None
        return episode

    def _take_spare(self) -> Episode | None:
        """The prestarted episode, or None when there is none or it did not start or died."""
        spare, self._spare = self._spare, None
        if spare is None or spare.exception() is not None:
            return None
        episode = spare.result()
        if not episode[1].alive:
            self.backend.end(episode)
            return None
        return episode


async def _in_thread(fn: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(executor(), fn)


__all__ = ["Environment", "EnvironmentStateError", "Observation"]
