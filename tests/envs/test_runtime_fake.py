"""Whole runtime episodes on FakeSandbox through an EpisodeBackend (tests/envs/runtime_fakes.py): reset, every
tool, the reward of the gold patch, of doing nothing and of a cheat, and fork. No Docker; each runs in well
under a second."""
from __future__ import annotations

import pytest

from envs.runtime import Environment, RuntimeSpec
from envs.runtime.backend import EpisodeBackend
from tests.envs.runtime_fakes import FakeBackend
from tests.envs.task_env import BUGGY, F2P, P2P, PROJECT, SOLVED, make_task

IMAGE = "fake-calc"
TEST_FILE = "tests/test_calc.py"
CHEAT = PROJECT[TEST_FILE].replace("assert sub(5, 3) == 2", "assert True")


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend(PROJECT)


def task_env(backend: FakeBackend) -> Environment:
    spec = RuntimeSpec.from_task(make_task("env1", IMAGE))
    return Environment(spec, backend=backend)


def test_the_fake_backend_is_an_episode_backend(backend: FakeBackend) -> None:
    assert isinstance(backend, EpisodeBackend)


def test_reset_starts_from_the_image_and_then_resets_in_place(backend: FakeBackend) -> None:
    with Environment(RuntimeSpec(image=IMAGE, test_command="python -m pytest tests"), backend=backend) as env:
        first = env.reset()
        assert (first["episode"], first["in_place"], first["container_id"]) == (1, False, "fake-0")
        env.step("create_file", {"path": "scratch.txt", "content": "left over\n"})
        second = env.reset()
        assert second["in_place"] and second["container_id"] == "fake-0"
        assert env.step("read_file", {"path": "scratch.txt"}).is_error
        assert len(backend.started) == 1


def test_every_tool_runs_over_the_sandbox(backend: FakeBackend) -> None:
    with Environment(RuntimeSpec(image=IMAGE, test_command="python -m pytest tests"), backend=backend) as env:
        env.reset()
        sandbox = backend.started[0]
        assert "return a - b" in env.step("read_file", {"path": "calc.py"}).output
        edited = env.step("edit_file", {"path": "calc.py", "old_str": "a - b", "new_str": "b - a"})
        assert not edited.is_error and b"return b - a" in sandbox.files["/workspace/calc.py"]
        assert not env.step("create_file", {"path": "notes/todo.md", "content": "x\n"}).is_error
        assert sandbox.files["/workspace/notes/todo.md"] == b"x\n"
        assert "calc.py" in env.step("search", {"pattern": "def sub"}).output
        broken = env.step("create_file", {"path": "bad.py", "content": "def f(:\n"}).output
        assert "syntax error" in broken
        assert env.step("lint", {"path": "bad.py"}).data
        sandbox.add_rule(r"^echo hi$", "hi\n")
        ran = env.step("terminal", {"command": "echo hi"})
        assert ran.output == "hi\n[exit code 0]" and "echo hi" in sandbox.commands()
        assert env.step("no_such_tool", {}).is_error
        assert env.step("read_file", {"path": "../../etc/passwd"}).is_error


def test_the_gold_patch_earns_1_and_doing_nothing_0(backend: FakeBackend) -> None:
    with task_env(backend) as env:
        env.reset()
        assert backend.started[0].files["/workspace/calc.py"] == BUGGY.encode()  # the task's bug state
        nop = env.reward()
        assert nop.value == 0.0 and {t.test_id: t.outcome for t in nop.tests} == {F2P[0]: "failed", P2P[0]: "passed"}
        env.step("create_file", {"path": "calc.py", "content": SOLVED, "overwrite": True})
        gold = env.reward()
        assert gold.value == 1.0 and gold.passed == 2 and not gold.dropped


def test_a_cheat_that_rewrites_the_failing_test_earns_0(backend: FakeBackend) -> None:
    with task_env(backend) as env:
        env.reset()
        env.step("create_file", {"path": TEST_FILE, "content": CHEAT, "overwrite": True})
        assert env.reward(tests=[]).value == 1.0  # the episode's own container believes the cheat...
        cheat = env.reward()  # ...the task's grader does not: the test file is the task's
        assert cheat.value == 0.0 and any(d.startswith(TEST_FILE) for d in cheat.dropped)
        assert backend.started[-1] is not backend.started[0]  # graded in a sandbox the agent never touched


def test_fork_carries_the_files_and_is_independent(backend: FakeBackend) -> None:
    with task_env(backend) as env:
        env.reset()
        env.step("create_file", {"path": "calc.py", "content": SOLVED, "overwrite": True})
        with env.fork() as child:
            assert "return a - b" in child.step("read_file", {"path": "calc.py"}).output
            child.step("create_file", {"path": "calc.py", "content": BUGGY, "overwrite": True})
            assert child.reward().value == 0.0
            assert env.reward().value == 1.0


def test_a_grader_that_writes_no_results_grades_0_with_what_it_said(backend: FakeBackend,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.envs.runtime_fakes as fakes
    from envs.base import ExecResult
    from envs.runtime.grade import LOG

    def crashing(sandbox, command: str, env: dict[str, str]) -> ExecResult | None:  # noqa: ANN001
        if "--agent" in command:  # the grader and the read of its results: it died before writing any
            return ExecResult(exit_code=1)
        if command == f"tail -c 500 {LOG}":
            return ExecResult(exit_code=0, stdout="Traceback: the grader broke\n")
        return original(sandbox, command, env)

    original = fakes.behaviour
    monkeypatch.setattr(fakes, "behaviour", crashing)
    with task_env(backend) as env:
        env.reset()
        env.step("create_file", {"path": "calc.py", "content": SOLVED, "overwrite": True})
        broken = env.reward()
    assert broken.value == 0.0 and broken.problems == ["the grader wrote no results: Traceback: the grader broke\n"]
