"""A repository whose root no ecosystem builds: the project in a folder below it is chosen by CI evidence
(then tests, depth, name), nested ("python@packages/core": every command `cd FOLDER && ...`), and the others
are named in the plan. The real build is tests/fixtures/repos/monorepo_subproject (test_e2e_fixtures.py)."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.detect import FALLBACK, detect, get_ecosystem
from autoinstall.ecosystems.nested import Nested
from envs.folder import InFolder
from autoinstall.ecosystems.node.diagnosis import diagnose as node_diagnose
from autoinstall.plan.models.embedded import EmbeddedModel
from autoinstall.survey import survey
from autoinstall.verify.checks import count_suite
from envs.fake import FakeSandbox
from envs.spec import Plan, Step
from tests.autoinstall.ecosystem_checks import write_tree

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
MONO = REPOS / "monorepo_subproject"
PYPROJECT = '[project]\nname = "p"\nversion = "0"\n'


def _plan(repo: Path) -> Plan:
    return EmbeddedModel(pythons=("3.11",)).propose(survey(repo), repo)


def test_the_folder_the_ci_works_in_is_built_and_every_command_runs_there() -> None:
    (lead,) = detect(MONO)
    assert isinstance(lead, Nested) and lead.name == "python@packages/core"
    plan = _plan(MONO)
    assert (plan.ecosystem, plan.workdir) == ("python@packages/core", "packages/core")
    assert plan.test_command == "cd packages/core && python -m pytest"
    assert [s.command for s in plan.steps] == ["cd packages/core && uv pip install -e '.[test]'"]
    assert all(c.command.startswith("cd packages/core && ") for c in plan.checks)
    assert {e.file for s in plan.steps for e in s.evidence} == {"packages/core/pyproject.toml"}
    why, others = (n for n in plan.notes if "project" in n)
    assert ".github/workflows/ci.yml:8: working-directory: packages/core" in why
    assert "packages/cli/ (python), tools/web/ (node)" in others and "docs" not in others  # docs are no project


def test_without_ci_a_project_with_tests_then_the_shallowest_then_by_name(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"a/pyproject.toml": PYPROJECT, "b/pyproject.toml": PYPROJECT,
                             "b/tests/test_b.py": "def test_b():\n    pass\n",
                             "examples/demo/pyproject.toml": PYPROJECT, "vendor/lib/go.mod": "module x\n",
                             "b/sub/pyproject.toml": PYPROJECT})  # inside b: part of it, not its own project
    (lead,) = detect(repo)
    assert isinstance(lead, Nested) and lead.root == "b"
    notes = survey(repo).notes
    assert any("it has tests" in n for n in notes) and any("1 other project(s) not built" in n and "a/" in n
                                                           for n in notes)
    plain = write_tree(tmp_path / "plain", {"zeta/go.mod": "module z\n\ngo 1.22\n", "alpha/x/Cargo.toml": "[package]\n"})
    assert detect(plain)[0].name == "go@zeta"  # the shallowest
    web = write_tree(tmp_path / "web", {"app/package.json": '{"scripts": {"test": "node --test"}}',
                                    "app/build_helper.py": "print('a script, no Python project')\n"})
    assert detect(web)[0].name == "node@app"  # the manifest's ecosystem, not the one loose scripts suggest


def test_a_root_that_builds_is_never_nested_and_an_empty_tree_falls_back(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "sub/package.json": "{}"})
    assert [e.name for e in detect(repo)] == ["python"] and not isinstance(detect(repo)[0], Nested)
    assert detect(write_tree(tmp_path / "e", {"README.md": "# nothing\n", "docs/requirements.txt": "x\n"})) == [FALLBACK]


def test_the_recorded_name_rebuilds_the_nested_ecosystem() -> None:
    eco = get_ecosystem("python+rust@native/py")
    assert isinstance(eco, Nested) and eco.root == "native/py" and eco.inner.name == "python+rust"
    assert "native/py" in eco.chat_environment and eco.toolchains


def test_repairs_run_in_the_folder() -> None:
    node = get_ecosystem("node@js")
    failing = Step(command="cd js && npm ci --no-audit --no-fund --prefer-offline", why="install", kind="project")
    output = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
    ctx = RepairContext(plan=Plan(ecosystem="node@js", workdir="js", steps=[failing]), failing=failing,
                        phase="install", output=output, diagnosis=node_diagnose(output), python="3.13",
                        available_pythons=["3.13"])
    repair = node.repair(ctx)
    assert repair is not None and repair.step is not None
    assert repair.step.command == "cd js && npm ci --legacy-peer-deps --no-audit --no-fund --prefer-offline"
    tests = Step(command="cd js && npm test --ignore-scripts", why="run the test suite")
    output = "Error: Cannot find module './dist/index.js'"
    built = node.repair(ctx.model_copy(update={"failing": tests, "phase": "tests", "output": output,
                                               "diagnosis": node_diagnose(output)}))
    assert built is not None and built.step is not None  # a new step of the inner rules: run in the folder too
    assert built.step.command == "cd js && npm run build --if-present"


def test_freeze_reads_the_lock_file_in_the_folder_and_the_default_collection_runs_there() -> None:
    box = FakeSandbox(rules=[("cat package-lock.json", '{"lockfileVersion": 3}')]).start()
    assert get_ecosystem("node@web/app").freeze(box) == '{"lockfileVersion": 3}'
    assert box.calls[-1].args["cwd"] == "web/app"
    InFolder(box, "web/app").exec("ls", cwd="/tmp")
    assert box.calls[-1].args["cwd"] == "/tmp"  # an absolute cwd stays as it is
    sandbox = FakeSandbox().start()
    plan = Plan(ecosystem="python@pkg", workdir="pkg", test_command="cd pkg && python -m pytest tests",
                test_runner="pytest")
    count_suite(sandbox, plan, [], 60)
    collected = [c for c in sandbox.commands() if "--collect-only" in c]
    assert collected and all(c.startswith("cd pkg && python -m pytest") for c in collected), collected
