"""Text from repository code never drives the operator's terminal: `visible()` on a hostile corpus, the
CLI's consoles (lines, tables, the live line, JSON, the error printer) and the real CLI showing a catalogued
environment whose test output, name and error are escape sequences and rich markup."""
from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.markup import escape as rich_escape

from autoinstall.commands.output import VisibleConsole, escape, print_line, print_table, write_output
from autoinstall.commands.progress import Progress
from autoinstall.terminal import visible
from envs.catalog import Catalog
from envs.spec import EnvSpec, Failure, Plan, SourceRecord

ROOT = Path(__file__).parents[2]
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What must not reach a terminal from repository text: every control but \\n and \\t."""
MARKUP = "[bold red]markup[/] [link=https://evil.example]link[/link]"
HOSTILE = ("\x1b[2J\x1b[H" "\x1b]0;pwned\x1b\\" "\x1b]52;c;ZXZpbA==\x07" "\x1bP+q544e\x1b\\" "\x9b31m"
           "\x9d0;c1 title\x9c" "\x1b[1A\x1b[2K" "\x1bc" "bell\x07 nul\x00 del\x7f c1\x85 " "safe\rHIDDEN "
           + MARKUP + " lone\x1b")
SHOWN = ("safe", "HIDDEN", MARKUP, "lone")
"""What of HOSTILE stays readable however it is shown."""
PAYLOADS = ("pwned", "ZXZpbA", "544e", "c1 title", "2J")
"""What of HOSTILE goes, inside the sequences that carried it."""
RICH_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[[0-9]*[AK]|\r")
"""The sequences rich itself writes on a terminal: styles, the live display's cursor moves."""


@pytest.mark.parametrize(("text", "expected"), [
    ("plain [text]\n\ttab", "plain [text]\n\ttab"),
    ("a\x1b[2Jb", "ab"),  # CSI: clear screen
    ("\x1b[38;5;196mred\x1b[0m", "red"),  # colours from a test run
    ("\x1b[?1049h\x1b[10;20Hx", "x"),  # alternate screen, cursor position
    ("\x1b]0;pwned\x1b\\title", "title"),  # OSC window title ended by ST
    ("\x1b]0;pwned\x07title", "title"),  # ... and by BEL
    ("\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink
    ("\x1b]52;c;ZXZpbA==\x07x", "x"),  # OSC 52: write the clipboard
    ("\x1bP+q544e\x1b\\x", "x"),  # DCS
    ("\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\x", "x"),  # SOS, PM, APC
    ("\x9b2J\x9d0;t\x9c\x90q\x9cx", "x"),  # the same in 8-bit (C1) form
    ("\x1bcreset \x1b7save\x1b8 \x1b(B \x1b#8", "reset save  "),  # two-character escapes
    ("\x1b  ok", "\u241b  ok"),
    ("\x1b]0;never ended", "0;never ended"),  # an unended string: its introducer goes, the text stays
    ("\x1b[31", ""),  # an unfinished CSI
    ("lone\x1b", "lone\u241b"),
    ("\x1b\x1b[2J", "\u241b"),
    ("nul\x00 bell\x07 del\x7f", "nul\u2400 bell\u2407 del\u2421"),
    ("c1\x85\x9c", "c1\ufffd\ufffd"),
    ("safe\rHIDDEN", "safeHIDDEN"),  # nothing is overwritten
    ("line\r\nnext", "line\nnext"),
    ("abc\b\b\bxyz", "abcxyz"),
    (MARKUP, MARKUP),  # not visible()'s business: escape() and markup=False keep it text
])
def test_visible_removes_sequences_and_shows_other_controls(text: str, expected: str) -> None:
    assert visible(text) == expected


def test_visible_output_never_holds_a_control_and_is_stable() -> None:
    alphabet = "\x1b\x9b\x9c\x9d\x90\x07\\[]P^_X;0a2J\r\n\t\x00\x7f\x85 m"
    rng = random.Random(22)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        shown = visible(text)
        assert not UNSAFE.search(shown), repr(text)
        assert visible(shown) == shown
    assert visible(HOSTILE).count("safe") == 1 and all(part in visible(HOSTILE) for part in SHOWN)


def _console(*, terminal: bool) -> tuple[VisibleConsole, io.StringIO]:
    buffer = io.StringIO()
    return VisibleConsole(file=buffer, force_terminal=terminal, width=200, soft_wrap=not terminal), buffer


def _assert_safe(output: str, *, terminal: bool) -> None:
    rest = RICH_OWN.sub("", output) if terminal else output
    assert not UNSAFE.search(rest), repr(rest)
    assert all(part in output for part in SHOWN) and not any(p in output for p in PAYLOADS), repr(output)


@pytest.mark.parametrize("terminal", [False, True])
def test_the_cli_consoles_draw_hostile_text_visibly(terminal: bool, tmp_path: Path) -> None:
    con, buffer = _console(terminal=terminal)
    print_line(con, f"[red]x[/] {escape(HOSTILE)}")
    con.print(HOSTILE, markup=False, highlight=False)
    print_table(con, escape(HOSTILE), ["a", "b"], [[escape(HOSTILE), "[green]ok[/]"]])
    with Progress(con, verbose=False, log_dir=tmp_path) as progress:  # the live line, then a report
        progress.report("step", HOSTILE)
        progress.log(HOSTILE)
        progress.report("done", "")
        progress.report("note", HOSTILE)
    _assert_safe(buffer.getvalue(), terminal=terminal)
    assert progress.logfile.path is not None and progress.logfile.path.read_bytes().decode() == HOSTILE + "\n"


@pytest.mark.parametrize("terminal", [False, True])
def test_the_consoles_catch_what_reaches_them_raw(terminal: bool) -> None:
    con, buffer = _console(terminal=terminal)
    print_line(con, f"[red]x[/] {rich_escape(HOSTILE)}")  # rich's escape only: rich drops BEL and CR first
    print_table(con, "t", ["a", "b"], [[rich_escape(HOSTILE), "[green]ok[/]"]])
    output = buffer.getvalue()
    assert not UNSAFE.search(RICH_OWN.sub("", output) if terminal else output), repr(output)
    assert all(part in output for part in SHOWN) and "pwned" not in output and "ok" in output


def test_json_keeps_the_data_and_writes_no_raw_control() -> None:
    con, buffer = _console(terminal=False)
    raw = json.dumps({"m": HOSTILE, "n": [1, None]}, ensure_ascii=False)  # as pydantic writes it: C1 raw
    assert "\x9b" in raw
    con.print_json(raw)
    con.print_json(data={"m": HOSTILE})
    first, second = buffer.getvalue().split("\n}\n", 1)
    assert json.loads(first + "}") == {"m": HOSTILE, "n": [1, None]} and json.loads(second) == {"m": HOSTILE}
    assert not UNSAFE.search(buffer.getvalue().replace("\n", ""))


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_commands_own_output_is_visible_on_a_terminal_and_data_in_a_pipe() -> None:
    tty, pipe = _Tty(), io.StringIO()
    write_output(tty, HOSTILE)
    write_output(pipe, HOSTILE)
    assert tty.getvalue() == visible(HOSTILE) and pipe.getvalue() == HOSTILE


# -- the real CLI -----------------------------------------------------------------------------------------
def autoinstall(*args: str, home: Path, terminal: bool = False,
                **env: str) -> subprocess.CompletedProcess[str]:
    unset = ("AUTOINSTALL_DEBUG", "FORCE_COLOR", "NO_COLOR")
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    environ |= {"AUTOINSTALL_HOME": str(home), "COLUMNS": "200", **env}
    if terminal:  # rich draws as on a terminal: styles, rich tables, lines cut at the width
        environ["FORCE_COLOR"] = "1"
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          env=environ, timeout=120, cwd=ROOT, check=False)


