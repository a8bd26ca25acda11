"""Stand-ins for distributions no registry has: a minimal wheel whose module imports but raises on use."""
from __future__ import annotations

import base64
import hashlib
import io
import re
import zipfile

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from autoinstall.ecosystems.base import STUB_DIR

__all__ = ["STUB_DIR", "build_stub_wheel", "files_importing", "stub_version"]


STUB_MODULE = '''"""Stub for {dist}: it could not be installed, so autoinstall put this module in its place.

Importing it works (so that modules importing it load); using anything from it raises
AutoinstallStubError naming {dist}. Tests that fail with it are deselected and counted.
"""
AUTOINSTALL_STUB = True


class AutoinstallStubError(RuntimeError):
    pass


def _used(what):
    raise AutoinstallStubError("{dist} (stubbed by autoinstall: no registry has it): %s was used" % what)


class _Stub:
    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub(self._name + "." + attr)

    def __call__(self, *args, **kwargs):
        _used(self._name + "()")

    def __setattr__(self, attr, value):
        _used(self._name + "." + attr + " = ...")

    def __mro_entries__(self, bases):
        _used("subclassing " + self._name)

    def __repr__(self):
        return "<autoinstall stub %s of {dist}>" % self._name

    def __bool__(self):
        _used("bool(" + self._name + ")")

    def __iter__(self):
        _used("iter(" + self._name + ")")

    def __getitem__(self, key):
        _used(self._name + "[...]")

    def __eq__(self, other):
        _used(self._name + " == ...")

    __hash__ = object.__hash__


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Stub(__name__ + "." + name)
'''


def normalize(dist: str) -> str:
    return re.sub(r"[-_.]+", "_", dist).lower()


def stub_version(dist: str, output: str) -> str:
    """A version that satisfies what the failed resolution asked of `dist` (read from its output)."""
    pattern = re.escape(dist).replace(r"\-", "[-_.]")
    found = re.search(rf"depends on {pattern}((?:[<>=!~]=?[\w.*]+,?\s*)+)", output, re.I)
    spec_text = found.group(1).replace(" ", "").rstrip(",") if found else ""
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        spec = SpecifierSet()
    candidates = [s.version for s in spec if s.operator in (">=", "==", "~=", "===") and "*" not in s.version]
    candidates += ["1.0.0", "0.1.0", "2.0.0", "0.0.1", "9999.0.0"]
    return next((v for v in candidates if spec.contains(v, prereleases=True)), "1.0.0")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_stub_wheel(dist: str, import_name: str, version: str) -> tuple[str, bytes]:
    """Return (wheel file name, wheel bytes) for a pure-Python stub of `dist` providing `import_name`."""
    norm = normalize(dist)
    info = f"{norm}-{version}.dist-info"
    files = {
        f"{import_name}/__init__.py": STUB_MODULE.format(dist=dist).encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                            f"Summary: autoinstall stub for {dist}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: autoinstall\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return f"{norm}-{version}-py3-none-any.whl", buffer.getvalue()


def files_importing(test_files: dict[str, str], import_name: str) -> list[str]:
    """Test files (path -> source) that import `import_name`."""
    pattern = re.compile(rf"^\s*(?:import|from)\s+{re.escape(import_name)}\b", re.M)
    return sorted(path for path, text in test_files.items() if pattern.search(text))
