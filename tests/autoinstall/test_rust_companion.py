"""A Python package whose build compiles Rust leads its plan and borrows Rust's toolchain (a companion):
detection order, the survey's companion need, the plan's vendoring step, the base image's packages."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.base import Companion, CompanionNeed
from autoinstall.ecosystems.detect import Accompanied, detect, get_ecosystem
from autoinstall.ecosystems.rust import RustEcosystem
from autoinstall.plan.models.embedded import EmbeddedModel
from autoinstall.survey import survey
from envs.spec import Plan, Step
from tests.autoinstall.ecosystem_checks import write_tree

MATURIN = '[build-system]\nrequires = ["maturin>=1,<2"]\nbuild-backend = "maturin"\n[project]\nname = "p"\nversion = "0.1.0"\n'
CRATE = ('[package]\nname = "p"\nversion = "0.1.0"\nedition = "2021"\n[lib]\ncrate-type = ["cdylib"]\n'
         '[dependencies]\npyo3 = "0.23"\n')
TEST = "import p\n\ndef test_p():\n    assert p\n"
VENDOR = "--versioned-dirs /opt/cargo-vendor"


def _plan(root: Path) -> Plan:
    return EmbeddedModel(pythons=("3.11", "3.13")).propose(survey(root), root)


def _vendor_step(plan: Plan) -> int:
    return next(i for i, s in enumerate(plan.steps) if VENDOR in s.command)


def test_maturin_with_a_root_cargo_toml_is_python_led_and_vendors_after_the_build(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": MATURIN, "Cargo.toml": CRATE, "src/lib.rs": "",
                             "tests/test_p.py": TEST})
    assert [e.name for e in detect(repo)] == ["python", "rust"]
    plan = _plan(repo)
    assert plan.ecosystem == "python+rust" and plan.test_runner == "pytest"
    assert plan.test_command == "python -m pytest tests"
    vendor = _vendor_step(plan)
    assert plan.steps[vendor].command.startswith("cargo vendor ")  # the crate is at the root: no cd
    assert plan.steps[vendor - 1].command == "uv pip install -e ." and plan.steps[vendor - 1].kind == "project"
    assert plan.steps[vendor].evidence[0].file == "pyproject.toml" and plan.steps[vendor].evidence[0].line == 3
    assert not any("cargo test" in c.command for c in plan.checks)  # left out: see rust/companion.py
    assert plan.python == "3.13"  # trixie's rustc (1.85), not bookworm's 1.63
    assert any("cargo/rustc" in n for n in plan.notes)


def test_maturin_with_the_crate_in_a_subfolder_vendors_there(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": MATURIN + '[tool.maturin]\nmanifest-path = "rust/Cargo.toml"\n',
                             "rust/Cargo.toml": CRATE, "rust/Cargo.lock": "version = 3\n",
                             "tests/test_p.py": TEST})
    assert [e.name for e in detect(repo)] == ["python"]
    plan = _plan(repo)
    assert plan.ecosystem == "python+rust"
    assert plan.steps[_vendor_step(plan)].command.startswith("cd rust && cargo vendor ")


def test_setuptools_rust_extension_path_names_the_crate(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools", "setuptools-rust"]\n'
                          'build-backend = "setuptools.build_meta"\n',
        "setup.py": 'from setuptools import setup\nfrom setuptools_rust import RustExtension\n'
                    'setup(name="p", rust_extensions=[RustExtension("p._p", path="native/Cargo.toml")])\n',
        "native/Cargo.toml": CRATE, "p/__init__.py": "", "tests/test_p.py": TEST})
    facts = survey(repo)
    assert [(c.ecosystem, c.root, c.evidence.file, c.evidence.line) for c in facts.companions] == [
        ("rust", "native", "setup.py", 3)]
    plan = _plan(repo)
    assert plan.steps[_vendor_step(plan)].command.startswith("cd native && cargo vendor ")


def test_setuptools_rust_in_build_requires_alone_is_enough(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": '[build-system]\nrequires = ["setuptools", "setuptools_rust>=1.7"]\n',
                             "Cargo.toml": CRATE, "test_p.py": TEST})
    assert detect(repo)[0].name == "python"
    assert survey(repo).ecosystem == "python+rust"


def test_a_rust_crate_with_a_pyproject_for_tooling_only_stays_rust_led(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"Cargo.toml": CRATE, "src/lib.rs": "pub fn f() {}\n",
                             "pyproject.toml": "[tool.ruff]\nline-length = 100\n", "scripts/gen.py": "print(1)\n"})
    assert [e.name for e in detect(repo)] == ["rust", "python"]
    plan = _plan(repo)
    assert plan.ecosystem == "rust" and plan.test_runner == "cargo"


def test_maturin_without_python_tests_stays_rust_led(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": MATURIN, "Cargo.toml": CRATE, "src/lib.rs": ""})
    assert detect(repo)[0].name == "rust"


def test_get_ecosystem_composes_the_lead_with_its_companions_toolchain() -> None:
    eco = get_ecosystem("python+rust")
    assert isinstance(eco, Accompanied) and eco.name == "python+rust"
    assert eco.toolchains[0] == RustEcosystem.toolchains[0]
    assert "cargo" in eco.chat_environment and eco.stub_env == get_ecosystem("python").stub_env

    class Factory:
        def base_image(self, *, python: str, log: object = None, packages: tuple[str, ...] = ()) -> str:
            return f"{python}:{','.join(packages)}"

    assert eco.base_image(Factory(), "3.13") == "3.13:cargo,rustc"  # type: ignore[arg-type]
    assert get_ecosystem("python").base_image(Factory(), "3.13") == "3.13:"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot lend its toolchain"):
        get_ecosystem("python+go")


def test_a_companions_env_prefixes_the_project_step_and_its_steps_go_around_it(tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pyproject.toml": MATURIN, "Cargo.toml": CRATE, "tests/test_p.py": TEST})

    class Lender:
        name = "rust"
        toolchains = ("3.13",)

        def companion(self, need: CompanionNeed | None = None, repo: Path | None = None) -> Companion:
            steps = [Step(command="make crate", why="w", evidence=[need.evidence])] if need else []
            after = [Step(command="keep crate", why="w", evidence=[need.evidence])] if need else []
            return Companion(ecosystem="rust", packages=("x-dev",), env={"K": "v"}, steps=steps, after=after)

    eco = Accompanied(get_ecosystem("python"), [Lender()])  # type: ignore[list-item]
    plan = eco.propose(survey(repo), repo, ("3.11", "3.13"))
    at = [s.command for s in plan.steps].index("make crate")
    assert [s.command for s in plan.steps[at:at + 3]] == ["make crate", "K=v uv pip install -e .", "keep crate"]
    assert plan.ecosystem == "python+rust"
