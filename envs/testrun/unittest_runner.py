"""unittest-style runners: per-test results from their verbose lines, deselections left out of the results,
`--list` / loader counts.

`python -m unittest` and `python -m testtools.run` are run with `-v` (added when missing), which prints one
line per test: `test_x (pkg.mod.Class.test_x) ... ok` (Python >= 3.11), `test_x (pkg.mod.Class) ... FAIL`
(older), `pkg.mod.Class.test_x ... ERROR` (testtools), a docstring's first line on its own line before
` ... ok`, subtests indented below their test. Test ids are the dotted names the runner itself accepts
(`pkg.mod.Class.test_x`): `python -m unittest ID` and testtools' `--load-list` take them back. A custom
script (`python run_tests.py`) is run as it is; when it prints such lines (a TextTestRunner with
verbosity=2) they are read the same way, else its summary line is, and in every case its exit status is
the verdict too: a non-zero exit with no failing test reported is one error result.
"""
from __future__ import annotations

import re
import shlex

from envs.base import Sandbox
from envs.grading.kit.parsers.unittest import BARE_ID, EXIT_STATUS_ID, FAILED_IMPORT, parse_counted
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.convert import models
from envs.testrun.junit import count
from envs.testrun.summary import parse_summary

_VERBOSE_MODULE = re.compile(r"(?P<head>-m\s+(?P<module>unittest|testtools\.run))(?=\s|$)")
_PYTHON_BEFORE = re.compile(r"(?:^|[\s/;&|(])python[\d.]*(?:\s+(?:-[WX]\s*\S+|-[a-zA-Z]+))*\s+$")
"""A Python interpreter (and its own options) right before `-m unittest`."""
_WRAPPER_BEFORE = re.compile(r"(?:^|(?<=[\s;&|(]))(?:\S*python[\d.]*\s+-m\s+)?\S*coverage[\d.]*\s+run"
                             r"(?:\s+[^\s;&|]+)*?\s+$")
"""A tool that runs `-m MODULE` in Python for its own ends, right before `-m unittest` (coverage's
`coverage run [options]` or `python -m coverage run [options]`): the module runs as under `python -m`."""
_LIST_MARK = "AUTOINSTALL-TEST "
_LIST_SNIPPET = f"""import sys, unittest
def ids(test):
    try:
        tests = iter(test)
    except TypeError:
        yield test.id()
        return
    for t in tests:
        yield from ids(t)
class Lister:
    def __init__(self, *args, **kwargs):
        pass
    def run(self, test):
        for i in ids(test):
            print({_LIST_MARK!r} + i)
        return unittest.TestResult()
unittest.main(module=None, testRunner=Lister, exit=False)
"""
"""`python -m unittest ARGS` with this as `-c` lists the ids ARGS would run, without running them."""


def verbose_command(command: str) -> str:
    """`command` with `-v` right after `-m unittest` / `-m testtools.run` when it has no -v of its own;
    other commands unchanged."""
    match = _VERBOSE_MODULE.search(command)
    if match is None or re.search(r"(?:^|\s)(?:-v|--verbose)(?:\s|$)", command[match.end():]):
        return command
    at = match.end()
    if discover := re.match(r"\s+discover(?=\s|$)", command[at:]):  # `discover` must stay the first argument
        at += discover.end()
    return f"{command[:at]} -v{command[at:]}"


def parse_unittest_verbose(output: str) -> list[TestResult]:
    """Per-test results from unittest-style verbose output (envs/grading/kit/parsers/unittest.py): subtests
    and repeated runs fold into their test (the worst outcome wins, a pass over a skip); a failure section
    naming no reported test is an error result of its own."""
    return models(parse_counted(output)[0])


def _as_dotted(entry: str) -> str:
    """A deselection as a dotted prefix: `tests/test_x.py::C::t` -> `tests.test_x.C.t`."""
    entry = entry.strip().removeprefix("./")
    path, _, rest = entry.partition("::")
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return ".".join(p for p in (dotted, rest.replace("::", ".")) if p)


