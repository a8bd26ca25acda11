"""Stand-ins for distributions that cannot be installed: a minimal wheel with a permissive module."""
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

Every attribute is a permissive placeholder; tests that import this module were deselected.
"""
AUTOINSTALL_STUB = True


class _Stub:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Stub()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Stub
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
