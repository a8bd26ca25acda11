"""The Go ecosystem without Docker: survey (go.mod, packages, cgo, CI), the plan, diagnoses, repair rules,
the module list, and a whole build on the FakeFactory (a newer `go` line repaired with GOTOOLCHAIN, a test
that needs the internet deselected with its evidence)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.detect import detect, get_ecosystem
from autoinstall.ecosystems.go import GoEcosystem
from autoinstall.ecosystems.go.diagnosis import diagnose
from autoinstall.ecosystems.go.pins import constraints, freeze, warm
from autoinstall.ecosystems.go.proposal import WARM_CACHE
from autoinstall.ecosystems.go.repairs import repair
from autoinstall.ecosystems.go.survey import GoFacts, survey
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.fake import FakeFactory, FakeSandbox
from envs.host_toolchains import OFF_ENV
from envs.spec import Plan, Step
from envs.testrun.go_runner import NO_RESULT_CACHE
from tests.autoinstall.ecosystem_checks import (TESTS, assert_diagnoses, assert_installs_debian_package_once,
                                                deselection, repair_context, write_tree)

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "go_module"
EVENTS = (Path(__file__).parent / "data" / "go_module_events.jsonl").read_text()
"""Captured: `go test -json -count=1 -vet=off ./...` in tests/fixtures/repos/go_module (go1.26)."""
GO = GoEcosystem()
BUILD = Step(command="go build -buildvcs=false ./...", why="compile", kind="project")


def _evidence(facts: GoFacts) -> list:
    found = [facts.module_evidence, facts.go_evidence, facts.toolchain_evidence]
    return [e for e in found if e] + [r.evidence for r in facts.requires] + facts.cgo + facts.ci_tests


def test_the_fixture_is_go_and_its_facts_point_into_it() -> None:
    assert detect(REPO)[0] is get_ecosystem("go")
    facts = survey(REPO)
    assert (facts.module, facts.go_version, facts.toolchain) == ("example.com/gomodule", "1.22", None)
    assert facts.test_packages == ["mathx", "textx"] and facts.test_files == 2
    assert (facts.requires, facts.cgo) == ([], [])
    assert [(e.file, e.line, e.text) for e in facts.ci_tests] == [("Makefile", 2, "go test ./...")]
    for evidence in _evidence(facts):
        assert (REPO / evidence.file).is_file() and evidence.line, evidence


def test_survey_reads_requires_toolchain_cgo_and_nested_modules(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")  # no host Go: the module proxy's (test_toolchains.py: the host's first)
    root = write_tree(tmp_path, {
        "go.mod": "module github.com/acme/widget // the module\n\ngo 1.25.0\n\ntoolchain go1.25.3\n\n"
                  "require (\n\tgithub.com/google/uuid v1.6.0\n\tgolang.org/x/sys v0.30.0 // indirect\n)\n\n"
                  "require github.com/pkg/errors v0.9.1\n",
        "go.sum": "", "pyproject.toml": "[project]\nname = 'docs'\n",
        "yamlc/yaml.go": 'package yamlc\n\n// #cgo LDFLAGS: -lyaml\n// #include <yaml.h>\n'
                         '// #include <stdlib.h>\nimport "C"\n',
        "yamlc/yaml_test.go": "package yamlc\n",
        "tools/go.mod": "module github.com/acme/widget/tools\n", "tools/x_test.go": "package tools\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: go test -race ./... # all\n",
    })
    assert detect(root)[0].name == "go"
    facts = survey(root)
    assert (facts.module, facts.go_version) == ("github.com/acme/widget", "1.25.0")
    assert facts.toolchain == "go1.25.3" and facts.toolchain_evidence and facts.toolchain_evidence.line == 5
    assert [(r.module, r.version, r.evidence.line) for r in facts.requires] == [
        ("github.com/google/uuid", "v1.6.0", 8), ("golang.org/x/sys", "v0.30.0", 9),
        ("github.com/pkg/errors", "v0.9.1", 12)]
    assert [(e.file, e.line) for e in facts.cgo] == [("yamlc/yaml.go", 6)]
    assert [e.text for e in facts.cgo_headers] == ["yaml.h", "stdlib.h"]
    assert facts.test_packages == ["yamlc"] and facts.nested_modules == ["tools"]
    assert [e.text for e in facts.ci_tests] == ["go test -race ./..."]
    plan = GO.propose(facts, root, ("3.11", "3.13"))
    assert [s.command.split(" && ")[-1] for s in plan.steps] == [
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libyaml-dev",
        "go mod download", "go build -buildvcs=false ./...", WARM_CACHE]
    assert any("go1.25.3" in n and "GOTOOLCHAIN" in n for n in plan.notes)
    assert any("nested module" in n for n in plan.notes)


def test_the_fixture_plan_builds_then_tests_with_json_on_the_go_image() -> None:
    plan = GO.propose(survey(REPO), REPO, ("3.11", "3.13"))
    assert (plan.ecosystem, plan.python, plan.test_runner) == ("go", "3.13", "go")
    assert [s.command for s in plan.steps] == ["go build -buildvcs=false ./...", WARM_CACHE]  # nothing to download
    assert plan.steps[0].evidence[0].file == "go.mod" and plan.steps[0].evidence[0].line == 1
    assert [(c.name, c.kind) for c in plan.checks] == [("build", "import"), ("collect", "collect"),
                                                        ("tests", "tests")]
    assert plan.test_command == "go test -json -count=1 -vet=off ./..."
    factory = FakeFactory()
    assert GO.base_image(factory, plan.python) == "fake-base:python3.13"


def ctx(output: str, *, phase: str = "install", failing: Step = BUILD, **kw: object) -> RepairContext:
    plan = Plan(ecosystem="go", python="3.13", steps=[failing])
    return repair_context(plan, diagnose, output, phase=phase, failing=failing, **kw)


def test_diagnoses_of_go_output() -> None:
    cases = {
        "go: go.mod requires go >= 1.25.0 (running go 1.24.4; GOTOOLCHAIN=local)":
            ("missing_tool", "go1.25.0"),
        "go: go.mod requires go >= 1.23 (running go 1.19.8; GOTOOLCHAIN=local)": ("missing_tool", "go1.23.0"),
        "# example.com/m/yamlc\nyamlc/yaml.go:4:10: fatal error: yaml.h: No such file or directory":
            ("missing_header", "yaml.h"),
        "# pkg-config --cflags  -- libcurl\nPackage libcurl was not found in the pkg-config search path.":
            ("missing_library", "curl"),
        "/usr/bin/ld: cannot find -lsqlite3: No such file or directory": ("missing_library", "sqlite3"),
        "main.go:4:2: missing go.sum entry for module providing package github.com/x/y (imported by m)":
            ("missing_module", "github.com/x/y"),
        "db_test.go:12: dial tcp 127.0.0.1:5432: connect: connection refused":
            ("service_unavailable", "127.0.0.1:5432"),
        'Get "https://example.com": dial tcp: lookup example.com on 10.0.0.2:53: no such host':
            ("network_required", ""),
        # captured in an offline sandbox: its resolver refuses, which is no service of the project's
        "zver_test.go:13: lookup proxy.golang.org on 127.0.0.1:53: read udp 127.0.0.1:44689->127.0.0.1:53: "
        "read: connection refused": ("network_required", ""),
    }
    assert_diagnoses(diagnose, cases)


def test_missing_cgo_header_installs_the_debian_dev_package_first() -> None:
    out = "yamlc/yaml.go:4:10: fatal error: yaml.h: No such file or directory"
    assert_installs_debian_package_once(repair, ctx, out, "libyaml-dev")


def test_a_newer_go_line_sets_gotoolchain_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")  # no host Go: the module proxy's (test_toolchains.py: the host's first)
    out = "go: go.mod requires go >= 1.25.0 (running go 1.24.4; GOTOOLCHAIN=local)"
    r = repair(ctx(out))
    assert r is not None and (r.kind, r.env) == ("set_env", {"GOTOOLCHAIN": "go1.25.0"})
    assert repair(ctx(out, env={"GOTOOLCHAIN": "go1.25.0"})) is None


def test_tests_that_need_the_network_or_a_service_are_deselected_with_their_evidence() -> None:
    failed = [FailedTest(test_id="m/api::TestFetch/ok", message='dial tcp: lookup example.com: no such host'),
              FailedTest(test_id="m/api::TestFetch", message="--- FAIL: TestFetch (0.00s)"),
              FailedTest(test_id="m/db::TestQuery",
                         message="dial tcp 127.0.0.1:5432: connect: connection refused"),
              FailedTest(test_id="m/x::TestMath", message="x_test.go:3: 1 != 2")]
    deselection(repair, ctx, GO, failed, ["m/db::TestQuery", "m/api::TestFetch"], [True, False, True, False])
    out = "\n".join(f.message for f in failed)
    assert repair(ctx(out, phase="install", failed_tests=failed)) is None  # the build step is never skipped
    ids = ["m/api::TestFetch", "m/api::TestFetch/ok", "m/api::TestParse", "m/db::TestQuery", "m/x::TestMath"]
    r = repair(ctx(out, phase="tests", failing=TESTS, failed_tests=failed, test_ids=ids))
    assert r is not None and r.tests == ["m/db", "m/api::TestFetch"]  # m/db has no other test


def test_module_list_freeze_and_warm() -> None:
    toolchain = "golang.org/toolchain@v0.0.1-go1.25.0.linux-amd64"
    listing = ("./github.com/!burnt!sushi/toml/@v/v1.3.2.zip\n"
               "./golang.org/toolchain/@v/v0.0.1-go1.25.0.linux-amd64.zip\n")
    box = FakeSandbox(rules=[("GOMODCACHE", listing)]).start()
    frozen = freeze(box)
    assert frozen == f"github.com/BurntSushi/toml@v1.3.2\n{toolchain}\n"
    assert constraints(frozen, "github.com/BurntSushi/toml") == f"{toolchain}\n"
    warm(box, frozen)
    assert box.commands()[-1] == ("cd /tmp && GOFLAGS=-modcacherw GOTOOLCHAIN=local go mod download "
                                  f"github.com/BurntSushi/toml@v1.3.2 {toolchain}")


LISTED = [("mathx", "TestAdd"), ("mathx", "TestFib"), ("textx", "TestReverse"), ("textx", "TestShout"),
          ("textx", "TestLocale")]


class GoMachine:
    """A scripted Go toolchain: go.mod asks for go 1.25.0; the image's Go is 1.24 unless GOTOOLCHAIN says
    otherwise; one test needs the internet."""

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        cmd = cmd.removeprefix(f"{NO_RESULT_CACHE} && ")  # the runner's runs keep no test result
        if cmd.startswith("go ") and env.get("GOTOOLCHAIN") != "go1.25.0":
            return ExecResult(exit_code=1, stderr="go: go.mod requires go >= 1.25.0 (running go 1.24.4; "
                                                  "GOTOOLCHAIN=local)")
        if cmd.startswith("go test -list"):
            return ExecResult(exit_code=0, stdout="\n".join(json.dumps(
                {"Action": "output", "Package": f"example.com/gomodule/{pkg}", "Output": f"{name}\n"})
                for pkg, name in LISTED))
        if cmd.startswith("go test"):
            skipped = "-skip='^(TestReverse)$'" in cmd
            events = [e for e in EVENTS.splitlines() if not (skipped and "TestReverse" in e)]
            if not skipped:
                events = [_fail(e) if '"Test":"TestReverse"' in e and '"Action":"pass"' in e else e
                          for e in events]
                package_end = '"Action":"pass","Package":"example.com/gomodule/textx","Elapsed"'
                events = [e.replace('"Action":"pass"', '"Action":"fail"', 1) if package_end in e else e
                          for e in events]  # its package fails with it, as go test reports it
                return ExecResult(exit_code=1, stdout="\n".join(events))
            return ExecResult(exit_code=0, stdout="\n".join(events))
        return ExecResult(exit_code=0) if cmd.startswith("go ") else None


def _fail(event: str) -> str:
    """TestReverse fails, offline, the way a test that fetches something does."""
    lookup = {"Action": "output", "Package": "example.com/gomodule/textx", "Test": "TestReverse",
              "Output": 'textx_test.go:9: Get "https://example.com": '
                        "dial tcp: lookup example.com: no such host\n"}
    return json.dumps(lookup) + "\n" + event.replace('"Action":"pass"', '"Action":"fail"')


def test_a_fake_go_build_repairs_the_toolchain_and_deselects_a_network_test(tmp_path: Path) -> None:
    factory = FakeFactory(GoMachine())
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", max_deselected=0.2),
                             factory=factory)
    assert spec.status == "verified", spec.failure
    assert spec.plan.ecosystem == "go" and spec.env == {"GOTOOLCHAIN": "go1.25.0"}
    assert [d.test for d in spec.deselected] == ["example.com/gomodule/textx::TestReverse"]
    assert "internet" in spec.deselected[0].reason
    run = spec.verification.runs[-1]
    assert (run.passed, run.counts["skipped"]) == (6, 1)
    assert 'ENV GOTOOLCHAIN="go1.25.0"' in (tmp_path / "env" / "Dockerfile").read_text()
    collection = spec.verification.collection
    assert collection is not None and (collection.suite, collection.selected) == (5, 4)
    capped = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "capped"),
                               factory=FakeFactory(GoMachine()))
    assert capped.status == "partial" and "1 of 5 tests (20%) are deselected" in capped.failure.message
