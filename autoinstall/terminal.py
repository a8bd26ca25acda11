"""`visible(text)`: text from repository code made safe to show on the operator's terminal.

Tests, builds and repositories print whatever they like; shown raw, an escape sequence clears the screen,
sets the window title, moves the cursor or rewrites the clipboard. What `visible()` does:

- Escape sequences are removed, in their 7-bit (ESC ...) and 8-bit (C1) forms: CSI (`ESC[2J`, colours,
  an unfinished one too), OSC / DCS / SOS / PM / APC strings ended by BEL or ST (`ESC]0;title ESC\\`),
  and the short escapes (`ESC c`, `ESC 7`, `ESC ( B`). The text around them stays.
- `\\r` and backspace are dropped (`\\r\\n` becomes `\\n`), as rich itself drops them: what follows lands
  after what came before, so nothing on a line is overwritten or hidden.
- Every other control is shown: C0 (NUL, BEL, a lone ESC...) and DEL as their Unicode control pictures
  (`␀`, `␇`, `␛`, `␡`), C1 (U+0080-U+009F) as `�`. `\\n` and `\\t` stay as they are.

The result holds no control character but `\\n` and `\\t`, so `visible(visible(t)) == visible(t)`.
Only what is shown goes through it: logs, specs, JSON output and the catalog keep the text as it was.
"""
from __future__ import annotations

import re

_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # CSI: parameters, intermediates, final
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)"  # OSC DCS SOS PM APC
    r"|\x1b[\x21-\x2f]?[\x30-\x7e]",  # the other escapes (an unended string's introducer too)
)
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SHOWN = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)} | {
    0x08: None, 0x0D: None, 0x7F: "\u2421"} | {c: "\ufffd" for c in range(0x80, 0xA0)}


def visible(text: str) -> str:
    """`text` without escape sequences, `\\r` or backspace, other controls shown as symbols (see above)."""
    if not _UNSAFE.search(text):
        return text
    return _SEQUENCE.sub("", text).translate(_SHOWN)