def deselects(entry: str, found: str) -> bool:
    """True when deselection `entry` (a dotted id, a file or folder, or a pytest-style node id) names the
    test `found`: the test itself, its class, module or package."""
    prefix = _as_dotted(entry)
    return bool(prefix) and (found == prefix or found.startswith((prefix + ".", prefix + "(")))


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `command` verbosely; per-test results when it printed them (the deselected ones left out: these
    runners take no exclusions), else its summary counts; a non-zero exit no failure explains is an error."""
    result = sandbox.exec(verbose_command(command), timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:])
    found, lines = parse_counted(result.output)
    parsed = models(found)
    summary = parse_summary(result.output)
    reported = sum(summary.values())
    if parsed and max(lines, len(parsed)) >= reported:
        run.results = [r for r in parsed if not any(deselects(d.test, r.test_id) for d in deselected)]
        run.counts = count(run.results)
        explained = any(r.outcome in ("failed", "error") for r in parsed)
    else:  # no verbose lines (or fewer than the summary counted): the summary line is all there is
        run.counts = summary
        explained = bool(summary["failed"] or summary["error"])
    if result.exit_code != 0 and not result.timed_out and not explained:
        # The runner's exit status is the verdict too: a failure its output did not name.
        tail = "\n".join(result.output.strip().splitlines()[-20:])
        if run.results:
            message = f"the test command exited {result.exit_code} although every test it reported passed:\n{tail}"
            run.results.append(TestResult(test_id=EXIT_STATUS_ID, outcome="error", message=message))
            run.counts = count(run.results)
        elif reported:
            run.counts["error"] += 1
    run.collection_ok = (bool(run.results) or run.ran > 0 or result.exit_code == 0) and not result.timed_out
    return run


def list_command(command: str) -> str | None:
    """The command that lists the ids `command` would run: testtools' `--list`, or unittest's own argument
    handling with a runner that only lists; None for a runner that cannot list (a custom script)."""
    match = _VERBOSE_MODULE.search(command)
    if match is None:
        return None
    if match["module"] == "testtools.run":
        return f"{command} --list"
    before = command[:match.start()]
    if wrapper := _WRAPPER_BEFORE.search(before):  # list what the wrapped module runs, from the same folder
        before = f"{before[:wrapper.start()]}python "
    elif not _PYTHON_BEFORE.search(before):
        return None  # `-m unittest` under a tool that is not known to run it as Python does: `-c` would not reach it
    return f"{before}-c {shlex.quote(_LIST_SNIPPET)}{command[match.end():]}"


def listing_check(command: str) -> str | None:
    """A shell command that succeeds when `command`'s runner lists at least one test (None: it cannot list)."""
    listing = list_command(command)
    if listing is None:
        return None
    return f"{listing} | grep -q {shlex.quote('.' if listing.endswith(' --list') else _LIST_MARK.strip())}"


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """How many tests `command` would run, less the deselected ones, from the runner's own listing."""
    listing = list_command(command)
    if listing is None:
        return None, f"`{command}` is not a unittest or testtools command: it cannot list its tests"
    result = sandbox.exec(listing, timeout=timeout_s, env=env)
    lines = [ln.strip() for ln in result.stdout.splitlines()]
    if listing.endswith(" --list"):
        ids = [ln for ln in lines if BARE_ID.match(ln) and "." in ln]
    else:
        ids = [ln.removeprefix(_LIST_MARK.strip()).strip() for ln in lines if ln.startswith(_LIST_MARK.strip())]
    if not ids and not result.ok:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"listing the tests of `{command}` named none (exit {result.exit_code}): {tail[0][:200]}"
    ids = [i.removeprefix(FAILED_IMPORT) for i in ids]
    return sum(1 for i in ids if not any(deselects(d.test, i) for d in deselected)), ""
