"""A Python package whose build or tests run Node borrows Node's toolchain (a companion): the survey's need
(build or tests, with file:line), the plan's install step after the build, the base image's packages, the replay
Dockerfile, the chat model's prompt, and Node beside Rust."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoinstall.ecosystems.detect import Accompanied, detect, get_ecosystem
from autoinstall.ecosystems.node.companion import NO_LOCK_INSTALL, companion
from autoinstall.ecosystems.rust import RustEcosystem
from autoinstall.plan.models.chat import ChatModel
from autoinstall.plan.models.replay_server import ReplayServer, tool_call
from autoinstall.record.dockerfile import render_dockerfile
from autoinstall.survey import survey
from envs.fake import FakeFactory
from envs.spec import MAX_STEPS
from tests.autoinstall.ecosystem_checks import write_tree
from tests.autoinstall.test_rust_companion import CRATE, MATURIN, _plan  # the same checkouts and model

SETUPTOOLS = ('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
              '[project]\nname = "p"\nversion = "0.1.0"\n[project.optional-dependencies]\ntest = ["pytest"]\n')
PACKAGE_JSON = json.dumps({"name": "p-js", "private": True, "dependencies": {"ms": "^2.1.3"}}, indent=2)
RUNS_NODE = 'import subprocess\n\n\ndef test_js():\n    subprocess.run(["node", "check.js"], check=True)\n'
PLAIN_TEST = "import p\n\n\ndef test_p():\n    assert p\n"


def _needs(root: Path) -> list[tuple[str, str, str, str, int | None]]:
    return [(c.ecosystem, c.needed_by, c.root, c.evidence.file, c.evidence.line) for c in survey(root).companions]


def test_tests_that_start_node_install_the_package_json_after_the_build(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": SETUPTOOLS, "p/__init__.py": "", "package.json": PACKAGE_JSON,
                             "tests/test_js.py": RUNS_NODE})
    assert [e.name for e in detect(repo)] == ["python", "node"]
    assert _needs(repo) == [("node", "tests", ".", "tests/test_js.py", 5)]
    plan = _plan(repo)
    assert plan.ecosystem == "python+node" and plan.test_runner == "pytest"
    assert plan.test_command == "python -m pytest tests"
    commands = [s.command for s in plan.steps]
    at = commands.index(NO_LOCK_INSTALL)
    # after, not before: a root node_modules would be a second top-level package to setuptools' discovery
    assert plan.steps[at - 1].kind == "project" and plan.steps[at - 1].command.startswith("uv pip install -e")
    assert [(e.file, e.line) for e in plan.steps[at].evidence] == [("tests/test_js.py", 5), ("package.json", 4)]
    assert any("tests run Node (tests/test_js.py:5" in n and "resolves the Node packages anew" in n
               for n in plan.notes)
    assert len(plan.steps) <= MAX_STEPS


def test_a_lock_file_installs_with_its_manager_and_a_subfolder_with_cd(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": SETUPTOOLS, "p/__init__.py": "",
                             "js/package.json": PACKAGE_JSON, "js/yarn.lock": "# yarn lockfile v1\n",
                             "tests/conftest.py": 'import shutil\nNODE = shutil.which("node")\n',
                             "tests/test_p.py": PLAIN_TEST})
    assert _needs(repo) == [("node", "tests", "js", "tests/conftest.py", 2)]
    plan = _plan(repo)
    commands = [s.command for s in plan.steps]
    yarn = next(i for i, c in enumerate(commands) if c.endswith("yarn@1"))
    assert commands[yarn + 1] == "cd js && yarn install --frozen-lockfile --non-interactive"
    assert plan.steps[yarn].evidence[0].file == "js/yarn.lock"
    assert [e.file for e in plan.steps[yarn + 1].evidence] == ["tests/conftest.py", "js/yarn.lock"]
    assert not any("anew" in n for n in plan.notes)


@pytest.mark.parametrize("files, evidence", [
    ({"pyproject.toml": SETUPTOOLS.replace('"setuptools>=61"', '"hatchling", "hatch-jupyter-builder>=0.5"')},
     ("pyproject.toml", 2)),
    ({"pyproject.toml": SETUPTOOLS.replace('"setuptools>=61"', '"jupyter_packaging~=0.10"')},
     ("pyproject.toml", 2)),
    ({"setup.py": 'import subprocess\nfrom setuptools import setup\n\nsubprocess.check_call(["npm", "run", "build"])\n'
                  'setup(name="p")\n'}, ("setup.py", 4)),
])
def test_a_build_that_runs_node_gets_the_toolchain_and_builds_its_front_end_itself(
        tmp_path: Path, files: dict[str, str], evidence: tuple[str, int]) -> None:
    repo = write_tree(tmp_path, {**files, "p/__init__.py": "", "package.json": PACKAGE_JSON,
                             "tests/test_p.py": PLAIN_TEST})
    assert _needs(repo) == [("node", "build", ".", *evidence)]
    plan = _plan(repo)
    assert plan.ecosystem == "python+node"
    assert not any("npm" in s.command or "yarn" in s.command for s in plan.steps)
    assert any(n.startswith(f"the build runs Node ({evidence[0]}:{evidence[1]}") for n in plan.notes)


@pytest.mark.parametrize("test", [
    PLAIN_TEST,
    'import networkx\n\n\ndef test_graph():\n    assert ["node", "edge"]\n',  # data, not a process
    'import subprocess\n\n# subprocess.run(["node", "x.js"])\n\ndef test_p():\n    pass\n',  # a comment
    'import subprocess\nimport pydot\n\n\ndef test_p():\n    pydot.Dot().add_node(pydot.Node("node"))\n',  # an argument
])
def test_a_package_json_neither_build_nor_tests_run_keeps_node_out(tmp_path: Path, test: str) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": SETUPTOOLS, "p/__init__.py": "", "tests/test_p.py": test,
                             "package.json": json.dumps({"devDependencies": {"prettier": "3"}})})
    assert survey(repo).companions == []
    plan = _plan(repo)
    assert plan.ecosystem == "python"
    assert not any("npm" in s.command for s in plan.steps)


def test_tests_that_run_node_without_a_package_json_get_the_toolchain_alone(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": SETUPTOOLS, "p/__init__.py": "", "tests/test_js.py": RUNS_NODE})
    plan = _plan(repo)
    assert plan.ecosystem == "python+node"
    assert not any("npm" in s.command for s in plan.steps)
    assert any("no package.json to install" in n for n in plan.notes)


def test_node_and_rust_both_lend_and_rust_still_picks_the_image(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": MATURIN, "Cargo.toml": CRATE, "src/lib.rs": "",
                             "package.json": PACKAGE_JSON, "tests/test_js.py": RUNS_NODE})
    assert [c.ecosystem for c in survey(repo).companions] == ["rust", "node"]
    plan = _plan(repo)
    assert plan.ecosystem == "python+node+rust" and plan.python == "3.13"  # trixie's rustc
    commands = [s.command for s in plan.steps]
    project = next(i for i, s in enumerate(plan.steps) if s.kind == "project")
    assert commands[project + 1] == NO_LOCK_INSTALL and commands[project + 2].startswith("cargo vendor ")
    assert len(plan.steps) <= MAX_STEPS
    eco = get_ecosystem(plan.ecosystem)
    assert isinstance(eco, Accompanied) and eco.toolchains[0] == RustEcosystem.toolchains[0]


class PackageFactory(FakeFactory):
    """Records the Debian packages each base image is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, ...]] = []

    def base_image(self, python: str, log: object = None, *, packages: tuple[str, ...] = ()) -> str:
        self.asked.append(packages)
        return super().base_image(python, packages=packages)


