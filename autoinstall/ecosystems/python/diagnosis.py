"""Read a failed command's output and say what went wrong, in terms a repair rule can act on."""
from __future__ import annotations

import re

from autoinstall.ecosystems.browsers import BROWSER_MISSING, BROWSER_WORDS
from autoinstall.ecosystems.python.pypi_names import NAMESPACES
from autoinstall.ecosystems.python.timemachine import drift_subject
from autoinstall.ecosystems.services import WELL_KNOWN_PORTS
from envs.spec import Diagnosis, DiagnosisKind

SERVICE_PORTS = WELL_KNOWN_PORTS
"""Well-known service ports: those the environment can run (autoinstall/ecosystems/services.py) and others."""

NETWORK_OFF = re.compile(
    r"Temporary failure in name resolution|Name or service not known|No address associated with hostname|"
    r"\[Errno -[235]\]|Network is unreachable|\[Errno 101\]|No route to host|Cannot assign requested address|"
    r"\[Errno 99\]|Could not resolve host|getaddrinfo failed|NameResolutionError")
"""What code that needs the internet prints when it runs offline (as verification does): not a service."""
STUB_USED = re.compile(r"AutoinstallStubError: (?P<s>[\w.\[\]-]+)")
MISSING_CMAKE = re.compile(
    r"CMake Error at [^\n]*\n(?:[^\n]*\n){0,8}?[^\n]*?"
    r"(?:provided by\s+\"(?P<s1>[\w+.-]+)\"|Could NOT find (?P<s2>[\w+.-]+))")
"""CMake's find_package failing (an error, not the warning an optional package gives): no config file of the
package (`FooConfig.cmake`/`foo-config.cmake`), or a Find module's search (`Could NOT find ZLIB (missing:
ZLIB_LIBRARY ...)`); the name is CMake's package name."""
PKG_CONFIG_MISSING = re.compile(
    r"(?:Package '?(?P<s1>[\w+.-]+)'?,? (?:was not found in the pkg-config search path|required by .{1,80}, not found)|"
    r"No package '(?P<s2>[\w+.-]+)' found)")
"""pkg-config (and CMake's pkg_check_modules, meson's dependency()) not finding a module: a pkg-config name."""
_DATA_FILE = r"(?![\w.+-]*\.(?:json|ya?ml|txt|csv|tsv|cfg|conf|ini|toml|xml|html?|md|rst|log|dat|db|sqlite3?|pkl|npy|npz|" \
             r"gz|bz2|xz|zip|tar|png|jpe?g|gif|svg|pdf|py|pyc|c|h|cpp|so|lock|pem|key|crt)')"
"""Not a file name with a data or source file's extension: a missing data file is not a missing program."""
MISSING_TOOL = re.compile(
    r"(?:(?P<s1>pg_config|mysql_config|xml2-config|xslt-config|pkg-config|cmake|swig|rustc|cargo|"
    r"msgfmt|gfortran|protoc|make|ninja) (?:executable )?not found|"
    r"(?:(?:^|[\s:])(?:/usr)?(?:/bin/)?(?:ba|da|z)?sh: (?:line \d+: |\d+: )?)(?P<s2>[\w.+-]+): (?:command )?not found|"
    r"error: command '(?P<s3>[\w./+-]+)' failed: No such file or directory|"
    rf"FileNotFoundError: \[Errno 2\] No such file or directory: '{_DATA_FILE}(?P<s4>[\w.+-]+)'|"
    r"where None = <function which at 0x[0-9a-f]+>\('(?P<s5>[\w.+-]+)'|"
    r"Command '(?P<s6>[\w.+-]+)(?: [^'\n]*)?' returned non-zero exit status 127\b|"
    r"CompletedProcess\(args='(?P<s7>[\w.+-]+)(?: [^'\n]*)?', returncode=127\b)", re.M)
"""A program the build or a test runs that is not installed: a shell's `not found`, Python's FileNotFoundError
from starting it, an assert on shutil.which, or a shell command's exit status 127 (the shell's own for a
command it cannot find)."""

