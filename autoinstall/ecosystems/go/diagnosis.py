"""Read a failed Go command's output (go build, go test, cgo's C compiler) and say what went wrong."""
from __future__ import annotations

import re

from autoinstall.ecosystems.rules import diagnose_by
from envs.spec import Diagnosis, DiagnosisKind

SERVICE_REFUSED = re.compile(r"dial (?:tcp|unix)\S* (?P<s>[^\s:]*:?\d+|/\S+): connect: connection refused")
"""A service the test expects on this machine is not running (`dial tcp 127.0.0.1:5432: connect: ...`)."""
NETWORK_OFF = re.compile(
    r"lookup \S+(?: on \S+)?: [^\n]*(?:no such host|server misbehaving|Temporary failure in name resolution|"
    r"i/o timeout|connection refused|network is unreachable)|connect: network is unreachable|"
    r"connect: no route to host|dial tcp: lookup \S+|Could not resolve host")
"""What Go code that needs the internet prints offline (as verification runs): a failed DNS lookup (the
offline sandbox's resolver refuses: `lookup h on 127.0.0.1:53: read udp ...: connection refused`), or no
route."""
TOOLCHAIN = re.compile(
    r"go(?:\.mod|\.work)? requires go >= (?P<s1>[\d.]+\w*) \(running go|"
    r"go: download (?P<s2>go[\d.]+\w*) for \S+: toolchain not available")

_LIBRARY = re.compile(
    r"cannot find -l(?P<s1>[\w+.-]+)|Package '?(?P<s2>[\w+.-]+?)'?,? (?:was not found in the pkg-config "
    r"search path|required by '[^']*', not found)")
_RULES: list[tuple[DiagnosisKind, re.Pattern[str]]] = [
    ("missing_tool", TOOLCHAIN),
    ("missing_header", re.compile(r"fatal error: (?P<s>[\w./+-]+\.h(?:pp)?): No such file or directory")),
    ("missing_library", _LIBRARY),
    ("missing_tool", re.compile(r'exec: "(?P<s>[\w.+-]+)": executable file not found in \$PATH')),
    ("missing_module", re.compile(
        r"missing go\.sum entry for module providing package (?P<s1>\S+)|"
        r"missing go\.sum entry for go\.mod file|"
        r"updates to go\.mod needed|no required module provides package (?P<s2>\S+?);")),
    ("service_unavailable", SERVICE_REFUSED),
    ("network_required", NETWORK_OFF),
]


def _toolchain_name(version: str) -> str:
    """`go 1.22` lines mean go1.22.0 since Go 1.21; older releases were named go1.N."""
    version = version.removeprefix("go")
    parts = version.split(".")
    if len(parts) == 2 and parts[1].isdigit() and int(parts[1]) >= 21:
        version += ".0"
    return f"go{version}"


def _subject(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    subject = next((v for v in m.groupdict().values() if v), "")
    if pattern is TOOLCHAIN:
        return _toolchain_name(subject)
    return subject.removeprefix("lib") if m.groupdict().get("s2") and pattern is _LIBRARY else subject


def diagnose(output: str, *, timed_out: bool = False) -> Diagnosis:
    """The first rule that matches `output`, with the line that shows it."""
    return diagnose_by(output, timed_out, _RULES, _subject,
                       lambda text: "\n".join(text.strip().splitlines()[-3:]))
