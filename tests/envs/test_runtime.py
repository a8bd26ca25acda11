"""Environment against real containers: fresh episodes, tools, rewards, profiles, concurrency, asyncio."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from envs.runtime import Environment, EnvironmentStateError, RuntimeSpec, score, selects
from envs.spec import EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from tests.envs.conftest import RUN_LABEL, make_sandbox
from tools.profiles import UnknownProfileError

PROJECT = {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    ),
}
"""A two-test project: test_add passes, test_sub fails until sub() is fixed."""
ADD, SUB = "tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"


@pytest.fixture(scope="session")
def runtime_image(request: pytest.FixtureRequest, base_image: str) -> str:
    """The base image plus the project and pytest, snapshotted once per session (removed after it). Naming
    base_image marks its tests `docker` (tests/conftest.py): they are not in the fast tier."""
    from envs.home import cache_dir

    with make_sandbox(request, "docker", network=True, cache_dir=cache_dir()) as sb:
        for path, text in PROJECT.items():
            sb.write_file(path, text.encode())
        r = sb.exec("uv pip install --python /opt/venv/bin/python3 pytest", timeout=300)
        assert r.ok, r.output
        return sb.snapshot("runtime-test")


@pytest.fixture
def spec(runtime_image: str) -> RuntimeSpec:
    return RuntimeSpec(image=runtime_image, test_command="python -m pytest tests")


@pytest.fixture
def env(spec: RuntimeSpec) -> Iterator[Environment]:
    with Environment(spec, labels=RUN_LABEL) as e:
        yield e


def _containers(label: str) -> list[str]:
    """Ids of the containers, running or not, that carry autoinstall.test.env=label."""
    out = subprocess.run(
        ["docker", "ps", "-aq", "--no-trunc", "--filter", f"label=autoinstall.test.env={label}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


@pytest.mark.parametrize(("prestart", "in_place"), [(False, True), (True, True), (False, False), (True, False)])
def test_reset_starts_each_episode_from_the_image(spec: RuntimeSpec, prestart: bool, in_place: bool) -> None:
    label = uuid.uuid4().hex
    env = Environment(spec, prestart=prestart, in_place=in_place,
                      labels=RUN_LABEL | {"autoinstall.test.env": label})
    try:
        first = env.reset()
        assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "edit_file", "terminal"}
        assert first["workdir"] == "/workspace" and first["episode"] == 1 and not first["in_place"]
        if not prestart:  # no pristine container yet: an environment reset once (verl, mini-swe) never starts one
            assert len(_containers(label)) == 1
        assert not env.step("create_file", {"path": "scratch.txt", "content": "mine\n"}).is_error
        assert "mine" in env.step("read_file", {"path": "scratch.txt"}).output
        second = env.reset()
        assert second["episode"] == 2 and second["in_place"] == in_place  # in place is the default
        # a fresh container (the started-ahead one with prestart) only when not in place
        assert (second["container_id"] != first["container_id"]) == (not in_place)
        assert (first["prestarted"], second["prestarted"]) == (False, prestart and not in_place)
        gone = env.step("read_file", {"path": "scratch.txt"})
        assert gone.is_error and "scratch.txt" in gone.output
    finally:
        env.close()
    assert _containers(label) == []  # the episodes', the old ones', the prestarted and the pristine one


def test_steps_run_the_tools_and_report_model_mistakes(env: Environment) -> None:
    env.reset()
    assert "def add" in env.step("read_file", '{"path": "calc.py"}').output
    edited = env.step("edit_file", {"path": "calc.py", "old_str": "def add", "new_str": "def plus"})
    assert not edited.is_error and edited.tool == "edit_file"
    assert "calc.py" in env.step("search", {"pattern": "def plus"}).output
    term = env.step(
        "terminal",
        {"command": "echo $((6 * 7)); echo net=$(cat /sys/class/net/*/operstate 2>/dev/null | grep -c up)"},
    )
    assert "42" in term.output and "net=0" in term.output and term.data and term.data["exit_code"] == 0
    unknown = env.step("rm_rf", {})
    assert unknown.is_error and "read_file" in unknown.output
    assert env.step("read_file", "{not json").is_error
    missing = env.step("read_file", {"file": "calc.py"})
    assert missing.is_error and "path" in missing.output


def test_reward_over_all_tests_and_selections(env: Environment) -> None:
    env.reset()
    everything = env.reward()
    assert everything.value == 0.5 and (everything.passed, everything.total) == (1, 2)
    assert {t.test_id: t.outcome for t in everything.tests} == {ADD: "passed", SUB: "failed"}
    assert "assert" in next(t.message for t in everything.tests if t.test_id == SUB)
    only_add = env.reward([ADD])
    assert only_add.value == 1.0 and [t.test_id for t in only_add.tests] == [ADD]
    assert "1 deselected" in only_add.output_tail  # the run itself was narrowed, not just the score
    with_missing = env.reward([ADD, "tests/test_calc.py::test_nope"])
    assert with_missing.value == 0.5
    assert {t.test_id: t.outcome for t in with_missing.tests}["tests/test_calc.py::test_nope"] == "not_run"
    by_file = env.reward(["tests/test_calc.py"])
    assert (by_file.passed, by_file.total) == (1, 2)


def test_reward_after_fixing_the_failing_test(env: Environment) -> None:
    env.reset()
    fix = env.step(
        "edit_file",
        {
            "path": "calc.py",
            "old_str": "def sub(a, b):\n    return a + b",
            "new_str": "def sub(a, b):\n    return a - b",
        },
    )
    assert not fix.is_error, fix.output
    assert env.reward().value == 1.0
    env.reset()  # a new episode starts from the image again: the fix is gone
    assert env.reward([SUB]).value == 0.0


def test_episode_tools_use_the_socket_and_a_persistent_shell(env: Environment) -> None:
    env.reset()
    assert env._running()[1].transport == "socket"
    env.step("terminal", {"command": "cd tests && export MARK=7"})
    assert env.step("terminal", {"command": "echo $MARK $(basename $PWD)"}).output.startswith("7 tests\n")


def test_fork_copies_the_file_system_and_is_independent(spec: RuntimeSpec) -> None:
    label = uuid.uuid4().hex
    with Environment(spec, labels=RUN_LABEL | {"autoinstall.test.env": label}) as env:
        env.reset()
        assert not env.step("edit_file", {"path": "calc.py", "old_str": "def sub(a, b):\n    return a + b",
                                          "new_str": "def sub(a, b):\n    return a - b"}).is_error
        env.step("terminal", {"command": "echo outside > /opt/marker"})
        start = time.perf_counter()
        child = env.fork()
        fork_s = time.perf_counter() - start
        try:
            child_id = child.container_id
            assert child_id != env.container_id
            assert child.step("terminal", {"command": "cat /opt/marker"}).output.startswith("outside")
            assert child.reward().value == 1.0
            child.step("terminal", {"command": "echo child > only_in_child.txt"})
            assert env.step("read_file", {"path": "only_in_child.txt"}).is_error  # the branches are apart
            assert env.reward().value == 1.0
            image = subprocess.run(["docker", "inspect", "-f", "{{.Config.Image}}", child.container_id or ""],
                                   capture_output=True, text=True, check=True).stdout.strip()
        finally:
            child.close()
        assert child_id not in _containers(label)  # the fork's container is gone ...
        if image != spec.image:  # ... and so is its snapshot image, when it took a commit (not a copy)
            assert subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0
    assert fork_s < 10, fork_s


def test_default_selection_comes_from_the_spec(spec: RuntimeSpec) -> None:
    with Environment(spec.model_copy(update={"tests": [ADD]}), labels=RUN_LABEL) as env:
        env.reset()
        assert env.reward().value == 1.0
        assert env.reward([]).value == 0.5  # [] means every test


def test_anthropic_profile_maps_onto_our_tools(spec: RuntimeSpec) -> None:
    with Environment(spec, profile="anthropic", labels=RUN_LABEL) as env:
        names = [t["function"]["name"] for t in env.reset()["tools"]]
        assert names == ["bash", "str_replace_based_edit_tool"]
        view = env.step(
            "str_replace_editor", {"command": "view", "path": "/workspace/calc.py", "view_range": [5, -1]}
        )
        assert "def sub" in view.output and "def add" not in view.output
        created = env.step(
            "str_replace_based_edit_tool",
            {"command": "create", "path": "/workspace/new.py", "file_text": "x = 1\n"},
        )
        assert not created.is_error, created.output
        replaced = env.step(
            "str_replace_based_edit_tool",
            {"command": "str_replace", "path": "new.py", "old_str": "x = 1", "new_str": "x = 2"},
        )
        assert not replaced.is_error, replaced.output
        inserted = env.step(
            "str_replace_based_edit_tool",
            {"command": "insert", "path": "new.py", "insert_line": 0, "insert_text": "import os"},
        )
        assert not inserted.is_error, inserted.output
        assert env.step("bash", {"command": "cat new.py"}).output.startswith("import os\nx = 2\n")
        assert env.step("str_replace_based_edit_tool", {"command": "undo_edit", "path": "new.py"}).is_error


def test_cursor_profile_reads_line_ranges(spec: RuntimeSpec) -> None:
    with Environment(spec, profile="cursor", labels=RUN_LABEL) as env:
        env.reset()
        obs = env.step(
            "read_file",
            {"target_file": "calc.py", "start_line_one_indexed": 1, "end_line_one_indexed_inclusive": 2},
        )
        assert "def add" in obs.output and "def sub" not in obs.output
        assert (
            "test_calc.py"
            in env.step("grep_search", {"query": "def test_", "include_pattern": "*.py"}).output
        )
        assert env.step(
            "read_file", {"path": "calc.py"}
        ).is_error  # our name for the argument is not cursor's


def test_eight_environments_at_once_from_threads(spec: RuntimeSpec) -> None:
    envs = [Environment(spec, labels=RUN_LABEL) for _ in range(8)]
    errors: list[BaseException] = []
    seen: dict[int, str] = {}

    def episode(i: int) -> None:
        try:
            envs[i].reset()
            assert not envs[i].step("create_file", {"path": "who.txt", "content": f"env {i}\n"}).is_error
            for _ in range(20):
                seen[i] = envs[i].step("read_file", {"path": "who.txt"}).output
                assert f"env {i}" in seen[i]
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    try:
        threads = [threading.Thread(target=episode, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len({e.container_id for e in envs}) == 8
        assert all(f"env {i}" in seen[i] for i in range(8))
    finally:
        for e in envs:
            e.close()


def test_asyncio_api(spec: RuntimeSpec) -> None:
    async def rollout() -> list[float]:
        async with Environment(spec, labels=RUN_LABEL) as a, Environment(spec, labels=RUN_LABEL) as b:
            await asyncio.gather(a.areset(), b.areset())
            obs = await a.astep(
                "edit_file",
                {
                    "path": "calc.py",
                    "old_str": "def sub(a, b):\n    return a + b",
                    "new_str": "def sub(a, b):\n    return a - b",
                },
            )
            assert not obs.is_error, obs.output
            rewards = await asyncio.gather(a.areward(), b.areward())
            await a.aclose()
            with pytest.raises(EnvironmentStateError):
                await a.astep("read_file", {"path": "calc.py"})
            return [r.value for r in rewards]

    assert asyncio.run(rollout()) == [1.0, 0.5]


def test_errors_for_never_reset_and_closed_environments(spec: RuntimeSpec) -> None:
    env = Environment(spec, labels=RUN_LABEL)
    with pytest.raises(EnvironmentStateError, match="reset"):
        env.step("read_file", {"path": "calc.py"})
    with pytest.raises(EnvironmentStateError, match="reset"):
        env.reward()
    env.reset()
    env.close()
    env.close()  # idempotent
    for call in (lambda: env.step("read_file", {}), env.reward, env.reset):
        with pytest.raises(EnvironmentStateError, match="closed"):
            call()
    with pytest.raises(UnknownProfileError, match="anthropic, openhands, cursor"):
        Environment(spec, profile="gemini")
    with Environment(spec.model_copy(update={"test_command": None}), labels=RUN_LABEL) as no_tests:
        no_tests.reset()
        with pytest.raises(ValueError, match="no test command"):
            no_tests.reward()


# Specs and scoring, no containers.
def _env_spec(status: Literal["verified", "failed"] = "verified", image: str | None = "img:1") -> EnvSpec:
    run = TestRun(
        exit_code=1,
        results=[
            TestResult(test_id=ADD, outcome="passed"),
            TestResult(test_id=SUB, outcome="failed"),
            TestResult(test_id="t.py::flaky", outcome="passed"),
        ],
    )
    return EnvSpec(
        status=status,
        source=SourceRecord(repo="r", name="calc"),
        model="embedded",
        image=image,
        plan=Plan(test_command="pytest -q"),
        env={"A": "1"},
        verification=Verification(verified=True, runs=[run], flaky=["t.py::flaky"]),
    )


def test_spec_from_env_spec_and_spec_file(tmp_path: Path) -> None:
    spec = RuntimeSpec.from_env_spec(_env_spec())
    assert (spec.image, spec.test_command, spec.env, spec.tests) == ("img:1", "pytest -q", {"A": "1"}, [ADD])
    path = tmp_path / "spec.json"
    path.write_text(_env_spec().model_dump_json())
    assert RuntimeSpec.from_spec_file(path, profile="cursor").profile == "cursor"
    with pytest.raises(ValueError, match="not verified"):
        RuntimeSpec.from_env_spec(_env_spec(status="failed"))
    with pytest.raises(ValueError, match="no image"):
        RuntimeSpec.from_env_spec(_env_spec(image=None), allow_failed=True)


def test_spec_from_export_row() -> None:
    row = {
        "instance_id": "calc-1",
        "image_name": "img:2",
        "test_cmd": "pytest tests",
        "PASS_TO_PASS": f'["{ADD}"]',
        "FAIL_TO_PASS": [SUB],
        "repo": "r",
    }
    spec = RuntimeSpec.from_export_row(row)
    assert (spec.image, spec.test_command, spec.tests, spec.network) == (
        "img:2",
        "pytest tests",
        [ADD, SUB],
        False,
    )
    assert RuntimeSpec.from_export_row(row, tests="pass_to_pass").tests == [ADD]
    assert (
        RuntimeSpec.from_export_row(
            row | {"test_cmd": None, "test_command": "make test"}, tests="all"
        ).test_command
        == "make test"
    )
    with pytest.raises(ValueError, match="image_name"):
        RuntimeSpec.from_export_row({"PASS_TO_PASS": []})
    with pytest.raises(ValueError, match="PASS_TO_PASS"):
        RuntimeSpec.from_export_row(row | {"PASS_TO_PASS": "[1, 2]"})
    with pytest.raises(ValueError):
        RuntimeSpec.from_export_row(row | {"imagename": "typo"}, workdri="/x")


def test_selection_rule_and_scoring() -> None:
    assert selects("tests/a.py", "tests/a.py::T::t") and selects("tests", "tests/a.py::t")
    assert selects("tests/a.py::t", "tests/a.py::t[1]") and not selects("tests/a.py::t", "tests/a.py::t2")
    results = [
        TestResult(test_id="a.py::t", outcome="passed"),
        TestResult(test_id="a.py::s", outcome="skipped"),
        TestResult(test_id="a.py::e", outcome="error"),
    ]
    assert score(results, [])[:2] == (1, 2)  # skipped tests are left out of "all"
    passed, total, tests = score(results, ["a.py::t", "a.py::s", "a.py::t", "b.py::gone"])
    assert (passed, total) == (1, 3) and [t.outcome for t in tests] == ["passed", "skipped", "not_run"]
