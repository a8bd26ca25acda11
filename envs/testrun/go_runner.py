"""`go test -json`: per-test events (subtests included), deselections as -skip and package filters,
`go test -list` counts."""
from __future__ import annotations

import json
import re
import shlex

from envs.base import Sandbox
from envs.grading.kit.parsers import gotest
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.convert import models
from envs.testrun.junit import count

_GO_TEST = re.compile(r"\bgo test\b")
NO_RESULT_CACHE = 'export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"'
"""Every `go test` of a run (the command's own, or one a script or Makefile it calls runs) runs its tests:
none reports a result kept in the build cache from an earlier run, whose inputs it checks by file times
(`go help test`: "the idiomatic way to disable test caching explicitly is to use -count=1"). A command's own
-count wins."""


def go_test_command(command: str, deselected: list[Deselection]) -> str:
    """`command` with -json (if missing) and the deselections: tests by one `-skip` regex of top-level test
    names (Go matches it in every package, and a subtest's whole parent test is left out), packages (ids
    without "::") by filtering `go list ./...` in place of `./...`."""
    flags = [] if "-json" in command.split() else ["-json"]
    names = sorted({d.test.split("::", 1)[1].split("/", 1)[0] for d in deselected if "::" in d.test})
    if names:
        flags.append("-skip=" + shlex.quote("^(" + "|".join(re.escape(n) for n in names) + ")$"))
    packages = [d.test for d in deselected if "::" not in d.test]
    if packages and " ./..." in command:
        keep = " ".join(f"-e {shlex.quote(p)}" for p in packages)
        command = command.replace(" ./...", f" $(go list ./... | grep -vxF {keep})", 1)
    return _GO_TEST.sub(lambda m: " ".join([m.group(0), *flags]), command, count=1) if flags else command


def select_command(command: str, select_file: str, folder: str) -> str:
    """`command` running only the top-level tests the ids in `select_file` name (`import/path::Test/sub`, one a
    line), and, where it runs `./...`, only their packages. `-run` takes whole top-level tests (every subtest of
    one runs) in every package listed: the run may report more than the ids, never fewer. `folder` is unused:
    Go needs no plug-in."""
    quoted = shlex.quote(select_file)
    names = f"$(sed -e 's/^[^:]*:://' -e 's|/.*||' {quoted} | sort -u | paste -sd'|' -)"
    selected = _GO_TEST.sub(lambda m: f'{m.group(0)} -run "^({names})\\$"', command, count=1)
    if " ./..." in selected:
        selected = selected.replace(" ./...", f" $(sed 's/::.*//' {quoted} | sort -u)", 1)
    return selected


def parse_go_test_json(output: str) -> list[TestResult]:
    """Per-test results from `go test -json` events, ids `import/path::TestName/subtest` (see
    envs/grading/kit/parsers/gotest.py: a failed package with no failing test is one error; nested runs'
    events are their outer test's output; the package's and parent tests' own verdicts win)."""
    return parse_go_test_run(output)[0]


def parse_go_test_run(output: str) -> tuple[list[TestResult], list[str]]:
    """(per-test results, notes): each note counts the results nested runs or the runner's verdict changed."""
    results, notes = gotest.parse_run(output)
    return models(results), notes


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> TestRun:
    """Run a `go test` command with -json; collection failed when no test ran and it did not succeed. The
    parser's notes end the output tail, where the record keeps the run's output."""
    result = sandbox.exec(f"{NO_RESULT_CACHE} && {go_test_command(command, deselected)}", timeout=timeout_s,
                          env=env)
    results, notes = parse_go_test_run(result.stdout)
    tail = _go_tail(result.stdout, result.stderr) + "".join(f"\n[autoinstall] {n}" for n in notes)
    return TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                   output_tail=tail[-4000:], results=results, counts=count(results),
                   collection_ok=result.exit_code == 0 or any("::" in r.test_id for r in results))


def neutral_caches(command: str) -> str:
    """Go's build cache and its telemetry counters, where `go env` says they are: the go command finds a build
    cache entry by a hash of every input's content (each source file's, the flags', the compiler's, every
    dependency's entry's), so an entry another tree left is never found for this one (`go help cache`), and
    `run` keeps test results out of it (NO_RESULT_CACHE); counters are written, never read by a build. "" (no
    cache is neutral) for a command that sets GOFLAGS itself (NO_RESULT_CACHE replaced) or fuzzes (its
    generated corpus lives in the build cache and feeds the next -fuzz run)."""
    if "GOFLAGS" in command or "-fuzz" in command:
        return ""
    return "go env GOCACHE GOTELEMETRYDIR"


CONTENT_KEYED = (".go", "/go.mod", "/go.sum", "/go.work", "/go.work.sum")


def content_keyed(path: str) -> bool:
    """Go source and module files, whose content the build cache's keys hash. Not a C header or source cgo
    compiles or includes from outside its package (`go help cache`: "the build cache does not detect changes
    to C libraries imported with cgo"), nor anything else (an embedded file's content is hashed too, but a
    file of the checkout is not known to be one)."""
    return f"/{path}".endswith(CONTENT_KEYED)


def _go_tail(stdout: str, stderr: str) -> str:
    """The readable output: test output lines and package summaries from the events, then stderr."""
    text = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line) if line.startswith("{") else {"Output": line + "\n"}
        except ValueError:
            event = {"Output": line + "\n"}
        text.append(event.get("Output", "") if isinstance(event, dict) else "")
    return ("".join(text) + stderr)[-4000:]


_GO_LISTED = re.compile(r"^(?:Test|Example|Fuzz)\w*$")


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                      env: dict[str, str] | None) -> tuple[int | None, str]:
    """Top-level tests, examples and fuzz targets `go test -list` names, less the deselected ones (by name
    in every package, as `go_test_command`'s -skip; deselected packages wholly)."""
    listing = _GO_TEST.sub("go test -list '^(Test|Example|Fuzz)'", command, count=1)
    result = sandbox.exec(go_test_command(listing, []), timeout=timeout_s, env=env)
    listed = []
    for line in result.stdout.splitlines():
        try:
            event = json.loads(line) if line.startswith("{") else {}
        except ValueError:
            continue
        name = str(event.get("Output", "")).strip()
        if event.get("Action") == "output" and not event.get("Test") and _GO_LISTED.match(name):
            listed.append((event.get("Package", ""), name))
    if not listed and not result.ok:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"`go test -list` listed nothing (exit {result.exit_code}): {tail[0][:200]}"
    names = {d.test.split("::", 1)[1].split("/", 1)[0] for d in deselected if "::" in d.test}
    packages = {d.test for d in deselected if "::" not in d.test}
    return sum(1 for package, name in listed if package not in packages and name not in names), ""
