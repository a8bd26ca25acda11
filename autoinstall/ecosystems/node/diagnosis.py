"""Read a failed Node.js command's output (npm, yarn, pnpm, node-gyp, node and the test runners) and say
what went wrong."""
from __future__ import annotations

import re

from autoinstall.ecosystems.browsers import BROWSER_DOWNLOAD, BROWSER_MISSING
from autoinstall.ecosystems.rules import diagnose_by
from envs.spec import Diagnosis, DiagnosisKind

SERVICE_REFUSED = re.compile(r"connect ECONNREFUSED (?P<s>[\w.:\[\]]+:\d+|/\S+)")
"""A service the test expects on this machine is not running (`connect ECONNREFUSED 127.0.0.1:6379`)."""
NETWORK_OFF = re.compile(r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|connect ENETUNREACH|ENETUNREACH|"
                         r"request to https?://\S+ failed, reason:|Could not resolve host")
"""What Node code that needs the internet prints offline (as verification runs)."""
LOCK_OUT_OF_SYNC = re.compile(
    r"`npm ci` can only install packages when your package\.json and package-lock\.json|"
    r"Missing: \S+ from lock file|ERR_PNPM_OUTDATED_LOCKFILE|Your lockfile needs to be updated|"
    r"The lockfile would have been modified by this install")
PEER_CONFLICT = re.compile(r"ERESOLVE (?:unable to resolve dependency tree|could not resolve)")
ENGINE = re.compile(
    r'The engine "node" is incompatible with this module\. Expected version "(?P<s1>[^"]+)"|'
    r'Unsupported engine[^\n]*\n[^\n]*required: \{ node: \'(?P<s2>[^\']+)\'')
"""The package (or a dependency) asks for a Node the image does not have."""
ESM_INTEROP = re.compile(r"ERR_REQUIRE_ESM|does not provide an export named|ERR_UNKNOWN_FILE_EXTENSION|"
                         r"Must use import to load ES Module")
"""ES module / CommonJS interop that this Node does differently from the ones the project was tested on
(old loaders such as `esm`, require() of an ES module)."""
_RULES: list[tuple[DiagnosisKind, re.Pattern[str]]] = [
    ("missing_tool", BROWSER_DOWNLOAD),  # first: the failed download also prints a name lookup failure
    ("missing_tool", BROWSER_MISSING),
    ("missing_module", LOCK_OUT_OF_SYNC),
    ("no_distribution", PEER_CONFLICT),
    ("missing_header", re.compile(r"fatal error: (?P<s>[\w./+-]+\.h(?:pp)?): No such file or directory")),
    ("missing_library", re.compile(r"cannot find -l(?P<s>[\w+.-]+)")),
    ("missing_tool", re.compile(r"(?:sh: \d+: |bash: )(?P<s1>[\w.+-]+): (?:command )?not found|"
                                r"gyp ERR! find (?P<s2>Python)|"
                                r"Cannot find module '[^']*/node_modules/(?P<s3>yarn|pnpm)/")),
    ("missing_tool", ESM_INTEROP),
    ("missing_module", re.compile(r"Cannot find (?:module|package) '(?P<s>[^']+)'")),
    ("missing_tool", ENGINE),  # late: npm only warns (EBADENGINE) and installs anyway
    ("service_unavailable", SERVICE_REFUSED),
    ("network_required", NETWORK_OFF),
]


def _subject(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    subject = next((v for v in m.groupdict().values() if v), "")
    if pattern is ENGINE:
        return f"node {subject}"
    if pattern is BROWSER_DOWNLOAD:
        return "browser (download)"
    if pattern is BROWSER_MISSING:
        return "browser"
    if pattern is ESM_INTEROP:
        return "node (ES module interop)"
    if pattern is LOCK_OUT_OF_SYNC:
        return "lock file"
    if pattern is PEER_CONFLICT:
        return "peer dependencies"
    return "python3" if subject == "Python" else subject


def _unknown(output: str) -> str:
    errors = [ln for ln in output.splitlines() if re.match(r"(npm ERR!|npm error|ERR_PNPM|error |Error)", ln)]
    return "\n".join(errors[:2] or output.strip().splitlines()[-3:])


def diagnose(output: str, *, timed_out: bool = False) -> Diagnosis:
    """The first rule that matches `output`, with the line that shows it."""
    return diagnose_by(output, timed_out, _RULES, _subject, _unknown)
