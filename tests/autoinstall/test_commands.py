"""The commands' output and defaults, without Docker: the log of long steps, tables when piped, the flags'
defaults (the configuration models')."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text
from typer.testing import CliRunner

from autoinstall.batch.fake import fake_build
from autoinstall.commands.base import base_app
from autoinstall.commands.batch import batch_cmd
from autoinstall.commands.output import print_table
from autoinstall.commands.progress import Progress
from autoinstall.commands.run import run_cmd
from autoinstall.options import BatchOptions, Budgets, BuildOptions, docker_factory
from envs.spec import EnvSpec, Plan

BUILD_LINES = [f"Step {i}/300 : RUN apt-get install -y package-{i}" for i in range(300)]


def console(*, terminal: bool = False) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=100, soft_wrap=not terminal), buffer


# --- the log of long steps ---------------------------------------------------------------------------------

@pytest.mark.parametrize("terminal", [False, True])
def test_by_default_build_output_goes_to_a_log_file_under_the_home(terminal: bool, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    con, shown = console(terminal=terminal)
    with Progress(con, log_name="base-py3.11") as progress:
        progress.report("phase", "base image for Python 3.11")
        for line in BUILD_LINES:
            progress.log(line)
    progress.print_log_path()
    path = progress.logfile.path
    assert path is not None and path.parent == tmp_path / "home" / "logs" and "base-py3.11" in path.name
    assert path.read_text().splitlines() == BUILD_LINES
    assert "package-1" not in shown.getvalue()
    lines = [line for line in Text.from_ansi(shown.getvalue()).plain.splitlines() if line.strip()]
    assert lines[-1] == f"base image build log: {path}" and len(lines) <= 3


def test_verbose_streams_the_output_and_still_writes_the_log(tmp_path: Path) -> None:
    con, shown = console()
    with Progress(con, verbose=True, log_dir=tmp_path) as progress:
        for line in BUILD_LINES:
            progress.log(line)
    assert all(line in shown.getvalue().splitlines() for line in BUILD_LINES)
    assert progress.logfile.path is not None and progress.logfile.path.read_text().splitlines() == BUILD_LINES


def test_quiet_shows_nothing_and_nothing_logged_leaves_no_file(tmp_path: Path) -> None:
    con, shown = console()
    with Progress(con, quiet=True, verbose=True, log_dir=tmp_path) as progress:
        progress.report("phase", "install")
        progress.log("a line")
    assert shown.getvalue() == "" and progress.logfile.path is not None
    with Progress(con, log_dir=tmp_path / "empty") as idle:
        idle.report("phase", "install")
    assert idle.logfile.path is None and not (tmp_path / "empty").exists()


def test_the_docker_factory_passes_the_cli_logger_to_base_images(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, object, tuple[str, ...]]] = []
    monkeypatch.setattr("envs.baseimage.ensure_base_image",
                        lambda *, python, log=None, packages=(), toolchains=():
                        calls.append((python, log, packages + toolchains)) or "base:tag")
    lines: list[str] = []
    factory = docker_factory(log=lines.append)
    assert factory.base_image("3.11") == "base:tag" and calls[-1] == ("3.11", lines.append, ())
    factory.base_image("3.13", log=print, packages=("golang-go",))
    assert calls[-1] == ("3.13", print, ("golang-go",))
    factory.base_image("3.13", packages=("cargo",), toolchains=("rust-1.95.0",))  # the host's, layered on top
    assert calls[-1] == ("3.13", lines.append, ("cargo", "rust-1.95.0"))


@pytest.mark.parametrize(("args", "shown", "hidden"), [([], 4, "package-7"), (["--verbose"], 300, "")])
def test_base_build_prints_a_few_lines_or_everything_with_verbose(
        args: list[str], shown: int, hidden: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_ensure(*, python: str, ca_bundle: object, rebuild: bool, log: Any) -> str:
        for line in BUILD_LINES:
            log(line)
        return f"autoinstall-base:py{python}-x"

    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path))
    monkeypatch.setattr("envs.baseimage.ensure_base_image", fake_ensure)
    app = typer.Typer()
    app.add_typer(base_app, name="base")
    done = CliRunner().invoke(app, ["base", "build", *args])
    assert done.exit_code == 0, done.output
    assert done.stdout == "autoinstall-base:py3.11-x\n"
    assert len(done.stderr.splitlines()) <= shown + 3 and "base image build log:" in done.stderr
    assert not hidden or hidden not in done.stderr
    assert [p.read_text().count("\n") for p in (tmp_path / "logs").iterdir()] == [300]


# --- tables -------------------------------------------------------------------------------------------------

def test_piped_tables_are_plain_aligned_lines_never_cut() -> None:
    con, shown = console()
    long = "uv pip install -e '.[test]' " + "x" * 150
    print_table(con, "Plan", ["#", "command", "why"], [["1", escape(long), "[dim]a[/]"], ["10", "b", "c"]],
                right=["#"])
    width = len(long)
    assert shown.getvalue().splitlines() == ["Plan", f" #  {'command'.ljust(width)}  why", f" 1  {long}  a",
                                             f"10  {'b'.ljust(width)}  c"]


def test_terminal_tables_fit_the_terminal() -> None:
    con, shown = console(terminal=True)
    print_table(con, "Plan", ["#", "command"], [["1", "y" * 300]])
    lines = Text.from_ansi(shown.getvalue()).plain.splitlines()
    assert "Plan" in lines[0] and all(len(line) <= 100 for line in lines) and len(lines) >= 4


# --- defaults -----------------------------------------------------------------------------------------------

def app_with(*commands: tuple[str, Any]) -> typer.Typer:
    app = typer.Typer()
    for name, command in commands:
        app.command(name)(command)
    return app


def test_the_flags_defaults_are_the_models_defaults() -> None:
    params = {p.name: p.default for p in typer.main.get_command(app_with(("run", run_cmd))).params}
    budgets, build = Budgets.model_fields, BuildOptions.model_fields
    assert params["max_repairs"] == budgets["max_repairs"].default
    assert params["wall_s"] == budgets["wall_s"].default
    assert params["step_timeout"] == budgets["step_timeout_s"].default
    for name in ("model", "threshold", "latest_deps", "rebuild_check", "python"):
        assert params[name] == build[name].default, name
    batch = {p.name: p.default for p in typer.main.get_command(app_with(("batch", batch_cmd))).params}
    assert batch["time_budget"] == budgets["wall_s"].default and batch["model"] == build["model"].default
    assert batch["step_timeout"] == budgets["step_timeout_s"].default
    assert batch["retry_failed"] == BatchOptions.model_fields["retry_failed"].default
    base = typer.main.get_command(base_app).commands["build"]  # type: ignore[attr-defined]
    assert {p.name: p.default for p in base.params}["python"] == Plan.model_fields["python"].default


def capture(monkeypatch: pytest.MonkeyPatch) -> list[BuildOptions]:
    seen: list[BuildOptions] = []

    def build(repo: str, options: BuildOptions, report: Any, factory: object = None) -> EnvSpec:
        seen.append(options)
        return fake_build(repo, options, report)

    monkeypatch.setattr("autoinstall.pipeline.build_environment", build)
    return seen


def test_run_and_batch_without_flags_build_with_the_default_options(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    seen = capture(monkeypatch)
    done = CliRunner().invoke(app_with(("run", run_cmd), ("batch", batch_cmd)), ["run", "fake://one"])
    assert done.exit_code == 0, done.output
    assert seen[-1] == BuildOptions()
    (tmp_path / "repos.txt").write_text("fake://two\n")
    done = CliRunner().invoke(app_with(("run", run_cmd), ("batch", batch_cmd)),
                              ["batch", str(tmp_path / "repos.txt"), "--json"])
    assert done.exit_code == 0, done.output
    assert seen[-1].model_copy(update={"out_dir": None}) == BuildOptions()


def test_flags_reach_the_build_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    seen = capture(monkeypatch)
    app = app_with(("run", run_cmd), ("batch", batch_cmd))
    done = CliRunner().invoke(app, ["run", "fake://one", "--max-repairs", "3", "--time-budget", "60",
                                    "--step-timeout", "5", "--threshold", "0.5", "--model", "openai:m",
                                    "--base-url", "http://127.0.0.1:9/v1"])  # a chat model needs its endpoint
    assert done.exit_code == 0, done.output
    assert seen[-1].budgets == Budgets(max_repairs=3, wall_s=60, step_timeout_s=5)
    assert (seen[-1].threshold, seen[-1].model) == (0.5, "openai:m")
    (tmp_path / "repos.txt").write_text("fake://two\n")
    done = CliRunner().invoke(app, ["batch", str(tmp_path / "repos.txt"), "--time-budget", "60", "--json"])
    assert done.exit_code == 0, done.output
    assert seen[-1].budgets == Budgets(wall_s=60)
    (tmp_path / "more.txt").write_text("fake://three\n")
    done = CliRunner().invoke(app, ["batch", str(tmp_path / "more.txt"), "--step-timeout", "1200", "--json"])
    assert done.exit_code == 0, done.output
    assert seen[-1].budgets == Budgets(step_timeout_s=1200)  # what a step that hung is told to raise
