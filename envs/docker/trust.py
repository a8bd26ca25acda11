"""The host's CA bundle in every client: one table of what points each package manager at it, the files it
points at, and where they go. Applied the same way in a sandbox (`create_container` mounts `trust_dir(bundle)`
read-only at CA_DIR, `container_env` adds CA_ENV to every exec) and in a base image (envs/baseimage.py copies
`trust_files(bundle)` to CA_DIR, sets CA_ENV and runs IMAGE_SETUP), so environment images and the replay
Dockerfiles written FROM a base image trust what their install sandboxes trusted.

CA_ENV is the table: one variable per client, each naming a file of CA_DIR. Java has no such variable that
stays quiet, so the image builds make CA_JKS every JDK's `jssecacerts` (JSSE reads it before `cacerts`).
Not JAVA_TOOL_OPTIONS: every JVM would print "Picked up JAVA_TOOL_OPTIONS" on stderr, in test runs too.
Not Debian's /etc/ssl/certs/java/cacerts: its update hook keeps only the first certificate of a bundle file,
and the Java plan (autoinstall/ecosystems/java/proposal.py) rewrites that file itself.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import struct
import tempfile
from pathlib import Path

from envs.home import autoinstall_home

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
CA_DIR = "/etc/autoinstall"
"""Where the trust files live inside sandboxes and base images (read-only in a sandbox)."""
CA_PATH = f"{CA_DIR}/ca-bundle.crt"
"""The PEM bundle itself."""
CA_JKS = f"{CA_DIR}/ca-bundle.jks"
"""The bundle as a Java truststore (JKS, the format Debian's own cacerts has; no password is needed to read
it, and its integrity digest is made with the customary "changeit")."""
APT_CONF = f"{CA_DIR}/apt.conf"
WGETRC = f"{CA_DIR}/wgetrc"
CA_ENV = {
    "SSL_CERT_FILE": CA_PATH,        # OpenSSL's default: Python's ssl, uv, Go (modules, GOTOOLCHAIN), Ruby...
    "PIP_CERT": CA_PATH,             # pip
    "REQUESTS_CA_BUNDLE": CA_PATH,   # requests (certifi's bundle otherwise)
    "CURL_CA_BUNDLE": CA_PATH,       # curl
    "GIT_SSL_CAINFO": CA_PATH,       # git
    "NODE_EXTRA_CA_CERTS": CA_PATH,  # node and what runs on it: npm, npx, yarn, pnpm (added to node's roots)
    "npm_config_cafile": CA_PATH,    # npm's own setting (pnpm and yarn 1 read npm's config)
    "CARGO_HTTP_CAINFO": CA_PATH,    # cargo
    "MAVEN_OPTS": f"-Djavax.net.ssl.trustStore={CA_JKS}",  # Maven on a JDK installed after the image build
    "APT_CONFIG": APT_CONF,          # apt's https sources: Acquire::https::CAInfo
    "WGETRC": WGETRC,                # wget: ca_certificate
}
"""What points each client at a file of CA_DIR (JVMs: `jssecacerts`, see IMAGE_SETUP; whatever reads the
system store: base images add the bundle to it)."""
JDK_SECURITY_DIRS = "/usr/lib/jvm/*/lib/security"


def jdk_trust(security_dirs: str) -> str:
    """A shell command that makes CA_JKS the `jssecacerts` of each JDK whose lib/security is in `security_dirs`
    (a glob or folders; run as root after the JDK is installed: a base image's Debian JDK, a host JDK's layer)."""
    return f'for d in {security_dirs}; do if [ -d "$d" ]; then ln -sf {CA_JKS} "$d/jssecacerts"; fi; done'


IMAGE_SETUP = (f"cp {CA_PATH} /usr/local/share/ca-certificates/autoinstall-ca-bundle.crt && update-ca-certificates"
               f" && {jdk_trust(JDK_SECURITY_DIRS)}")
"""Run by an image build after its packages are installed (and after any later JDK is): the system store and
every JDK's `jssecacerts` (a host JDK's layer runs `jdk_trust` for its own: envs/host_toolchains.py)."""
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----\s+(.*?)\s+-----END CERTIFICATE-----", re.S)


def default_ca_bundle() -> Path | None:
    """The host's CA bundle, when it has one."""
    return HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None


def certificates(bundle: bytes) -> list[bytes]:
    """The DER certificates of a PEM bundle, in order, each once."""
    seen: dict[bytes, None] = {}
    for body in _PEM.findall(bundle):
        seen.setdefault(base64.b64decode(b"".join(body.split())), None)
    return list(seen)


def java_truststore(bundle: bytes, password: str = "changeit") -> bytes:
    """A JKS keystore holding every certificate of `bundle` as a trusted entry (the layout of
    sun.security.provider.JavaKeyStore, version 2), byte for byte the same for the same bundle."""
    def utf(text: str) -> bytes:
        data = text.encode()
        return struct.pack(">H", len(data)) + data

    certs = certificates(bundle)
    out = struct.pack(">III", 0xFEEDFEED, 2, len(certs))
    for i, der in enumerate(certs):
        out += struct.pack(">I", 2) + utf(f"autoinstall-{i:04d}") + struct.pack(">Q", 0)
        out += utf("X.509") + struct.pack(">I", len(der)) + der
    digest = hashlib.sha1(password.encode("utf-16-be") + b"Mighty Aphrodite" + out, usedforsecurity=False)
    return out + digest.digest()


def trust_files(bundle: Path) -> dict[str, bytes]:
    """The files of CA_DIR for `bundle`, by name."""
    pem = bundle.read_bytes()
    return {
        Path(CA_PATH).name: pem,
        Path(CA_JKS).name: java_truststore(pem),
        Path(APT_CONF).name: f'Acquire::https::CAInfo "{CA_PATH}";\n'.encode(),
        Path(WGETRC).name: f"ca_certificate = {CA_PATH}\n".encode(),
    }


def trust_digest(bundle: Path) -> str:
    """A hash of everything `trust_files` makes of `bundle` (recipes and trust_dir are keyed by it)."""
    h = hashlib.sha256()
    for name, data in sorted(trust_files(bundle).items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:16]


def write_trust_files(bundle: Path, dest: Path) -> None:
    """Write `trust_files(bundle)` into the directory `dest` (created), readable by every user."""
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o755)
    for name, data in trust_files(bundle).items():
        (dest / name).write_bytes(data)
        (dest / name).chmod(0o644)


def trust_dir(bundle: Path) -> Path:
    """A host directory holding `trust_files(bundle)`, made once per bundle content under
    autoinstall_home()/trust (a sandbox mounts it read-only at CA_DIR)."""
    root = autoinstall_home() / "trust"
    final = root / trust_digest(bundle)
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    write_trust_files(bundle, tmp)
    try:
        os.rename(tmp, final)
    except OSError:  # another process made it first
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    return final
