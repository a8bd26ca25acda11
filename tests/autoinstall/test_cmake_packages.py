"""A C extension whose build finds a system library through CMake: find_package's failure names the package,
and Debian's Contents index (or the map of CMake's own Find modules) names what to install (issue 23). The logs
are real (tests/fixtures/captured/cmake_find_package, the build of tests/fixtures/repos/cmake_find_package)."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_contents import ContentsIndex, parse
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.repairs import repair
from envs.spec import Plan, Step

CAPTURED = Path(__file__).parents[1] / "fixtures" / "captured" / "cmake_find_package"
CONTENTS = """\
usr/lib/x86_64-linux-gnu/cmake/json-c/json-c-config.cmake    libdevel/libjson-c-dev
usr/lib/x86_64-linux-gnu/pkgconfig/gsl.pc                    libdevel/libgsl-dev
usr/share/cmake-3.31/Modules/FindGSL.cmake                   devel/cmake-data
"""


def _repair(log: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {"bookworm": ContentsIndex(parse(CONTENTS.splitlines()))})
    output = (CAPTURED / log).read_text()
    step = Step(command="uv pip install -e '.[test]'", why="the checkout", kind="project")
    found = repair(RepairContext(plan=Plan(steps=[step]), failing=step, phase="install", output=output,
                                 diagnosis=diagnose(output), python="3.11", available_pythons=["3.11"]))
    return found.step.command.rsplit(" ", 1)[-1] if found is not None and found.step is not None else None


@pytest.mark.parametrize(("log", "name", "package"), [("gsl.log", "GSL", "libgsl-dev"),
                                                      ("json-c.log", "json-c", "libjson-c-dev")])
def test_a_failed_find_package_installs_the_package_that_ships_it(log: str, name: str, package: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    diagnosis = diagnose((CAPTURED / log).read_text())
    assert (diagnosis.kind, diagnosis.subject) == ("missing_cmake", name)
    assert _repair(log, monkeypatch) == package


def test_an_optional_package_cmake_only_warns_about_is_not_the_failure() -> None:
    output = ("-- Could NOT find Doxygen (missing: DOXYGEN_EXECUTABLE)\n"
              "CMake Warning at CMakeLists.txt:9 (find_package):\n  By not providing \"FindFoo.cmake\" in "
              "CMAKE_MODULE_PATH this project has\n  asked CMake to find a package configuration file provided by "
              "\"Foo\", but\n  CMake did not find one.\n-- Configuring done\n")
    assert diagnose(output).kind == "unknown"


@pytest.mark.parametrize(("line", "module"), [
    ("Package libxml-2.0 was not found in the pkg-config search path.", "libxml-2.0"),
    ("Package 'gsl', required by 'virtual:world', not found", "gsl"),
    ("--   No package 'json-c' found", "json-c"),
])
def test_pkg_config_not_finding_a_module_names_it(line: str, module: str) -> None:
    assert (diagnose(line).kind, diagnose(line).subject) == ("missing_library", module)
