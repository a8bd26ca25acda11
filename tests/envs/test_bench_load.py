"""bench/rollout.py's load on a real container of an image other than the one its figures were measured on: the
runtime tests' two-file project (test_runtime.py), whose longest file has 9 lines, where the load once stopped with
`read_file: start_line ... is past the end`."""

from __future__ import annotations

import pytest

from bench.mix import discover
from bench.rollout import Load
from bench.workers import drive
from envs.runtime import Environment, RuntimeSpec
from tests.envs.conftest import RUN_LABEL
from tests.envs.test_runtime import PROJECT, runtime_image  # noqa: F401  # the fixture, built once per session


@pytest.mark.docker
def test_the_rollout_load_runs_on_a_small_project(runtime_image: str) -> None:  # noqa: F811
    spec = RuntimeSpec(image=runtime_image, test_command="python -m pytest tests")
    envs = [Environment(spec, labels=RUN_LABEL) for _ in range(2)]
    try:
        for env in envs:
            env.reset()
        mix = discover(envs[0].step, "runtime-test")
        assert mix.path in PROJECT and mix.lines == PROJECT[mix.path].count("\n") < 50
        loads = [Load(env, mix) for env in envs]
        latencies, elapsed = drive(loads, 2.0, 0.0, procs=1, phase="staggered")  # asserts no call failed
        assert elapsed >= 2.0 and len(latencies) > 40
        assert {name for lo in loads for name in lo.by_tool} == {"read_file", "search", "edit_file", "terminal"}
    finally:
        for env in envs:
            env.close()
