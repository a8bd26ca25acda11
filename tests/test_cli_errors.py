"""main() catches the one error root (UserFacingError) once: one red line, exit 2, a traceback only when
asked for."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
RAISE = """
import runpy, sys
from autoinstall.source import SourceError
from envs.catalog import CatalogError
from tools.session import ToolServerTimeout

errors = {"builder": SourceError, "environment": CatalogError, "tool server": ToolServerTimeout,
          "bug": KeyError}
cli = runpy.run_path(sys.argv[1], run_name="cli")  # cli.py as `autoinstall` runs it, plus one command
error = errors[sys.argv[2]]


def boom() -> None:
    raise error("no such thing [here]; pass --other to use another")


cli["app"].command("boom")(boom)
cli["COMMANDS"].add("boom")
sys.argv = ["autoinstall", "boom"]
cli["main"]()
"""


def raise_in_cli(kind: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "raise.py"
    script.write_text(RAISE)
    environ = {k: v for k, v in os.environ.items() if k != "AUTOINSTALL_DEBUG"} | env
    return subprocess.run([sys.executable, str(script), str(ROOT / "cli.py"), kind], capture_output=True,
                          text=True, cwd=ROOT, env={**environ, "PYTHONPATH": str(ROOT)}, timeout=120,
                          check=False)


@pytest.mark.parametrize("kind", ["builder", "environment", "tool server"])
def test_each_error_root_is_one_line_and_exit_2(kind: str, tmp_path: Path) -> None:
    done = raise_in_cli(kind, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["error: no such thing [here]; pass --other to use another"]


@pytest.mark.parametrize("kind", ["builder", "environment", "tool server"])
@pytest.mark.slow
def test_autoinstall_debug_adds_the_traceback(kind: str, tmp_path: Path) -> None:
    done = raise_in_cli(kind, tmp_path, AUTOINSTALL_DEBUG="1")
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr and "in boom" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: no such thing [here]; pass --other to use another"


def test_other_exceptions_are_bugs_and_keep_their_traceback(tmp_path: Path) -> None:
    done = raise_in_cli("bug", tmp_path)
    assert done.returncode == 1 and "Traceback" in done.stderr and "KeyError" in done.stderr


@pytest.mark.slow
def test_a_real_environment_error_through_the_real_cli(tmp_path: Path) -> None:
    argv = [sys.executable, str(ROOT / "cli.py"), "catalog", "show", "ffffffffffff", "--catalog",
            str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
                          env={**os.environ, "AUTOINSTALL_HOME": str(tmp_path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr and "catalog list" in done.stderr
    assert done.stderr.startswith("error: No environment with id 'ffffffffffff'")


def test_the_three_package_roots_share_the_one_root() -> None:
    from autoinstall.debug import DebugError
    from autoinstall.errors import AutoinstallError
    from autoinstall.plan.models import ModelError
    from autoinstall.source import SourceError
    from envs.catalog import CatalogError
    from envs.errors import EnvError, UserFacingError
    from envs.export import ExportError
    from tools.session import ToolServerError

    assert all(issubclass(e, UserFacingError) for e in (AutoinstallError, EnvError, ToolServerError))
    assert all(issubclass(e, AutoinstallError) for e in (SourceError, ModelError, DebugError))
    assert issubclass(SourceError, ValueError) and issubclass(ModelError, RuntimeError)
    assert issubclass(CatalogError, EnvError) and issubclass(ExportError, EnvError)
