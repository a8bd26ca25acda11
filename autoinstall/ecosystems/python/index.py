"""Ask the package index whether a distribution exists at all (PEP 503 simple API), before stubbing it."""
from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from functools import cache

DEFAULT_INDEX = "https://pypi.org/simple"


def index_url() -> str:
    """The index the installers use: $UV_INDEX_URL or $PIP_INDEX_URL, else PyPI."""
    return (os.environ.get("UV_INDEX_URL") or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX).rstrip("/")


@cache
def on_index(distribution: str, timeout_s: float = 10.0) -> bool | None:
    """True when the index has a project of that name, False when it answers 404, None when it cannot say
    (unreachable, another error): only False justifies a stub."""
    name = re.sub(r"[-_.]+", "-", distribution).lower()
    try:
        with urllib.request.urlopen(f"{index_url()}/{name}/", timeout=timeout_s) as response:
            return 200 <= response.status < 300
    except urllib.error.HTTPError as e:
        return False if e.code == 404 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def stub_refusal(distribution: str) -> str:
    """Why `distribution` must not be stubbed ("" when the index answers that it has no such project): a real
    package's install fails for a reason a stub would hide, whoever proposes the stub."""
    found = on_index(distribution)
    if found is False:
        return ""
    if found:
        return (f"a stub for {distribution} was asked for, but the package index ({index_url()}) has it: its install "
                "fails for another reason (a version no release satisfies, a Python its releases do not support, "
                "an index the sandbox cannot reach), which a stub would hide; repair that instead (pin a version, "
                "switch Python)")
    return (f"a stub for {distribution} was asked for, but the package index ({index_url()}) could not say whether "
            "it has it: only a name the index answers 404 for is stubbed; make the index reachable and build again")
