"""The README's two commands are the ones CI runs: `.ci/run` must run the set-up script and then exactly the
README's test command, so the figure the README gives for the whole suite is the suite CI runs."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The commands of the README's first bash block, comments removed."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README.md has no bash block with its two commands"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_the_readmes_test_command_and_set_up():
    first, second = readme_commands()[:2]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert first.startswith("./scripts/setup.sh")
    assert "./scripts/setup.sh" in ci
    assert ci[-1] == second, f".ci/run ends with {ci[-1]!r}, the README's test command is {second!r}"
