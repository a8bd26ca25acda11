"""`--help` of every command reads as typer's own conventions do: a switch shows no value type, an option
that takes a value shows its type."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
# One process renders every command's help (cli.py is the top layer: only a process of its own loads it).
RENDER_ALL = """
import json, typer.main
from typer.testing import CliRunner
import cli

def walk(command, path):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from walk(sub, [*path, name])

def long(option):
    return max(option.opts, key=len)

runner = CliRunner()
pages = {}
for path, command in walk(typer.main.get_command(cli.app), []):
    options = [p for p in command.params if p.param_type_name == "option" and not p.hidden]
    pages[" ".join(path)] = {
        "help": runner.invoke(cli.app, [*path, "--help"]).output,
        "switches": [long(p) for p in options if p.is_flag] + ["--help"],
        "valued": [long(p) for p in options if not p.is_flag and not p.count],
    }
print(json.dumps(pages))
"""


def _after(option: str, page: str) -> str:
    """What the help panel prints after an option's names (its type, or its help text for a switch)."""
    row = re.search(rf"^│\s+(?:\*\s+)?{re.escape(option)}(?:\s+-\S+)*\s+(\S+)", page, re.MULTILINE)
    assert row, f"{option} has no row in:\n{page}"
    return row.group(1)


@pytest.mark.slow
def test_switches_show_no_type_and_valued_options_do() -> None:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run([sys.executable, "-c", RENDER_ALL], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    pages = json.loads(done.stdout)
    assert {"", "run", "catalog", "catalog list", "tasks make", "export"} <= set(pages)
    for name, page in pages.items():
        assert "<bool>" not in page["help"], f"`{name} --help` shows <bool>:\n{page['help']}"
        for switch in page["switches"]:
            assert not _after(switch, page["help"]).startswith("<"), (name, switch, page["help"])
        for option in page["valued"]:
            assert _after(option, page["help"]).startswith("<"), (name, option, page["help"])
    assert any(page["switches"][:-1] for page in pages.values()), "no command has a switch besides --help"