def hostile_catalog(tmp_path: Path) -> tuple[Path, str]:
    """A catalog holding one failed environment whose name, error and test output are HOSTILE."""
    spec = EnvSpec(status="failed", model="embedded", plan=Plan(), python="3.11",
                   source=SourceRecord(repo=f"/src/{HOSTILE}", name=HOSTILE, commit="a" * 40),
                   failure=Failure(failure_class="tests_failing", message=HOSTILE, evidence=HOSTILE))
    record = Catalog(tmp_path / "catalog").upsert_spec(spec, tmp_path / "env")
    return tmp_path / "catalog", record.id


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.slow
def test_catalog_show_and_list_of_a_hostile_environment(terminal: bool, tmp_path: Path) -> None:
    catalog, env_id = hostile_catalog(tmp_path)
    printed: dict[str, str] = {}
    for args in (["catalog", "show", env_id], ["catalog", "list"]):
        done = autoinstall(*args, "--catalog", str(catalog), home=tmp_path, terminal=terminal)
        assert done.returncode == 0, done.stderr
        assert not UNSAFE.search(RICH_OWN.sub("", done.stdout)), repr(done.stdout)
        assert not any(p in done.stdout for p in PAYLOADS), repr(done.stdout)
        assert MARKUP in done.stdout if args[1] == "show" else "safeHIDDEN" in done.stdout
        printed[args[1]] = done.stdout
    if terminal:
        return  # what follows reads a pipe's output, the same in both cases
    # repo and error of the record; name, error, evidence of the spec (a pipe cuts no line)
    assert printed["show"].count("safeHIDDEN") == 5
    as_json = autoinstall("catalog", "show", env_id, "--json", "--catalog", str(catalog), home=tmp_path)
    data = json.loads(as_json.stdout)
    assert data["record"]["failure_message"] == HOSTILE and data["spec"]["source"]["name"] == HOSTILE


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.slow
def test_the_error_printer_shows_a_hostile_path_visibly(debug: bool, tmp_path: Path) -> None:
    done = autoinstall("plan", str(tmp_path / f"no-{HOSTILE.replace(chr(0), '')}"), home=tmp_path,
                       **({"AUTOINSTALL_DEBUG": "1"} if debug else {}))
    assert done.returncode == 2 and "no such directory" in done.stderr.lower()
    assert not UNSAFE.search(done.stderr), repr(done.stderr)
    assert "[bold red]markup[/] [link=https:/evil" in done.stderr  # the path: // is / there
    assert "safeHIDDEN" in done.stderr and "pwned" not in done.stderr
    assert ("Traceback (most recent call last)" in done.stderr) is debug
