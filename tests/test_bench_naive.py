"""bench/naive.py: the naive baseline judges each language's one-liner by what it printed and how it exited, so a
Go, Rust, Node or Java repository is never "not runnable" merely because the baseline ran Python's pip."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.naive import ONE_LINERS, judge  # noqa: E402
from tests.autoinstall.test_bench_rows import bench  # noqa: E402

GO = """ok  \tgithub.com/x/chi\t0.12s
ok  \tgithub.com/x/chi/middleware\t1.03s
?   \tgithub.com/x/chi/_examples\t[no test files]
"""
GO_FAILING = GO + "--- FAIL: TestX (0.00s)\nFAIL\nFAIL\tgithub.com/x/chi/render\t0.01s\nFAIL\n"
CARGO = """test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.20s
"""
MAVEN = """[INFO] Results:
[INFO]
[WARNING] Tests run: 40, Failures: 0, Errors: 0, Skipped: 2
[INFO]
[INFO] BUILD SUCCESS
"""


@pytest.mark.parametrize(("language", "output", "exit_code", "runnable", "passed", "failed"), [
    ("go", GO, 0, True, 2, 0),
    ("go", GO_FAILING, 1, False, 2, 1),
    ("rust", CARGO, 0, True, 15, 0),
    ("rust", "error[E0658]: let chains are unstable\nerror: could not compile `x`\n", 101, False, 0, 0),
    ("java", MAVEN, 0, True, 38, 0),
    ("java", "[ERROR] Failed to execute goal ... protoc\n[INFO] BUILD FAILURE\n", 1, False, 0, 0),
    ("node", "  14 passing (31ms)\n", 0, True, 14, 0),
    ("node", "  13 passing (31ms)\n  1 failing\n", 1, False, 13, 1),
    ("node", "npm ERR! code SELF_SIGNED_CERT_IN_CHAIN\n", 1, False, 0, 0),
    ("node", "Total:     7\nPassed:    7\nSkipped:   0\n", 0, True, 7, 0),
    ("python", "3 failed, 40 passed in 1.2s\n", 1, True, 40, 3),  # a suite that runs counts, as before
    ("python", "ERROR: No matching distribution found for x\n", 1, False, 0, 0),
])
def test_each_language_is_judged_by_its_own_one_liner(language: str, output: str, exit_code: int, runnable: bool,
                                                     passed: int, failed: int) -> None:
    row = judge(ONE_LINERS[language], output, exit_code)
    assert (row["runnable"], row["passed"], row["failed"]) == (runnable, passed, failed)


def test_every_language_of_the_dev_sets_has_a_one_liner_on_its_own_toolchain() -> None:
    assert set(bench().LANGUAGE_REPOS) == set(ONE_LINERS)
    assert all(ONE_LINERS[lang].packages for lang in ONE_LINERS if lang != "python")
