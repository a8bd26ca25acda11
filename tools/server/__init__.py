"""The tool server: one stdlib-only process inside the sandbox, spoken to with JSON lines.

Runs on Python 3.8+ (whatever python3 the container has), so no match statements, no `X | Y`
outside annotations, and nothing outside the standard library. Deployed as a zipapp by
`tools/session.py`; on the host, `python -m tools.server --root DIR` runs it too.
"""

PROTOCOL_VERSION = 1
