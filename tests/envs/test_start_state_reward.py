"""The runtime's reward of an episode that leaves nothing the grader takes (no change, or only changes it drops)
is the task's start state as its validation ran it: 0, FAIL_TO_PASS failed and PASS_TO_PASS passed (the pass
fraction a trainer shapes with is the same), no test run. A fix is still run and paid. The kit's rule itself:
tests/envs/grading/test_start_state.py.

On the run's one task of the Python fixture (tests/builds.py, the cheating agents' too). Needs Docker; fails
under CI when it is missing (the `builds` fixture)."""
from __future__ import annotations

import pytest

from envs.runtime import Environment, RuntimeSpec
from tests.adversarial.surfaces import FIXTURES, GOLD_IN_CONTAINER
from tests.builds import Builds

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def test_nothing_taken_is_graded_as_the_start_without_a_run_and_a_fix_still_runs(builds: Builds) -> None:
    built = builds.task(FIXTURES["python"])
    assert built.report.tasks, (built.report.candidates, built.report.dropped)
    task = built.report.tasks[0]
    assert task.grading is not None and task.grading.fail_at_start == task.FAIL_TO_PASS
    at_start = {**{t: "failed" for t in task.FAIL_TO_PASS}, **{t: "passed" for t in task.PASS_TO_PASS}}
    test_file = task.FAIL_TO_PASS[0].split("::")[0]
    with Environment(RuntimeSpec.from_task(task)) as env:
        env.reset(task)
        untouched = env.reward()
        # the task's test file made to pass whatever the product does: the task's own, dropped
        env.step("terminal", {"command": f"sed -i 's/assert /assert True or /' {test_file}"})
        dropped = env.reward()
        env.step("terminal", {"command": f"cat > {GOLD_IN_CONTAINER} <<'GOLD_EOF'\n{task.gold_patch}\nGOLD_EOF\n"
                                         f"git checkout -- {test_file} && git apply {GOLD_IN_CONTAINER}"})
        fixed = env.reward()
    for reward in (untouched, dropped):
        assert reward.value == 0.0
        assert {t.test_id: t.outcome for t in reward.tests} == at_start
        assert reward.duration_s == 0.0 and any("start state" in n for n in reward.notes), reward.notes
    assert [d.split(":")[0] for d in dropped.dropped] == [test_file], dropped.dropped
    assert fixed.value == 1.0 and fixed.duration_s > 0.0, (fixed.problems, fixed.output_tail)
    assert not any("start state" in n for n in fixed.notes)