_RULES: list[tuple[DiagnosisKind, re.Pattern[str]]] = [
    ("stub_used", STUB_USED),
    ("vcs_version", re.compile(r"(setuptools[-_]scm was unable to detect version.*|"
                               r"LookupError: .*unable to detect version.*|"
                               r"Error getting the version from source `vcs`.*)")),
    ("python_version", re.compile(
        r"(?:requires a different Python: \S+ not in '(?P<s1>[^']+)'|"
        r"current Python version \([\d.]+\) does not satisfy Python(?P<s2>[<>=!~][^\s,]*(?:,[<>=!~][^\s,]*)*)|"
        r"requires-python:? ?(?P<s3>[<>=!~][\d.,<>=!~*]+) .*incompatible)")),
    ("missing_header", re.compile(r"fatal error: (?P<s>[\w./+-]+\.h(?:pp)?): No such file or directory")),
    ("missing_cmake", MISSING_CMAKE),
    ("missing_library", PKG_CONFIG_MISSING),
    ("missing_library", re.compile(r"(?:/usr/bin/ld: cannot find -l(?P<s>[\w+.-]+)|"
                                   r"cannot find -l(?P<s2>[\w+.-]+))")),
    ("missing_tool", BROWSER_MISSING),  # first: selenium's prints a failed download, and "No such file" lines
    ("missing_tool", MISSING_TOOL),
    ("no_distribution", re.compile(
        r"(?:Because (?P<s1>[\w.\[\]-]+) was not found in the package registry|"
        r"No matching distribution found for (?P<s2>[\w.\[\]-]+)|"
        r"Because there are no versions of (?P<s3>[\w.\[\]-]+) and)")),
    ("installer_parse_error", re.compile(
        r"error: (?:Expected .* found .*: (?P<s1>\S+?):\d+:\d+|Failed to parse:? `?(?P<s2>[^`\n]+)`?|"
        r"Couldn't parse requirement in `(?P<s3>[^`]+)`)")),
    ("unknown_pytest_option", re.compile(r"error: unrecognized arguments: (?P<s>\S+)")),
    ("unknown_pytest_marker", re.compile(r"'(?P<s>\w+)' not found in `markers` configuration option")),
    ("unknown_pytest_config", re.compile(r"Unknown config option: (?P<s>\w+)")),
    ("async_tests_without_plugin", re.compile(
        r"async def functions are not natively supported|You need to install a suitable plugin "
        r"for your async framework")),
    ("deprecation_as_error", re.compile(r"(?:^|\n)(?:E\s+)?(?P<s>(?:Pending)?DeprecationWarning): .{5,}")),
    ("missing_module", re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<s>[\w.]+)'")),
    ("service_unavailable", re.compile(
        r"(?:(?:Connection refused|could not connect to server|Is the server running)"
        r".{0,300}?(?:port (?P<s1>\d+)|:(?P<s2>\d{4,5})\b)|"
        r"(?:port |:)(?P<s3>\d{4,5})\b.{0,80}?(?:Connection refused|could not connect))", re.S)),
    ("service_unavailable", re.compile(r"\[Errno 111\] Connection refused"
                                       r"|ConnectionRefusedError|connection to server (?:at|on socket) .{0,200}"
                                       r"failed|could not connect to server")),
    ("network_required", NETWORK_OFF),
]


_NEEDS: dict[DiagnosisKind, tuple[str, ...]] = {
    "missing_tool": ("not found", "No such file", "function which", "status 127", "returncode=127"),
    "missing_cmake": ("CMake Error",),
    "missing_library": ("cannot find -l", "not found", "No package"),
    "service_unavailable": ("efused", "could not connect", "Is the server running", "connection to server"),
    "python_version": ("Python", "requires-python"),
    "no_distribution": ("package registry", "No matching distribution", "no versions of"),
    "async_tests_without_plugin": ("natively supported", "async framework"),
    "deprecation_as_error": ("DeprecationWarning",),
}
"""Words a rule's match must contain: a substring test skips the rule's regex on a multi-MB log without
them."""


MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<s>[\w.]+)'")
CUT_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '(?P<s>[\w.]+)"
                        r"(?:\.\.\.|\u2026|\n\[\.\.\. \d+ bytes omitted)")
"""A name cut short: by pytest's short summary (`No module named 'myst_pars...`) or by the output cap."""


def _completed(output: str, prefix: str) -> str | None:
    """The whole module name a cut one begins, from where the output names it in full (an import line,
    a quoted name), or None."""
    top = re.escape(prefix.split(".")[0])
    for pattern in (rf"(?:^|\s)(?:from|import)\s+({re.escape(prefix)}[\w.]*)",
                    rf"No module named '({re.escape(prefix)}[\w.]*)'", rf"\b({top}[\w.]*)"):
        for match in re.finditer(pattern, output, re.M):
            name = match.group(1).rstrip(".")
            if name.startswith(prefix) and len(name) > len(prefix):
                return name
    return None