def test_get_ecosystem_lends_node_to_the_base_image_and_the_chat_text() -> None:
    eco = get_ecosystem("python+node")
    assert isinstance(eco, Accompanied) and eco.name == "python+node"
    assert eco.toolchains == get_ecosystem("python").toolchains  # any Debian's Node will do
    assert "nodejs and npm" in eco.chat_environment
    assert eco.chat_environment.startswith(get_ecosystem("python").chat_environment)
    factory = PackageFactory()
    assert eco.base_image(factory, "3.11") == "fake-base:python3.11"
    get_ecosystem("python+node+rust").base_image(factory, "3.13")
    assert factory.asked == [("nodejs", "npm"), ("nodejs", "npm", "cargo", "rustc")]
    assert companion().packages == ("nodejs", "npm") and companion().steps == companion().after == []


def test_the_replay_dockerfile_runs_the_node_install_after_the_build(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": SETUPTOOLS, "p/__init__.py": "", "package.json": PACKAGE_JSON,
                             "tests/test_js.py": RUNS_NODE})
    plan = _plan(repo)
    dockerfile = render_dockerfile(base_image="base", steps=plan.steps, env={}, name="p", commit=None,
                                   source=str(repo), pin_env=get_ecosystem(plan.ecosystem).pin_env)
    runs = [line for line in dockerfile.splitlines() if line.startswith("RUN ")]
    npm = next(i for i, line in enumerate(runs) if json.dumps(NO_LOCK_INSTALL) in line)
    assert "uv pip install -e" in runs[npm - 1]


def test_the_chat_models_prompt_names_both_languages_and_nodes_environment(tmp_path: Path) -> None:
    class Facts:
        ecosystem = "python+node"

        def model_dump_json(self, **_: object) -> str:
            return "{}"

    plan = {"test_command": "python -m pytest", "steps": [{"command": "uv pip install -e .", "why": "w",
                                                           "kind": "project"}]}
    with ReplayServer([tool_call("submit_plan", {"plan": json.dumps(plan)})]) as server:
        assert ChatModel("m", server.base_url).propose(Facts(), tmp_path).ecosystem == "python+node"
    system = server.requests[0]["messages"][0]["content"]
    assert "You set up Python + Node.js repositories" in system
    assert "nodejs and npm are installed" in system and "/opt/venv" in system
