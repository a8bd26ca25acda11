"""Read a failed Cargo command's output (cargo, rustc, a -sys crate's build script, libtest) and say what
went wrong."""
from __future__ import annotations

import re

from autoinstall.ecosystems.rules import diagnose_by
from envs.spec import Diagnosis, DiagnosisKind

RUSTC_TOO_OLD = re.compile(
    r"package `(?P<p1>\S+) v(?P<v1>\S+)` cannot be built because it requires rustc (?P<r1>[\d.]+)|"
    r"(?P<p2>[\w-]+)@(?P<v2>\S+) requires rustc (?P<r2>[\d.]+)|"
    r"feature `edition(?P<e>\d{4})` is required|"
    r"(?P<l>`let` expressions in this position are unstable)")
"""A crate (the project or a dependency) needs a newer rustc than the image's Debian one (let chains: 1.88)."""
SERVICE_REFUSED = re.compile(r"Connection refused \(os error 111\)|ConnectionRefused")
"""A service the test expects is not running (Rust's io::Error rarely says where)."""
NETWORK_OFF = re.compile(
    r"failed to lookup address information|Temporary failure in name resolution|Name or service not known|"
    r"Network is unreachable \(os error 101\)|dns error|error trying to connect: .*(?:dns|resolve)|"
    r"Could not resolve host")
"""What Rust code that needs the internet prints offline (as verification runs)."""
LOCK_STALE = re.compile(r"the lock file \S+ needs to be updated but --locked was passed|"
                        r"cannot update the lock file \S+ because --locked was passed")

_RULES: list[tuple[DiagnosisKind, re.Pattern[str]]] = [
    ("missing_tool", RUSTC_TOO_OLD),
    ("missing_library", re.compile(
        r"The system library `(?P<s1>[\w+.-]+)` required by crate `[^`]+` was not found|"
        r"Package '?(?P<s2>[\w+.-]+?)'?,? (?:was not found in the pkg-config search path|"
        r"required by '[^']*', not found)|"
        r"Could not find directory of (?P<s3>OpenSSL) installation|"
        r"(?:cannot|unable to) find (?:library )?-l(?P<s4>[\w+.-]+)")),
    ("missing_header", re.compile(
        r"fatal error: '?(?P<s>[\w./+-]+\.h(?:pp)?)'?(?::)? (?:No such file or directory|file not found)")),
    ("missing_tool", re.compile(
        r"is `(?P<s1>[\w.+-]+)` not installed\?|Could not find `(?P<s2>[\w.+-]+)`")),
    ("missing_module", LOCK_STALE),
    ("service_unavailable", SERVICE_REFUSED),
    ("network_required", NETWORK_OFF),
]


def rustc_needed(diagnosis: Diagnosis) -> tuple[str, str] | None:
    """(crate@version or "", the rustc it needs) for a RUSTC_TOO_OLD diagnosis, else None."""
    if diagnosis.kind != "missing_tool" or not diagnosis.subject.startswith("rustc "):
        return None
    version, _, crate = diagnosis.subject.removeprefix("rustc ").partition(" for ")
    return crate, version


def _subject(pattern: re.Pattern[str], m: re.Match[str]) -> str:
    """The name the failure is about; for a too-old rustc `rustc 1.88 for crate@1.2.3`."""
    groups = m.groupdict()
    if pattern is RUSTC_TOO_OLD:
        if groups.get("l"):
            return "rustc 1.88 for let chains"
        if groups.get("e"):
            return f"rustc {'1.85' if groups['e'] == '2024' else '1.56'} for the edition {groups['e']}"
        crate = groups.get("p1") or groups.get("p2")
        return f"rustc {groups.get('r1') or groups.get('r2')} for {crate}@{groups.get('v1') or groups.get('v2')}"
    subject = next((v for v in groups.values() if v), "")
    if pattern is LOCK_STALE:
        return "Cargo.lock"
    return "openssl" if subject == "OpenSSL" else subject.removeprefix("lib") if groups.get("s2") else subject


def _unknown(output: str) -> str:
    errors = [ln for ln in output.splitlines() if ln.startswith("error")]
    return "\n".join(errors[:2] or output.strip().splitlines()[-3:])


def diagnose(output: str, *, timed_out: bool = False) -> Diagnosis:
    """The first rule that matches `output`, with the line that shows it."""
    return diagnose_by(output, timed_out, _RULES, _subject, _unknown)
