"""Code as the grader compares it with a policy's tokens: comments, whitespace and the seams of joined literals
gone, so `System . exit`, `process\n  .exit`, `sys/**/.exit` and `"org.ju" + "nit"` spell what they do. Stdlib
only; the grader's text checks (changes.py) and JavaScript's (js_reach.py) read it."""
from __future__ import annotations

import re

COMMENT = re.compile(r"/\*.*?\*/|(?<![:'\"`\\])//[^\n]*", re.S)
SPACE = re.compile(r"\s+")
WORD_GAP = re.compile(r"(?<=[\w$])\s+(?=[\w$])")
JOINED = re.compile(r"""(['"`])\+\1|(['"`])\)\+\(\2""")


def squeezed(text: str) -> str:
    """The text without comments, whitespace (one space kept between two words), or the seams of literals
    joined by + (`"ex"+"it"` -> `"exit"`)."""
    text = SPACE.sub("", WORD_GAP.sub("\0", COMMENT.sub(" ", text))).replace("\0", " ")
    previous = None
    while previous != text:
        previous, text = text, JOINED.sub("", text)
    return text
