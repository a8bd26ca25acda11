import pytest

from autoinstall.ecosystems.debian_names import package_for
from autoinstall.ecosystems.python.diagnosis import diagnose

CASES = [
    ("ModuleNotFoundError: No module named 'yaml.cyaml'", "missing_module", "yaml"),
    ("E   ImportError: No module named 'dateutil'", "missing_module", "dateutil"),
    ("src/x.c:1:10: fatal error: zlib.h: No such file or directory", "missing_header", "zlib.h"),
    ("psycopg/psycopg.h:36:10: fatal error: libpq-fe.h: No such file or directory", "missing_header", "libpq-fe.h"),
    ("/usr/bin/ld: cannot find -lpq: No such file or directory", "missing_library", "pq"),
    ("Error: pg_config executable not found.", "missing_tool", "pg_config"),
    ("bash: line 1: msgfmt: command not found", "missing_tool", "msgfmt"),
    ("ERROR: Package 'foo' requires a different Python: 3.11.2 not in '>=3.12'", "python_version", ">=3.12"),
    ("  × The current Python version (3.11.2) does not satisfy Python>=3.12", "python_version", ">=3.12"),
    ("LookupError: setuptools-scm was unable to detect version for /workspace.", "vcs_version", ""),
    ("╰─▶ Because nonexistent-dep-xyz was not found in the package registry and demo==0.1 depends on",
     "no_distribution", "nonexistent-dep-xyz"),
    ("ERROR: No matching distribution found for nonexistent-dep-xyz>=1", "no_distribution", "nonexistent-dep-xyz"),
    ("pytest: error: unrecognized arguments: --timeout=30", "unknown_pytest_option", "--timeout=30"),
    ("PytestConfigWarning: Unknown config option: asyncio_mode", "unknown_pytest_config", "asyncio_mode"),
    ("async def functions are not natively supported.", "async_tests_without_plugin", ""),
    ('connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused',
     "service_unavailable", "postgresql"),
    ("redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.",
     "service_unavailable", "redis"),
    ("something odd happened\nexit 1", "unknown", ""),
]


@pytest.mark.parametrize(("output", "kind", "subject"), CASES)
def test_diagnose_classifies_real_error_lines(output: str, kind: str, subject: str) -> None:
    d = diagnose(output)
    assert (d.kind, d.subject) == (kind, subject)
    assert d.evidence


def test_diagnose_evidence_is_the_whole_matching_line() -> None:
    d = diagnose("noise\nsrc/a.c:3:10: fatal error: ffi.h: No such file or directory\n  3 | #include <ffi.h>")
    assert d.evidence == "src/a.c:3:10: fatal error: ffi.h: No such file or directory"


def test_timeout_wins_over_output() -> None:
    assert diagnose("ModuleNotFoundError: No module named 'x'", timed_out=True).kind == "timeout"


@pytest.mark.parametrize(("kind", "name", "package"), [
    ("missing_header", "zlib.h", "zlib1g-dev"),
    ("missing_header", "libxml/xmlversion.h", "libxml2-dev"),
    ("missing_header", "gsl/gsl_math.h", "libgsl-dev"),
    ("missing_library", "pq", "libpq-dev"),
    ("missing_tool", "pg_config", "libpq-dev"),
    ("missing_tool", "msgfmt", "gettext"),
    ("missing_tool", "no-such-tool-anywhere", None),
])
def test_debian_package_for(kind: str, name: str, package: str | None) -> None:
    assert package_for(kind, name) == package


def test_service_without_port_in_the_error_line_uses_ports_elsewhere_in_the_output() -> None:
    out = "sock.connect(('localhost', 5432))\nE   OSError: [Errno 99] Cannot assign requested address"
    d = diagnose(out)
    assert (d.kind, d.subject) == ("service_unavailable", "postgresql")
    assert diagnose("ConnectionRefusedError: [Errno 111] Connection refused").subject == "network service"
