"""Statement styles without Docker: the leak check, the symptoms read from failing tests in five languages,
the issue and terse templates, and the chat model writing them against a real loopback HTTP server."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.plan.models.chat_client import ModelError
from autoinstall.plan.models.replay_server import ReplayServer, tool_call
from autoinstall.tasks import leaks, prose
from autoinstall.tasks.candidate import mutation_candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.statement_model import statement_writer
from autoinstall.tasks.statements import StatementInput, write_statements
from autoinstall.tasks.symptoms import symptom
from envs.task import MutationInfo

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "tasks_mutable"
SOURCE = "ranges/__init__.py"
TESTS = "tests/test_ranges.py"
HIGH = f"{TESTS}::test_clamp_high"
GUARD = "    if value > high:\n        return high\n"
PYTEST_MESSAGE = ("assert 12 == 10\n +  where 12 = clamp(12, 0, 10)\n\n    def test_clamp_high():\n"
                  ">       assert clamp(12, 0, 10) == 10\nE       assert 12 == 10\n")


@pytest.fixture(scope="module")
def index() -> CodeIndex:
    return CodeIndex.build({SOURCE: (FIXTURE / SOURCE).read_text()}, {TESTS: (FIXTURE / TESTS).read_text()})


def clamp_bug() -> StatementInput:
    old = (FIXTURE / SOURCE).read_text()
    info = MutationInfo(operator="remove_early_return", file=SOURCE, function="clamp", line=8)
    candidate = mutation_candidate(info, old, old.replace(GUARD, ""))
    return StatementInput(candidate=candidate, fail_to_pass=[HIGH], pass_to_pass=[f"{TESTS}::test_clamp_low"],
                          messages={HIGH: PYTEST_MESSAGE}, seed="o__n-mutation-1")


def test_the_leak_check_refuses_the_fix_and_test_ids_but_not_the_api_name() -> None:
    gold = clamp_bug().candidate.gold_patch
    assert leaks.find_leaks("Calling `clamp(12, 0, 10)` gives 12.", gold, [HIGH], [HIGH]) == []
    assert leaks.find_leaks("Add `if value > high:` back", gold, [HIGH], [HIGH]) == ["gold line: if value > high:"]
    assert leaks.find_leaks("The check `value > high` is gone", gold, [HIGH], [HIGH]) == \
        ["piece of a gold line: value > high"]
    assert leaks.find_leaks(f"see {HIGH}", gold, [HIGH], [HIGH])[0] == f"test id: {HIGH}"
    assert leaks.find_leaks("test_clamp_high fails", gold, [HIGH], [HIGH]) == ["test name: test_clamp_high"]
    tests_style = leaks.check("tests", f"Failing tests:\n- {HIGH}", gold, [HIGH], [HIGH])
    issue_style = leaks.check("issue", f"Failing tests:\n- {HIGH}", gold, [HIGH], [HIGH])
    assert tests_style.passed and not issue_style.passed
    assert not leaks.check("terse", "  ", gold, [HIGH], [HIGH]).passed  # an empty statement fails


def test_offline_statements_read_like_a_report_and_pass_the_check(index: CodeIndex) -> None:
    statements, checks = write_statements(clamp_bug(), index)
    assert [(c.style, c.passed, c.writer) for c in checks] == [("tests", True, "embedded"),
                                                             ("issue", True, "embedded"),
                                                             ("terse", True, "embedded")]
    assert HIGH in statements.tests
    assert "`clamp(12, 0, 10)` gives `12`, but it should give `10`." in statements.issue
    assert statements.issue.splitlines()[0] == "`clamp` gives wrong results"
    assert "test_" not in statements.issue + statements.terse and "where 12" not in statements.issue
    assert 1 <= len(statements.terse.splitlines()) <= 2 and "clamp(12, 0, 10)" in statements.terse


LANGUAGES = {
    "go": ({"clamp.go": "package r\n\nfunc Clamp(v, lo, hi int) int {\n\tif v > hi {\n\t\treturn hi\n\t}\n"
                        "\treturn v\n}\n"},
           {"clamp_test.go": "package r\n\nimport \"testing\"\n\nfunc TestClampHigh(t *testing.T) {\n"
                             "\tif got := Clamp(12, 0, 10); got != 10 {\n"
                             "\t\tt.Errorf(\"Clamp(12, 0, 10) = %d, want 10\", got)\n\t}\n}\n"},
           "example.com/r::TestClampHigh", "clamp_test.go:7: Clamp(12, 0, 10) = 12, want 10", "Clamp(12, 0, 10)"),
    "rust": ({"src/lib.rs": "pub fn clamp(v: i32, lo: i32, hi: i32) -> i32 {\n    if v > hi { return hi; }\n"
                            "    v\n}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n"
                            "    fn clamp_high() {\n        assert_eq!(clamp(12, 0, 10), 10);\n    }\n}\n"},
             {}, "r::tests::clamp_high", "assertion `left == right` failed\n  left: 12\n right: 10",
             "clamp(12, 0, 10)"),
    "java": ({"src/main/java/r/Ranges.java": "package r;\npublic class Ranges {\n  public static int clamp(int v, "
                                             "int lo, int hi) {\n    if (v > hi) { return hi; }\n    return v;\n"
                                             "  }\n}\n"},
             {"src/test/java/r/RangesTest.java": "package r;\npublic class RangesTest {\n  @Test\n  public void "
                                                 "clampHigh() {\n    assertEquals(10, Ranges.clamp(12, 0, 10));\n"
                                                 "  }\n}\n"},
             "r.RangesTest#clampHigh", "expected:<10> but was:<12>", "Ranges.clamp(12, 0, 10)"),
    "javascript": ({"index.js": "function clamp(v, lo, hi) {\n  if (v > hi) return hi;\n  return v;\n}\n"},
                   {"test/clamp.test.js": "const assert = require('assert');\ntest('clamps high values', () => {\n"
                                          "  assert.strictEqual(clamp(12, 0, 10), 10);\n});\n"},
                   "test/clamp.test.js > clamps high values",
                   "Expected values to be strictly equal:\n\n12 !== 10\n", "clamp(12, 0, 10)"),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_symptoms_are_read_in_every_language(language: str) -> None:
    sources, tests, test_id, message, call = LANGUAGES[language]
    found = symptom(test_id, message, CodeIndex.build(sources, tests))
    assert (found.call, found.expected, found.actual) == (call, "10", "12")
    assert [a.lower() for a in found.apis] == ["clamp"]


def test_a_missing_raise_and_a_false_check_are_said_in_prose(index: CodeIndex) -> None:
    raised = symptom(f"{TESTS}::test_clamp_bad_bounds", "Failed: DID NOT RAISE <class 'ValueError'>", index)
    assert (raised.call, raised.raises) == ("clamp(1, 5, 2)", "ValueError")
    false = symptom(f"{TESTS}::test_overlaps", "assert not True\n +  where True = overlaps((0, 5), (5, 9))", index)
    assert (false.call, false.expected) == ("overlaps((0, 5), (5, 9))", "false")


def good(_: dict) -> dict:
    return tool_call("submit_statements", {"issue": "clamp ignores its upper bound\n\nclamp(12, 0, 10) gives 12.",
                                           "terse": "clamp(12, 0, 10) returns 12, want 10"})


def test_a_chat_model_writes_issue_and_terse_and_is_checked(index: CodeIndex) -> None:
    leaking = tool_call("submit_statements", {"issue": "Put back `if value > high:` in clamp",
                                              "terse": "see test_clamp_high"})
    with ReplayServer([leaking, good]) as server:
        writer = statement_writer("openai:scribe", server.base_url)
        assert writer is not None
        statements, checks = write_statements(clamp_bug(), index, writer)
    assert statements.issue.startswith("clamp ignores its upper bound")
    assert [(c.style, c.passed, c.writer) for c in checks][1:] == [("issue", True, "openai:scribe"),
                                                                 ("terse", True, "openai:scribe")]
    first, second = server.requests
    assert first["model"] == "scribe" and HIGH in first["messages"][1]["content"]  # the bug and the failing output
    told = second["messages"][-1]["content"]
    assert "gold line: if value > high:" in told and "test name: test_clamp_high" in told


def test_a_model_that_keeps_leaking_or_fails_leaves_the_templates_with_a_note(index: CodeIndex) -> None:
    leaking = tool_call("submit_statements", {"issue": "restore `if value > high:`", "terse": "x"})
    with ReplayServer([leaking, leaking]) as server:
        writer = statement_writer("openai:scribe", server.base_url)
        statements, checks = write_statements(clamp_bug(), index, writer)
    assert all(c.passed and c.writer == "embedded" for c in checks)
    assert "leaked twice" in checks[1].note and "`clamp(12, 0, 10)`" in statements.issue
    down = statement_writer("openai:scribe", "http://127.0.0.1:9/v1")
    assert down is not None
    down.client.timeout_s = 5
    _, checks = write_statements(clamp_bug(), index, down)
    assert checks[1].passed and "did not answer" in checks[1].note and down.broken
    _, checks = write_statements(clamp_bug(), index, down)  # the rest of the run does not wait on it again
    assert "failed earlier in this run" in checks[1].note


def test_the_model_spec_is_the_plan_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert statement_writer("embedded") is None
    with pytest.raises(ModelError, match="--base-url"):
        statement_writer("openai:x", None)
    with pytest.raises(ModelError, match="unknown model"):
        statement_writer("claude:x")


def test_tuples_messages_and_the_tests_own_helpers(index: CodeIndex) -> None:
    found = symptom(f"{TESTS}::test_parse_range", "assert (3, 4) == (3, 8)", index)
    assert (found.call, found.expected, found.actual) == ('parse("3-7")', "(3, 8)", "(3, 4)")
    helper = CodeIndex.build({"lib.py": "def render(x):\n    return x\n"},
                             {"tests/test_out.py": "def test_php_output():\n    f = lambda sql: render(sql)\n"
                                                   "    assert f('a') == 'b', 'rendered wrongly'\n"})
    found = symptom("tests/test_out.py::test_php_output", "assert 'c' == 'b'", helper)
    assert (found.call, found.expected, found.actual, found.apis) == ("f('a')", "'b'", "'c'", [])
    assert prose.sentence(found) == "The result for php output is `'c'`, but it should be `'b'`."


def test_an_error_check_is_no_symptom_and_go_messages_name_the_call() -> None:
    tests = {"scan_test.go": "package u\n\nfunc TestScan(t *testing.T) {\n\tu, err := Parse(\"x\")\n"
                             "\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tif u != want {\n\t\tt.Errorf(\"bad\")\n\t}\n}\n"}
    index = CodeIndex.build({"scan.go": "package u\n\nfunc Parse(s string) (U, error) {\n\treturn U{}, nil\n}\n"},
                            tests)
    found = symptom("example.com/u::TestScan", "scan_test.go:9: Parse(\"x\") = 1, want 2", index)
    assert (found.call, found.actual, found.expected, found.apis) == ('Parse("x")', "1", "2", ["Parse"])
