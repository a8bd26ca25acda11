"""`autoinstall debug`: the recorder in real bash, the CLI's errors, and the whole session through a real
pseudo-terminal (tmux) on real Docker: shell -> `uv pip install` -> exit -> verified record."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autoinstall.debug import (
    Recorded,
    add_steps,
    is_navigation,
    parse_commands,
    rc_script,
    write_history,
)
from envs.catalog import Catalog
from envs.spec import EnvSpec, Failure, Plan, SourceRecord, StepLog

ROOT = Path(__file__).parents[2]
APP = ("import typer; from autoinstall.commands.debug import debug_cmd; app = typer.Typer(); "
       "app.callback()(lambda: None); app.command('debug')(debug_cmd); app()")
"""The lead registers debug_cmd in cli.py; these tests run it on an app of their own."""


def cli(*args: str, home: Path, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTOINSTALL_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", APP, "debug", *args], cwd=ROOT, env=env, stdin=stdin,
                          capture_output=True, text=True, timeout=300, check=False)


# -- recording ------------------------------------------------------------------------------------------
def test_parse_commands_reads_status_directory_and_command_triples() -> None:
    raw = "0\0/workspace\0uv pip install six\0" "1\0/workspace/tests\0false\0" "0\0/workspace\0  \0"
    assert parse_commands(raw) == [Recorded(command="uv pip install six", exit_code=0),
                                   Recorded(command="false", exit_code=1, cwd="/workspace/tests")]


def test_navigation_is_left_out_but_anything_that_writes_is_kept() -> None:
    assert all(map(is_navigation, ["ls -la", "cd tests && ls | less", "vim setup.py", "uv pip list",
                                   "cat a 2>/dev/null", "PYTHONPATH=. pytest -x", "git status"]))
    assert not any(map(is_navigation, ["uv pip install six", "cat a > b", "cd sub && make", "apt install x",
                                       "python -c 'import six'", "echo x >> setup.cfg"]))


def test_rc_file_records_every_command_with_its_status_and_directory(tmp_path: Path) -> None:
    """The real recorder: bash -i with the rc file, fed a session; `exit` ends it like a user would."""
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "rc.bash").write_text(rc_script(str(state)))
    session = "echo hi\n\nfalse\ncd sub\ntouch made\nexit\n"
    subprocess.run(["bash", "--rcfile", str(tmp_path / "rc.bash"), "-i"], input=session, text=True,
                   cwd=tmp_path, env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]}, capture_output=True,
                   timeout=30, check=True)
    recorded = parse_commands((state / "commands").read_text())
    assert [(r.command, r.exit_code, r.cwd) for r in recorded] == [
        ("echo hi", 0, str(tmp_path)), ("false", 1, str(tmp_path)), ("cd sub", 0, str(tmp_path)),
        ("touch made", 0, str(tmp_path / "sub"))]


def _spec(image: str | None, **update: object) -> EnvSpec:
    spec = EnvSpec(status="failed", source=SourceRecord(repo="/src/demo", name="demo", commit="c0ffee" * 6),
                   model="embedded", plan=Plan(), image=image)
    return spec.model_copy(update=update)


def test_kept_commands_become_steps_run_from_the_workspace_with_evidence(tmp_path: Path) -> None:
    recorded = [Recorded(command="ls", exit_code=0), Recorded(command="uv pip install six", exit_code=0),
                Recorded(command="make", exit_code=2), Recorded(command="export A=1", exit_code=0),
                Recorded(command="make data", exit_code=0, cwd="/workspace/tests")]
    history = write_history(tmp_path, recorded)
    new = add_steps(_spec("img"), recorded, history)
    assert [s.command for s in new.steps] == ["uv pip install six", "cd tests && make data"]
    assert new.env == {"A": "1"} and all(s.why == "recorded in autoinstall debug" for s in new.steps)
    lines = (tmp_path / history).read_text().splitlines()
    cited = [lines[(s.evidence[0].line or 0) - 1] for s in new.steps]
    assert cited == ["$ uv pip install six", "$ make data"]
    assert [e.command for e in new.log] == ["uv pip install six", "cd tests && make data"]


# -- errors ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_unknown_id_says_how_to_list_ids(tmp_path: Path) -> None:
    Catalog(tmp_path / "catalog")
    result = cli("0123abcd", "--catalog", str(tmp_path / "catalog"), home=tmp_path)
    assert result.returncode == 2
    assert "No environment with id '0123abcd'" in result.stderr and "catalog list" in result.stderr


@pytest.mark.slow
def test_no_terminal_is_refused_unless_a_command_is_given(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog")
    record = catalog.upsert_spec(_spec("autoinstall-env/demo:c0ffee"), tmp_path / "env")
    result = cli(record.id, "--catalog", str(catalog.root), home=tmp_path)
    assert result.returncode == 2
    assert "needs a terminal" in result.stderr and "--command CMD" in result.stderr


@pytest.mark.slow
def test_a_record_without_an_image_shows_its_logs_instead(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    (env_dir / "logs").mkdir(parents=True)
    (env_dir / "logs" / "001-install.log").write_text("$ uv pip install -e .\n# exit 1\nerror: no pyproject")
    spec = _spec(None, failure=Failure(failure_class="install_failed", message="install step 1 failed"),
                 log=[StepLog(index=1, phase="install", command="uv pip install -e .", exit_code=1,
                              duration_s=1, log_file="logs/001-install.log")])
    catalog = Catalog(tmp_path / "catalog")
    record = catalog.upsert_spec(spec, env_dir)
    result = cli(record.id[:6], "--catalog", str(catalog.root), home=tmp_path)
    assert result.returncode == 1
    assert "error: no pyproject" in result.stdout and "uv pip install -e ." in result.stdout
    assert "no image to open a shell in" in result.stderr


# -- on Docker ------------------------------------------------------------------------------------------
@pytest.mark.docker
def test_a_recording_session_is_refused_while_the_same_environment_is_being_built(
        base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`debug --record` re-records the environment: like `run` and `batch`, one process at a time builds it."""
    from autoinstall.record.lock import build_lock  # noqa: PLC0415 (after AUTOINSTALL_HOME is set)

    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path))
    catalog = Catalog(tmp_path / "catalog")
    spec = _spec(base_image)
    record = catalog.upsert_spec(spec, tmp_path / "env")
    with build_lock(spec.source.repo, spec.source.revision, spec.model, "demo"):
        result = cli(record.id, "--catalog", str(catalog.root), "--record", "--yes", "--command", "true",
                     home=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "is being built right now" in result.stderr
    looking = cli(record.id, "--catalog", str(catalog.root), "--command", "true", home=tmp_path)
    assert looking.returncode == 0, looking.stderr  # a session that records nothing needs no lock


@pytest.fixture
def failing_env(base_image: str, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Catalog, str]]:
    """A catalogued tests_failing environment: one test needs `six`, which nothing in the repo names."""
    from autoinstall.options import BuildOptions
    from autoinstall.pipeline import build_environment
    from envs.docker import remove_image

    repo = tmp_path / "debugfixture"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=61"]\n'
                                         'build-backend = "setuptools.build_meta"\n\n'
                                         '[project]\nname = "pkg"\nversion = "0.1.0"\n')
    (repo / "pkg" / "__init__.py").write_text("def answer() -> int:\n    return 42\n")
    (repo / "tests" / "test_pkg.py").write_text(
        "import importlib.metadata\n\nfrom pkg import answer\n\n\n"
        "def test_answer():\n    assert answer() == 42\n\n\n"
        "def test_helper_is_installed():\n    assert importlib.metadata.version('six')\n")
    (repo / "README.md").write_text(f"run {uuid.uuid4().hex}\n")  # a tag of its own for this test run
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    spec = build_environment(str(repo), BuildOptions(out_dir=tmp_path / "env"))
    assert spec.failure is not None and spec.failure.failure_class == "tests_failing", spec.failure
    assert spec.image
    catalog = Catalog(tmp_path / "catalog")
    try:
        yield catalog, catalog.upsert_spec(spec, tmp_path / "env").id
    finally:
        remove_image(spec.image)


