"""What each failed Node test printed, read from the failure details jest, mocha, vitest and ava print after
their listing (envs/grading/kit/parsers/node_details.py): the message the install loop reads its evidence in.
Before, every marked-line runner's failed test had an empty message, so no Node test that needed the internet,
a service or a browser build could ever be deselected with evidence; and ava's failed ids ran the failure's
summary on after the title (`reaches the internet Rejected promise returned by test`), so a test had one id
failing and another passing. The outputs are captured from jest 29, mocha 10, vitest 2 and ava 6 on Node 20
(tests/envs/data/node_reporters_failing.txt: each runner's `passes`, `reaches the internet`, `plain failure`)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.node.diagnosis import diagnose
from autoinstall.ecosystems.node.repairs import repair
from envs.spec import Plan, Step
from envs.testrun.node_output import parse_node_output

CAPTURED = (Path(__file__).parent / "data" / "node_reporters_failing.txt").read_text()
OUTPUTS = dict(zip(*[iter(re.split(r"^=== (\w+)\n", CAPTURED, flags=re.M)[1:])] * 2, strict=True))


@pytest.mark.parametrize("runner", ["JEST", "MOCHA", "VITEST", "AVA"])
def test_each_failed_test_carries_its_own_failure_details(runner: str) -> None:
    results = {r.test_id.rsplit(" > ", 1)[-1]: r for r in parse_node_output(OUTPUTS[runner])}
    assert set(results) == {"passes", "reaches the internet", "plain failure"}, sorted(results)
    assert results["passes"].outcome == "passed" and results["passes"].message == ""
    network, plain = results["reaches the internet"], results["plain failure"]
    assert network.outcome == plain.outcome == "failed"
    assert "getaddrinfo EAI_AGAIN example.invalid" in network.message
    assert "EAI_AGAIN" not in plain.message  # a block ends where the next test's begins
    assert re.search(r"1 !== 2|expected 1 to be 2|Expected: 2|- 1\n\+ 2", plain.message), plain.message


def test_avas_failed_id_is_the_title_it_has_when_it_passes() -> None:
    ids = [r.test_id for r in parse_node_output(OUTPUTS["AVA"])]
    assert ids == ["passes", "plain failure", "reaches the internet"]  # not "... Rejected promise returned by test"
    # two failed titles, one the other's prefix: each id keeps its own title and block
    output = ("  ✘ [fail]: foo bar\n  ✘ [fail]: foo Rejected promise returned by test\n  ─\n\n  foo bar\n\n"
              "  Error: first\n\n  foo\n\n  Error: second\n\n  ─\n\n  2 tests failed\n")
    found = {r.test_id: r.message for r in parse_node_output(output)}
    assert found == {"foo bar": "Error: first", "foo": "Error: second"}, found


@pytest.mark.parametrize("runner", ["JEST", "MOCHA", "VITEST", "AVA"])
def test_a_test_that_needs_the_internet_is_deselected_with_its_message_as_evidence(runner: str) -> None:
    output = OUTPUTS[runner]
    failed = [FailedTest(test_id=r.test_id, message=r.message) for r in parse_node_output(output)
              if r.outcome == "failed"]
    tests = Step(command="npm test", why="run the test suite")
    ctx = RepairContext(plan=Plan(ecosystem="node", python="3.13", steps=[], test_command="npm test"),
                        failing=tests, phase="tests", output=output, diagnosis=diagnose(output), python="3.13",
                        available_pythons=["3.13"], failed_tests=failed, test_ids=[f.test_id for f in failed])
    fix = repair(ctx)
    assert fix is not None and fix.kind == "deselect", (ctx.diagnosis, fix)
    assert [t.rsplit(" > ", 1)[-1] for t in fix.tests] == ["reaches the internet"]  # never the plain failure


@pytest.mark.slow
def test_a_hostile_output_is_read_in_one_pass() -> None:
    # before, each failed ava name was compared with every later line, and each failed result with every block:
    # 20,000 failures in an output that any test run can print took the square of that
    n = 20_000
    listing = "".join(f"  ✘ [fail]: t{i} Rejected promise returned by test\n" for i in range(n))
    details = "".join(f"  t{i}\n\n  Error: no {i}\n\n" for i in range(n))
    long_name = "  ✘ [fail]: " + "w " * 50_000 + "\n"
    results = parse_node_output(listing + long_name + "  ─\n\n" + details + "  ─\n")
    assert len(results) == n + 1
    assert results[0].test_id == "t0" and results[0].message == "Error: no 0"
    assert results[n - 1].test_id == f"t{n - 1}" and results[n - 1].message == f"Error: no {n - 1}"


def test_an_output_indented_deeper_each_line_names_no_test_under_more_than_the_deepest_suites() -> None:
    # each plain line one space deeper was a suite of every later line: 3,000 of them made ids of 600 KB, and the
    # marked lines below them copied the whole stack each (the grader reads up to 32 MiB of an agent's output)
    depth = 3_000
    suites = "".join(" " * i + f"suite {i:04d} " + "x" * 180 + "\n" for i in range(depth))
    marks = "".join(" " * depth + f"✔ test {i}\n" for i in range(200))
    results = parse_node_output(suites + marks)
    assert len(results) == 200
    assert max(len(r.test_id) for r in results) < 32 * 200
    assert results[0].test_id.startswith("suite 0000 ") and results[0].test_id.endswith(" > test 0")
