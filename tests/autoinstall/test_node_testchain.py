"""A Node test script that chains style or type checks with its runner (autoinstall/ecosystems/node/testchain.py):
the split of the chain, the plan's test command and note, the repair for a check known only by its script's
name, a whole build of the fixture on the FakeFactory, and the fixture on Docker."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autoinstall.ecosystems.node import NodeEcosystem
from autoinstall.ecosystems.node.diagnosis import diagnose
from autoinstall.ecosystems.node.repairs import repair
from autoinstall.ecosystems.node.survey import survey
from autoinstall.ecosystems.node.testchain import PATH_BIN, runner_part, script_of, split_chain
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.fake import FakeFactory, FakeSandbox
from tests.autoinstall.ecosystem_checks import TESTS, repair_context, write_tree

if TYPE_CHECKING:
    from tests.builds import Builds  # it imports the builder, which the fast tier skips

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "node_lint_chain"
NODE = NodeEcosystem()
SCRIPTS = {"lint": "eslint . && prettier --check .", "typecheck": "tsc --noEmit -p .", "build": "tsc",
           "lint:local": "node scripts/lint.js", "test:unit": "vitest run", "lint:all": "eslint . && ava"}


@pytest.mark.parametrize(("script", "left_out", "kept"), [
    ("xo && ava", ["xo"], ["ava"]),
    ("eslint . && jest", ["eslint ."], ["jest"]),
    ("tsc --noEmit && vitest run", ["tsc --noEmit"], ["vitest run"]),
    ("npm run lint && mocha", ["npm run lint"], ["mocha"]),
    ("standard && tape test/*.js", ["standard"], ["tape test/*.js"]),
    ("xo && npm run build && ava", ["xo"], ["npm run build", "ava"]),
    ("npx --no-install eslint src && NODE_ENV=test c8 ava", ["npx --no-install eslint src"], ["NODE_ENV=test c8 ava"]),
    ("yarn typecheck && yarn test:unit", ["yarn typecheck"], ["yarn test:unit"]),
    ("pnpm exec xo && node test/index.js", ["pnpm exec xo"], ["node test/index.js"]),
    ("jest 2>&1 | tee out.txt && eslint .", ["eslint ."], ["jest 2>&1 | tee out.txt"]),
])
def test_the_checks_of_a_chain_are_left_out_with_why_and_the_rest_kept_in_order(
        script: str, left_out: list[str], kept: list[str]) -> None:
    part = runner_part(script, SCRIPTS)
    assert part is not None and part.kept == kept
    assert [o.step for o in part.left_out] == left_out
    assert all(("lints" in o.why or "checks" in o.why) for o in part.left_out), part.left_out


def test_the_reason_names_the_program_and_what_it_checks() -> None:
    part = runner_part("npm run lint && mocha", SCRIPTS)
    assert part is not None
    assert part.left_out[0].why == "the `lint` script runs `eslint . && prettier --check .`: eslint lints; " \
                                   "prettier checks formatting"
    reason = runner_part("tsc --noEmit && vitest run", SCRIPTS).reason("package.json:7")  # type: ignore[union-attr]
    assert reason.startswith("test script `tsc --noEmit && vitest run` (package.json:7): `tsc --noEmit` (tsc "
                             "--noEmit checks types) left out")
    assert reason.endswith("the tests run `vitest run`")


@pytest.mark.parametrize("script", [
    "tsc && ava",                       # tsc emits: a build
    "npm run build && ava",             # a build script (tsc)
    "node build.js && mocha",
    "ava",                              # no chain
    "xo; ava",                          # `;`: the runner runs whatever the linter says
    "xo || true && ava",
    "xo & ava",
    "xo && tsd",                        # only checks: nothing that runs tests would remain
    "npm run lint:local && node --test",  # known by its name only: a repair's (below), not the plan's
    "npm run lint:all && mocha",        # `lint:all` runs ava too: not a check
    "eslint 'src && ava",               # unbalanced quote
])
def test_builds_other_shells_and_unknown_steps_stay(script: str) -> None:
    assert runner_part(script, SCRIPTS) is None


def test_a_script_named_as_a_check_is_left_out_by_name_unless_it_runs_tests() -> None:
    part = runner_part("npm run lint:local && node --test", SCRIPTS, by_name=True)
    assert part is not None and part.kept == ["node --test"]
    assert part.left_out[0].why == "the `lint:local` script (`node scripts/lint.js`): its name says it checks " \
                                   "style or types"
    assert runner_part("npm run lint:all && mocha", SCRIPTS, by_name=True) is None
    builds = {"build:types": "tsc --emitDeclarationOnly"}  # named for types, but it writes them
    assert runner_part("npm run build:types && ava", builds, by_name=True) is None


def test_split_chain_keeps_quotes_subshells_and_pipes_in_their_step() -> None:
    assert split_chain('eslint "a && b" && c $(x && y) && tape t.js | tap-spec') == [
        'eslint "a && b"', "c $(x && y)", "tape t.js | tap-spec"]
    assert split_chain("a &&") is None and split_chain("a\nb") is None


def test_the_command_runs_one_script_through_its_manager_else_the_steps_with_the_bins_on_path() -> None:
    part = runner_part("xo && npm run build && vitest run", SCRIPTS)
    assert part is not None
    assert part.command("npm", "vitest", "--reporter=verbose") == \
        f"{PATH_BIN} && npm run build && vitest run --reporter=verbose"
    single = runner_part("npm run lint && npm run test:unit", SCRIPTS)
    assert single is not None
    assert single.command("npm") == "npm run test:unit --ignore-scripts"
    assert single.command("pnpm") == "pnpm run test:unit"
    again = runner_part(f"{PATH_BIN} && npm run lint:local && mocha", SCRIPTS, by_name=True)
    assert again is not None and again.command("npm") == f"{PATH_BIN} && mocha"  # PATH set once


def test_script_of_a_test_command() -> None:
    scripts = {"test": "xo && ava", "test:ci": "xo && jest"}
    assert script_of("npm test --ignore-scripts -- --verbose", scripts) == ("npm", "xo && ava")
    assert script_of("yarn run test", scripts) == ("yarn", "xo && ava")
    assert script_of("pnpm run test:ci", scripts) == ("pnpm", "xo && jest")
    assert script_of("npx xo && npx ava", scripts) == ("npm", "npx xo && npx ava")


def _package(root: Path, test: str, **extra: object) -> Path:
    manifest = {"name": "p", "version": "1.0.0", "scripts": {"test": test, "lint": "node scripts/lint.js"},
                "devDependencies": {"ava": "^6.0.0", "vitest": "^3.0.0"}, **extra}
    return write_tree(root, {"package.json": json.dumps(manifest, indent=2)})


def test_the_plan_tests_the_runner_part_and_notes_what_was_left_out(tmp_path: Path) -> None:
    repo = _package(tmp_path, "xo && npm run build && vitest run")
    plan = NODE.propose(survey(repo), repo, ())
    assert plan.test_command == f"{PATH_BIN} && npm run build && vitest run --reporter=verbose"
    note = next(n for n in plan.notes if n.startswith("test script"))
    assert "(package.json:5)" in note and "`xo` (xo lints (ESLint with xo's rules))" in note
    assert [c.command for c in plan.checks] == ["test -x node_modules/.bin/vitest", plan.test_command]


def test_yarn_berry_keeps_its_test_script_whole(tmp_path: Path) -> None:
    repo = _package(tmp_path, "xo && ava", packageManager="yarn@4.1.0")
    (repo / "yarn.lock").write_text("__metadata:\n  version: 8\n")
    plan = NODE.propose(survey(repo), repo, ())
    assert plan.test_command == "yarn run test" and not any(n.startswith("test script") for n in plan.notes)


def _tests_failed(repo: Path, command: str, test_ids: list[str] | None = None):  # noqa: ANN202
    plan = NODE.propose(survey(repo), repo, ()).model_copy(update={"test_command": command})
    output = "> p@1.0.0 lint\n> node scripts/lint.js\n\nsrc/a.js:1:1 error\nnpm ERR! code 1"
    return repair_context(plan, diagnose, output, phase="tests", failing=TESTS, repo=repo,
                          test_ids=test_ids or [])


def test_a_run_that_stopped_at_a_check_known_by_its_name_is_repaired_to_run_the_rest(tmp_path: Path) -> None:
    repo = _package(tmp_path, "npm run lint && ava")
    ctx = _tests_failed(repo, "npm test --ignore-scripts")
    r = repair(ctx)
    assert r is not None and r.kind == "test_command"
    assert r.test_command == f"{PATH_BIN} && ava"
    assert "`npm run lint` (the `lint` script" in r.reason and r.reason.endswith("stopped before any test")
    for done in (_tests_failed(repo, r.test_command),  # once left out, nothing more to leave out
                 _tests_failed(repo, "npm test --ignore-scripts", ["test.js > adds"])):  # tests ran: not a check's
        after = repair(done)
        assert after is None or after.kind != "test_command", after


class LintChainMachine:
    """The fixture's commands: the install and build succeed; `lint:types` fails; node --test prints TAP."""

    def __call__(self, sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        if "node --test" in cmd:
            if "xo &&" in cmd or "lint:types" in cmd:
                return ExecResult(exit_code=1, stdout="src/index.js:7:18 - error TS7006\nFound 1 error.")
            tap = "\n".join(f"ok {i} - case {i}" for i in range(1, 6))
            return ExecResult(exit_code=0, stdout=f"TAP version 13\n{tap}\n1..5\n# tests 5\n# pass 5\n")
        return ExecResult(exit_code=0) if cmd.startswith(("npm", "test -x", "cat")) else None


def test_a_fake_build_of_the_fixture_leaves_both_checks_out_and_verifies(tmp_path: Path) -> None:
    spec = build_environment(str(FIXTURE), BuildOptions(out_dir=tmp_path / "env"),
                             factory=FakeFactory(LintChainMachine()))
    assert spec.status == "verified", spec.failure
    assert spec.plan.test_command == f"{PATH_BIN} && npm run build && node --test"
    assert any(n.startswith("test script") and "`xo`" in n for n in spec.plan.notes)
    repairs = [e.repair for e in spec.log if e.repair and e.repair.kind == "test_command"]
    assert len(repairs) == 1 and "`npm run lint:types`" in repairs[0].reason
    assert spec.test_command in (None, spec.plan.test_command)
    assert spec.verification is not None and spec.verification.last_run is not None
    assert spec.verification.last_run.passed == 5


@pytest.mark.docker
def test_the_fixture_verifies_on_docker_with_its_build_and_without_its_checks(builds: Builds) -> None:
    spec = builds.env(FIXTURE.name).spec  # the run's one build (tests/autoinstall/test_e2e_fixtures.py's too)
    assert spec.status == "verified", spec.failure
    assert spec.plan.test_command == f"{PATH_BIN} && npm run build && node --test"
    assert any(e.repair and e.repair.kind == "test_command" and "`npm run lint:types`" in e.repair.reason
               for e in spec.log)
    run = spec.verification.last_run if spec.verification else None
    assert run is not None and run.passed == 5 and run.counts.get("failed", 0) == 0
    assert sorted(r.test_id for r in run.results if r.outcome == "passed")[:2] == [
        "add > negative numbers", "add > small numbers"]