class Tmux:
    """A tmux server of our own (its own socket), one window running `command`."""

    def __init__(self, command: str) -> None:
        self.base = ["tmux", "-L", f"autoinstall-debug-{uuid.uuid4().hex[:8]}"]
        subprocess.run([*self.base, "new-session", "-d", "-x", "200", "-y", "60", command], check=True)

    def screen(self) -> str:
        return subprocess.run([*self.base, "capture-pane", "-p", "-S", "-400"], capture_output=True,
                              text=True, check=True).stdout

    def send(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", *keys], check=True)

    def wait_until(self, ready: Callable[[str], bool], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready(screen := self.screen()):
                return screen
            time.sleep(0.2)
        pytest.fail(f"the terminal did not get ready within {timeout}s; it shows:\n{self.screen()}")

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (screen := self.screen()):
                return screen
            time.sleep(0.3)
        pytest.fail(f"{text!r} did not appear within {timeout}s; the terminal shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], check=False, capture_output=True)


@pytest.mark.slow
def test_recorded_session_through_a_real_terminal_verifies_the_environment(
        failing_env: tuple[Catalog, str], tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but tmux is missing (scripts/setup.sh installs it)", pytrace=False)
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    catalog, env_id = failing_env
    run = (f"cd {ROOT} && AUTOINSTALL_HOME={tmp_path / 'home'} {sys.executable} -c \"{APP}\" debug {env_id} "
           f"--catalog {catalog.root} --record --yes; echo \"[debug exited $?]\"; sleep 600")
    term = Tmux(run)
    try:
        term.wait_for("(autoinstall debug) /workspace#", 60)
        term.send("ls", "Enter")
        term.send("uv pip install six", "Enter")
        term.wait_for("+ six==", 60)
        term.send("false", "Enter")
        # Ctrl-D ends the shell only at an empty prompt: wait for the prompt after `false` first.
        term.wait_until(lambda screen: "# false" in screen and screen.rstrip().endswith("/workspace#"), 30)
        term.send("C-d")
        screen = term.wait_for("[debug exited", 120)
    finally:
        term.close()
    assert "[debug exited 0]" in screen, screen
    assert "leave with exit or Ctrl-D" in screen and "test_helper_is_installed" in screen
    record = catalog.get(env_id)
    spec = catalog.get_spec(env_id)
    assert record.status == "verified" and spec is not None and spec.failure is None
    assert [s.command for s in spec.steps][-1] == "uv pip install six"
    assert not any(s.command in ("ls", "false") for s in spec.steps)
    env_dir = Path(record.env_dir)
    assert json.loads((env_dir / "spec.json").read_text())["status"] == "verified"
    assert 'RUN ["bash", "-c", "uv pip install six"]' in (env_dir / "Dockerfile").read_text()
    assert "six==" in (env_dir / "context" / "autoinstall" / "constraints.txt").read_text()
    session = (env_dir / spec.steps[-1].evidence[0].file).read_text()
    assert "$ ls\n" in session and "# exit 1 in /workspace\n$ false" in session
    leftover = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=autoinstall.debug={env_id}"],
                              capture_output=True, text=True, check=True).stdout
    assert leftover.strip() == ""


@pytest.mark.slow
def test_command_mode_keeps_the_steps_even_when_verification_still_fails(
        failing_env: tuple[Catalog, str], tmp_path: Path) -> None:
    catalog, env_id = failing_env
    before = catalog.get_spec(env_id)
    asked = cli(env_id, "--catalog", str(catalog.root), "--record", "--command", "mkdir -p data && ls",
                home=tmp_path / "home")
    assert asked.returncode == 0 and "pass --yes" in asked.stderr and "pkg.egg-info" in asked.stdout
    assert catalog.get_spec(env_id) == before
    kept = cli(env_id, "--catalog", str(catalog.root), "--record", "--yes", "--command", "mkdir -p data",
               home=tmp_path / "home")
    assert kept.returncode == 1, kept.stderr
    record, spec = catalog.get(env_id), catalog.get_spec(env_id)
    assert record.status == "failed" and record.failure_class == "tests_failing"
    assert spec is not None and spec.steps[-1].command == "mkdir -p data"
    assert spec.verification is not None and spec.verification.last_run is not None
    assert 'RUN ["bash", "-c", "mkdir -p data"]' in (Path(record.env_dir) / "Dockerfile").read_text()