def cut_missing_module(output: str) -> Diagnosis | None:
    """missing_module for a line whose name was cut short, completed from the rest of the log; None when
    nothing completes it (a guessed name could install the wrong distribution)."""
    for match in CUT_MODULE.finditer(output):
        if (name := _completed(output, match.group("s"))) is not None:
            line = output[output.rfind("\n", 0, match.start()) + 1: match.end()].strip()
            return Diagnosis(kind="missing_module", subject=_dotted_import(output, name), evidence=line[:500])
    return None


def missing_modules(output: str) -> list[str]:
    """Every module the output says is missing, in order, without repeats (dotted where the code says so)."""
    found: list[str] = []
    for match in MISSING_MODULE.finditer(output):
        name = _dotted_import(output, match.group("s"))
        if name not in found:
            found.append(name)
    return found


def _dotted_import(output: str, module: str) -> str:
    """`jaraco` -> `jaraco.functools` when the traceback shows `import jaraco.functools`; else the top name
    (or the dotted name itself when it is a submodule of a namespace package)."""
    top = module.split(".")[0]
    shown = re.search(rf"(?:^|\s)(?:from|import)\s+({re.escape(top)}\.\w+)", output, re.M)
    if shown:
        return shown.group(1)
    return module if "." in module and top in NAMESPACES else top


LOOPBACK = re.compile(r"localhost|127\.0\.0\.1|::1|/var/run/|\.sock\b")


def local_service(text: str) -> str:
    """The well-known service a failed connection to this machine was meant for ("" if it is not one):
    an offline sandbox answers a loopback connect with Errno 99 as well as with a refusal."""
    if not LOOPBACK.search(text):
        return ""
    service = _service_by_port(text)
    return "" if service == "network service" else service


def _service_by_port(output: str) -> str:
    """A well-known service whose port the output mentions, else a generic name."""
    for port, service in SERVICE_PORTS.items():
        if re.search(rf"\b{port}\b", output):
            return service
    return "network service"


def _drift_line(output: str, module: str) -> str:
    """The error line of a failure raised inside `module` (the last line naming an error or a warning)."""
    lines = [ln.strip() for ln in output.splitlines() if re.search(r"(?:Error|Warning)\b.*:|Failed to build", ln)]
    shown = [ln for ln in lines if module in ln] or lines
    return (shown[-1] if shown else module)[:500]


def _subject(match: re.Match[str]) -> str:
    groups = [v for k, v in match.groupdict().items() if v]
    return groups[0].strip() if groups else ""


def diagnose(output: str, *, timed_out: bool = False) -> Diagnosis:
    """Classify a failed command by its output; the first (most specific) rule that matches wins."""
    if timed_out:
        return Diagnosis(kind="timeout", evidence=output[-300:])
    for kind, pattern in _RULES:
        if kind == "deprecation_as_error" and (module := drift_subject(output)):
            # Raised inside an installed dependency (or a plugin's validation): its version, not the project.
            return Diagnosis(kind="dependency_drift", subject=module, evidence=_drift_line(output, module))
        needs = BROWSER_WORDS if pattern is BROWSER_MISSING else _NEEDS.get(kind)
        match = pattern.search(output) if needs is None or any(w in output for w in needs) else None
        if match is None:
            continue
        subject = "browser" if pattern is BROWSER_MISSING else _subject(match)
        if kind == "missing_module":
            subject = _dotted_import(output, subject)
        if kind == "service_unavailable":
            subject = SERVICE_PORTS.get(subject, subject) or _service_by_port(output)
        if kind == "network_required" and (service := local_service(output)):
            kind, subject = "service_unavailable", service
        end = output.find("\n", match.end())
        line = output[output.rfind("\n", 0, match.start()) + 1: end if end >= 0 else len(output)]
        return Diagnosis(kind=kind, subject=subject, evidence=line.strip()[:500] or match.group(0)[:500])
    if (cut := cut_missing_module(output)) is not None:
        return cut
    tail = [ln for ln in output.strip().splitlines() if ln.strip()][-3:]
    return Diagnosis(kind="unknown", evidence="\n".join(tail)[:500])
