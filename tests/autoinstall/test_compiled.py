"""What Go, Rust, Node and Java get from their one base (autoinstall/ecosystems/compiled.py) and their one
deselection rule (autoinstall/ecosystems/rules.py `deselecting`): the protocol, detection by manifest, the
base image with the toolchain's Debian packages, no stubs, nothing pinned by variables or resolved as of a
date, and tests left out only on their own messages' evidence."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Ecosystem, FailedTest, RepairContext
from autoinstall.ecosystems.compiled import CompiledEcosystem
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.ecosystems.rules import deselecting
from autoinstall.errors import AutoinstallError
from envs.spec import Diagnosis, Plan
from tests.autoinstall.ecosystem_checks import TESTS, deselection, repair_context

LANGUAGES = {"go": ("go.mod", ("golang-go",), "the Go module proxy"),
             "rust": ("Cargo.toml", ("cargo", "rustc"), "crates.io"),
             "node": ("package.json", ("nodejs", "npm"), "the npm registry"),
             "java": ("pom.xml", ("maven", "openjdk-21-jdk-headless"), "Maven Central")}
"""Each language: its manifest, its toolchain's Debian packages, its registry."""


class AskedFactory:
    """Answers `base_image` and keeps what it was asked for (a base image's one SandboxFactory call)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    def base_image(self, python: str, log: object = None, *, packages: tuple[str, ...] = ()) -> str:
        self.asked.append((python, packages))
        return f"base:{python}"


@pytest.mark.parametrize("name", LANGUAGES)
def test_each_language_gets_the_protocol_from_its_base(name: str, tmp_path: Path) -> None:
    manifest, packages, registry = LANGUAGES[name]
    eco = get_ecosystem(name)
    assert isinstance(eco, CompiledEcosystem) and isinstance(eco, Ecosystem) and eco.name == name
    assert not eco.detect(tmp_path) and eco.manifests == (manifest,)
    (tmp_path / manifest).write_text("")
    assert eco.detect(tmp_path)
    factory = AskedFactory()
    assert eco.base_image(factory, eco.toolchains[0]) == "base:3.13"  # type: ignore[arg-type]
    assert factory.asked == [("3.13", packages)]
    stubbed = f"{name} packages cannot be stubbed: make it reachable through {re.escape(registry)}"
    with pytest.raises(AutoinstallError, match=stubbed):
        eco.stub("left-pad", "left_pad", "")
    assert eco.stub_users(tmp_path, "x") == [] and eco.stub_env == {}
    assert eco.pin_env == () and eco.as_of("2024-01-01") == {}


DESELECTIONS = {
    "rust": ({"c-lib::net::fetch": "failed to lookup address information: x",
              "c-test::db": "connecting to 127.0.0.1:6379: Os { code: 111, kind: ConnectionRefused }",
              "c-lib::math": "assertion `left == right` failed",
              "c-test::own": "Os { code: 111, kind: ConnectionRefused }"},
             ["c-test::db", "c-lib::net::fetch"], [True, True, False, False]),
    "java": ({"a.NetTest#fetches": "java.net.UnknownHostException: example.org",
              "a.DbTest#query": "org.postgresql.util.PSQLException: Connection to localhost:5432 refused. "
                                "Check that the hostname",
              "a.MathTest#adds": "expected: <6> but was: <5>",
              "a.ServerTest#own": "java.net.ConnectException: Connection refused"},
             ["a.DbTest#query", "a.NetTest#fetches"], [True, True, False, False]),
    "node": ({"test/api.js > fetch > ok": "Error: getaddrinfo ENOTFOUND example.com",
              "test/db.js > query": "Error: connect ECONNREFUSED 127.0.0.1:5432",
              "test/x.js > math": "AssertionError: 1 !== 2"},
             ["test/db.js > query", "test/api.js > fetch > ok"], [True, True, False]),
}
"""Failed tests (id -> message), the ones left out (a refused well-known port first, then no internet), and
which messages justify a deselection. A refusal on no well-known service's port (a server the suite starts
itself) is no evidence. Go's, which leaves out whole tests and packages, is in test_go.py."""


@pytest.mark.parametrize("name", DESELECTIONS)
def test_tests_that_need_the_network_or_a_service_are_deselected_with_their_evidence(name: str) -> None:
    messages, tests, justified = DESELECTIONS[name]
    eco = get_ecosystem(name)

    def ctx(output: str, **kw: object) -> RepairContext:
        return repair_context(Plan(ecosystem=name, python="3.13"), eco.diagnose, output,
                              **kw)  # type: ignore[arg-type]

    failed = [FailedTest(test_id=test, message=message) for test, message in messages.items()]
    deselection(eco.repair, ctx, eco, failed, tests, justified)


def test_the_deselection_names_the_refused_address_and_leaves_out_what_the_runner_can() -> None:
    service, network = re.compile(r"refused (?P<s>\S+:\d+)"), re.compile(r"no such host")
    rules = deselecting(service, network, lambda tests, _ctx: sorted({t.split("::")[0] for t in tests}))
    assert set(rules) == {"service_unavailable", "network_required"}
    failed = [FailedTest(test_id="db::TestQuery", message="refused 127.0.0.1:5432"),
              FailedTest(test_id="api::TestFetch", message="lookup example.com: no such host"),
              FailedTest(test_id="api::TestParse", message="1 != 2")]

    refused = Diagnosis(kind="service_unavailable", subject="127.0.0.1:5432",
                        evidence="refused 127.0.0.1:5432")

    def ctx(phase: str) -> RepairContext:
        return repair_context(Plan(ecosystem="go", python="3.13"), lambda _output, **_: refused, "",
                              phase=phase, failing=TESTS, failed_tests=failed)

    r = rules["service_unavailable"](ctx("tests"))
    assert r is not None and r.kind == "deselect" and r.tests == ["api", "db"]
    assert r.reason == ("these tests need a service at 127.0.0.1:5432 that the environment does not run and "
                        "the internet, and environments run their tests offline")
    assert rules["network_required"](ctx("install")) is None  # only failed tests are evidence
