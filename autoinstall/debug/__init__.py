"""`autoinstall debug`: a shell in a new container at an environment's last good state, and keeping what
the user ran there as new steps (snapshotted, verified again, replayed by the Dockerfile, catalogued).

Files: `shell.py` (the container and its recording rc file), `steps.py` (recorded commands -> steps),
`rerecord.py` (where a session starts; recording its result through `autoinstall.record.finish`).
"""
from __future__ import annotations

from autoinstall.debug.rerecord import (
    check_present,
    failing_entry,
    failing_output,
    load,
    record_result,
    reverify,
    start_image,
    tail,
)
from autoinstall.debug.shell import STATE_DIR, WORKDIR, DebugError, DebugShell, rc_script
from autoinstall.debug.steps import (
    RECORDED_WHY,
    Recorded,
    add_steps,
    is_navigation,
    keepable,
    parse_commands,
    to_steps,
    write_history,
)

__all__ = ["RECORDED_WHY", "STATE_DIR", "WORKDIR", "DebugError", "DebugShell", "Recorded", "add_steps",
           "check_present", "failing_entry", "failing_output", "is_navigation", "keepable", "load",
           "parse_commands", "rc_script", "record_result", "reverify", "start_image", "tail", "to_steps",
           "write_history"]
