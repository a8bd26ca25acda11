"""Go facts -> plan: cgo's Debian packages, `go mod download`, a build, and `go test -json` for the tests."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.debian_names import APT, HEADERS
from autoinstall.ecosystems.go.survey import GoFacts
from autoinstall.ecosystems.go.toolchain import planned
from envs.spec import Check, Evidence, Plan, Step

BUILD = "go build -buildvcs=false ./..."
"""Compiles every package (VCS stamping off: the checkout may have no usable .git)."""
TEST = "go test -json -count=1 -vet=off ./..."
"""Per-test events; never a cached result (both verification runs really run); no vet checks (a newer Go's
vet would fail tests the project's own Go passes)."""
WARM_CACHE = "GOCACHE=/root/.cache/go-build go test -count=1 -run '^$' -vet=off ./... >/dev/null 2>&1 || true"
"""Compiles every test binary into the build cache the image keeps (the default one of root's home, which is
the test user's home in a task image), running no test: later runs (a task's validation, every grading, a
rollout's tests) compile only what changed instead of the standard library and every dependency. The
install sandbox compiles into that same cache (envs/docker/container.py `go_cache_env`), so this step reuses
what the build step compiled. Never fails the build: the checks do that."""
LIST = "go test -list '^(Test|Example|Fuzz)' -vet=off ./..."
"""Compiles every test binary and names the tests without running them: Go's collection."""
CHAT_ENVIRONMENT = (
    "Commands run with bash in /workspace (a Go module) inside a Debian container with Debian's Go "
    "toolchain; modules come from the Go module proxy (`go mod download`). Build with `go build ./...`; "
    "tests run offline with `go test ./...` (test_runner go).")
"""For chat models: Debian's Go, the Go module proxy, and `go test` offline."""


def _system_step(facts: GoFacts) -> Step | None:
    """Debian -dev packages for the headers cgo preambles include, when the name map knows them."""
    wanted = {HEADERS[e.text]: e for e in facts.cgo_headers if e.text in HEADERS}
    if not wanted:
        return None
    return Step(command=f"{APT} {' '.join(sorted(wanted))}", kind="system",
                why="cgo code includes headers these packages provide", evidence=list(wanted.values())[:5])


def propose_plan(facts: GoFacts, repo: Path, python: str, image_go: str) -> Plan:
    """At most five steps and the checks (an offline build, the tests) for a Go module, on the host's Go when
    go.mod needs newer than Debian's (toolchain.py)."""
    python, toolchain = planned(facts, python, image_go)
    steps: list[Step] = []
    if (system := _system_step(facts)) is not None:
        steps.append(system)
    where = facts.module_evidence or Evidence(file="go.mod", line=1, text="go.mod")
    if facts.requires and not facts.vendored:
        steps.append(Step(command="go mod download", kind="other", evidence=[facts.requires[0].evidence],
                          why=f"fetch the {len(facts.requires)} required modules (go.sum pins them) "
                              "through the module proxy"))
    steps.append(Step(command=BUILD, kind="project", evidence=[where],
                      why="compile every package of the module (downloads anything still missing)"))
    test_command = TEST if facts.test_packages else None
    if test_command:
        steps.append(Step(command=WARM_CACHE, kind="project", evidence=[where],
                          why="keep the compiled packages and test binaries in the image's build cache, so "
                              "later test runs compile only what changed"))
    checks = [Check(name="build", kind="import", command=BUILD,
                    why="the module compiles offline from what the image holds")]
    if test_command:
        checks.append(Check(name="collect", kind="collect", command=LIST,
                            why="the tests compile offline and go test names them"))
        checks.append(Check(name="tests", kind="tests", command=test_command,
                            why=f"{facts.test_files} _test.go files in {len(facts.test_packages)} packages"))
    notes = [*facts.notes, *toolchain]
    notes += [f"CI runs: {e.text} ({e.file}:{e.line})" for e in facts.ci_tests[:3]]
    if facts.cgo:
        notes.append(f"cgo in {len(facts.cgo)} file(s), e.g. {facts.cgo[0].file}:{facts.cgo[0].line}")
    if facts.vendored:
        notes.append("vendor/modules.txt: builds use the vendored modules, nothing is downloaded")
    return Plan(ecosystem="go", python=python, steps=steps, checks=checks, test_command=test_command,
                test_runner="go" if test_command else "none", notes=notes)
