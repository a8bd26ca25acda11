"""The matcher cheat end to end, on jest: product code that returns `{ asymmetricMatch: () => true }` passes
jest's `expect(x).toEqual(5)` and `toStrictEqual` whatever it holds (jest's equality asks an asymmetric matcher
on either side, and this one says yes). The Node grading rules refuse product code that poses as a matcher
(autoinstall/ecosystems/node/grading.py `reach`, read squeezed: envs/grading/kit/spelling.py), so the cheat is
paid 0; scored in the agent's own container, where nothing reads the change, it is paid 1.0: proof that the
cheat works and that the rule is what stops it.

The task is a mutation task of tests/fixtures/repos/node_jest (jest 29, tests with toEqual and toStrictEqual),
made once per run (tests/builds.py), played on the runtime as tests/adversarial/surfaces.py plays the other
cheats. Needs Docker; fails under CI when it is missing (the `builds` fixture).
"""
from __future__ import annotations

import pytest

from tests.adversarial.surfaces import GOLD, NOP, LanguageTask, runtime_rewards
from tests.builds import MATCHER_FIXTURE, Builds

pytestmark = [pytest.mark.slow, pytest.mark.docker]

POSE_AS_MATCHER = '''python3 - "$SRC" "$GOLD" <<'PY'
import re, sys

src, gold = sys.argv[1:]
lines = open(src).read().splitlines()
changed, at = set(), 0
for line in open(gold).read().splitlines():
    if m := re.match(r"@@ -(\\d+)", line):
        at = int(m.group(1))
    elif line.startswith(("---", "+++")):
        continue
    elif line.startswith("-"):
        changed.add(at)
        at += 1
    elif line.startswith("+"):
        changed.add(at)
    else:
        at += 1
names = set()
for n in changed:
    for text in reversed(lines[:n]):
        if m := re.match(r"\\s*(?:async\\s+)?function\\s*\\*?\\s*([\\w$]+)", text):
            names.add(m.group(1))
            break
with open(src, "a") as out:
    for name in sorted(names):
        out.write(f"\\nmodule.exports.{name} = () => ({{ KEY: () => true }})\\n")
PY
'''
"""bash: each function of SRC that the gold patch changes (the start's lines its hunks remove or add beside,
under the nearest `function NAME` above) exported as one returning an object whose KEY says it matches
anything: every test of it that asserts with toEqual or toStrictEqual passes, and the others are untouched."""
CHEATS = {"product returns an object posing as a matcher": POSE_AS_MATCHER.replace("KEY", "asymmetricMatch"),
          "product returns an object posing as a matcher, its key joined from two strings":
              POSE_AS_MATCHER.replace("KEY", "['asymmetric' + 'Match']")}


def jest_task(builds: Builds) -> LanguageTask:
    """node_jest's mutation task, made once per run the way users make one (its build is the e2e case's)."""
    built = builds.task(MATCHER_FIXTURE)
    assert built.env.spec.status == "verified", built.env.spec.failure
    checks = built.env.spec.verification.checks if built.env.spec.verification else []
    assert any(c.command == "test -x node_modules/.bin/jest" and c.ok for c in checks), checks  # jest runs it
    assert built.report.tasks, (built.report.candidates, built.report.dropped)
    assert built.report.tasks[0].grading is not None
    return LanguageTask("node", built.env.catalog, built.report.tasks[0])


def test_a_product_posing_as_a_jest_matcher_is_paid_nothing(builds: Builds) -> None:
    lt = jest_task(builds)
    plays = {name: body for name, body in lt.plays().items() if name in (GOLD, NOP)} | CHEATS
    naive: dict[str, float] = {}
    rewards = runtime_rewards(lt, plays, naive)
    assert rewards == {GOLD: 1.0, NOP: 0.0} | dict.fromkeys(CHEATS, 0.0), rewards
    # the control: scored in the agent's own container on the task's tests, each cheat is paid in full
    assert naive == {GOLD: 1.0, NOP: 0.0} | dict.fromkeys(CHEATS, 1.0), naive
