"""Which Debian package provides a missing C header, library, pkg-config module, CMake package or tool, and the
repair that installs it (shared by the ecosystems whose builds compile C: Go's cgo, Rust's -sys crates)."""
from __future__ import annotations

import re

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_contents import ContentsIndex
from envs.hostfacts import debian_suite
from envs.spec import Evidence, Repair, Step

APT = "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends"

HEADERS = {
    "zlib.h": "zlib1g-dev", "ffi.h": "libffi-dev", "openssl/ssl.h": "libssl-dev",
    "openssl/opensslv.h": "libssl-dev", "libpq-fe.h": "libpq-dev", "pg_config.h": "libpq-dev",
    "libxml/xmlversion.h": "libxml2-dev", "libxml/parser.h": "libxml2-dev", "libxslt/xslt.h": "libxslt1-dev",
    "libxslt/xsltconfig.h": "libxslt1-dev", "Python.h": "python3-dev", "yaml.h": "libyaml-dev",
    "bzlib.h": "libbz2-dev", "lzma.h": "liblzma-dev", "sqlite3.h": "libsqlite3-dev", "jpeglib.h": "libjpeg-dev",
    "png.h": "libpng-dev", "ft2build.h": "libfreetype-dev", "gmp.h": "libgmp-dev", "mpfr.h": "libmpfr-dev",
    "mpc.h": "libmpc-dev", "curl/curl.h": "libcurl4-openssl-dev", "readline/readline.h": "libreadline-dev",
    "ncurses.h": "libncurses-dev", "curses.h": "libncurses-dev", "uuid/uuid.h": "uuid-dev",
    "sasl/sasl.h": "libsasl2-dev", "ldap.h": "libldap2-dev", "lber.h": "libldap2-dev", "krb5.h": "libkrb5-dev",
    "gssapi/gssapi.h": "libkrb5-dev", "mysql.h": "default-libmysqlclient-dev", "hdf5.h": "libhdf5-dev",
    "lz4.h": "liblz4-dev", "zstd.h": "libzstd-dev", "snappy-c.h": "libsnappy-dev", "event.h": "libevent-dev",
    "cairo.h": "libcairo2-dev", "glib.h": "libglib2.0-dev", "gdbm.h": "libgdbm-dev", "db.h": "libdb-dev",
    "pcre.h": "libpcre3-dev", "expat.h": "libexpat1-dev", "tiffio.h": "libtiff-dev", "webp/decode.h": "libwebp-dev",
    "xxhash.h": "libxxhash-dev", "libusb.h": "libusb-1.0-0-dev", "portaudio.h": "portaudio19-dev",
    "sndfile.h": "libsndfile1-dev", "systemd/sd-daemon.h": "libsystemd-dev", "cups/cups.h": "libcups2-dev",
    "libmemcached/memcached.h": "libmemcached-dev", "geos_c.h": "libgeos-dev", "proj.h": "libproj-dev",
    "gdal.h": "libgdal-dev", "cblas.h": "libopenblas-dev", "lapacke.h": "liblapacke-dev", "magic.h": "libmagic-dev",
    "libudev.h": "libudev-dev", "alsa/asoundlib.h": "libasound2-dev", "security/pam_appl.h": "libpam0g-dev",
    "gpgme.h": "libgpgme-dev", "archive.h": "libarchive-dev", "leveldb/c.h": "libleveldb-dev",
    "sodium.h": "libsodium-dev", "zmq.h": "libzmq3-dev", "dbus/dbus.h": "libdbus-1-dev", "X11/Xlib.h": "libx11-dev",
    "GL/gl.h": "libgl-dev", "SDL2/SDL.h": "libsdl2-dev", "tcl.h": "tcl-dev", "tk.h": "tk-dev",
}

LIBRARIES = {
    "z": "zlib1g-dev", "ffi": "libffi-dev", "ssl": "libssl-dev", "crypto": "libssl-dev", "pq": "libpq-dev",
    "xml2": "libxml2-dev", "xslt": "libxslt1-dev", "exslt": "libxslt1-dev", "yaml": "libyaml-dev",
    "bz2": "libbz2-dev", "lzma": "liblzma-dev", "sqlite3": "libsqlite3-dev", "jpeg": "libjpeg-dev",
    "png": "libpng-dev", "freetype": "libfreetype-dev", "gmp": "libgmp-dev", "curl": "libcurl4-openssl-dev",
    "readline": "libreadline-dev", "ncurses": "libncurses-dev", "uuid": "uuid-dev", "sasl2": "libsasl2-dev",
    "ldap": "libldap2-dev", "mysqlclient": "default-libmysqlclient-dev", "hdf5": "libhdf5-dev",
    "lz4": "liblz4-dev", "zstd": "libzstd-dev", "snappy": "libsnappy-dev", "openblas": "libopenblas-dev",
    "blas": "libopenblas-dev", "lapack": "liblapack-dev", "magic": "libmagic-dev", "sodium": "libsodium-dev",
    "zmq": "libzmq3-dev", "gfortran": "gfortran",
}

PKG_CONFIG = {
    "openssl": "libssl-dev", "libssl": "libssl-dev", "libcrypto": "libssl-dev", "libpq": "libpq-dev",
    "sqlite3": "libsqlite3-dev", "zlib": "zlib1g-dev", "libcurl": "libcurl4-openssl-dev", "dbus-1": "libdbus-1-dev",
    "alsa": "libasound2-dev", "libudev": "libudev-dev", "x11": "libx11-dev", "fontconfig": "libfontconfig-dev",
    "freetype2": "libfreetype-dev", "libzstd": "libzstd-dev", "liblzma": "liblzma-dev", "libgit2": "libgit2-dev",
    "libssh2": "libssh2-1-dev", "glib-2.0": "libglib2.0-dev", "gio-2.0": "libglib2.0-dev", "cairo": "libcairo2-dev",
    "gtk+-3.0": "libgtk-3-dev", "libpulse": "libpulse-dev", "libsystemd": "libsystemd-dev", "libusb-1.0": "libusb-1.0-0-dev",
    "libseccomp": "libseccomp-dev", "libsodium": "libsodium-dev", "oniguruma": "libonig-dev", "libxml-2.0": "libxml2-dev",
    "mysqlclient": "default-libmysqlclient-dev", "libarchive": "libarchive-dev", "libffi": "libffi-dev",
}
"""pkg-config module names (`Package openssl was not found`, `The system library `libpq` ...`)."""

TOOLS = {
    "pg_config": "libpq-dev", "mysql_config": "default-libmysqlclient-dev", "xml2-config": "libxml2-dev",
    "xslt-config": "libxslt1-dev", "pkg-config": "pkg-config", "cmake": "cmake", "swig": "swig",
    "rustc": "cargo", "cargo": "cargo", "msgfmt": "gettext", "gettext": "gettext", "gfortran": "gfortran",
    "protoc": "protobuf-compiler", "make": "make", "ninja": "ninja-build", "git": "git", "curl": "curl",
    "wget": "wget", "unzip": "unzip", "zip": "zip", "xvfb-run": "xvfb", "node": "nodejs", "npm": "npm",
    "java": "default-jre-headless", "javac": "default-jdk-headless", "go": "golang-go", "redis-server": "redis-server",
    "psql": "postgresql-client", "sqlite3": "sqlite3", "patch": "patch", "gcc": "gcc", "g++": "g++",
    "cc": "gcc", "c++": "g++", "ffmpeg": "ffmpeg", "graphviz": "graphviz", "dot": "graphviz",
    "tesseract": "tesseract-ocr", "latex": "texlive-latex-base", "pandoc": "pandoc", "bison": "bison",
    "flex": "flex", "autoconf": "autoconf", "automake": "automake", "libtool": "libtool",
}

CMAKE = {
    "ZLIB": "zlib1g-dev", "OpenSSL": "libssl-dev", "PNG": "libpng-dev", "JPEG": "libjpeg-dev", "TIFF": "libtiff-dev",
    "BZip2": "libbz2-dev", "LibLZMA": "liblzma-dev", "CURL": "libcurl4-openssl-dev", "LibXml2": "libxml2-dev",
    "LibXslt": "libxslt1-dev", "EXPAT": "libexpat1-dev", "SQLite3": "libsqlite3-dev", "Freetype": "libfreetype-dev",
    "Fontconfig": "libfontconfig-dev", "GSL": "libgsl-dev", "HDF5": "libhdf5-dev", "BLAS": "libopenblas-dev",
    "LAPACK": "liblapack-dev", "Boost": "libboost-dev", "GTest": "libgtest-dev", "GMock": "libgmock-dev",
    "Protobuf": "libprotobuf-dev", "PostgreSQL": "libpq-dev", "Curses": "libncurses-dev", "OpenGL": "libgl-dev",
    "X11": "libx11-dev", "GLEW": "libglew-dev", "MPI": "libopenmpi-dev", "GDAL": "libgdal-dev", "LibArchive":
    "libarchive-dev", "Iconv": "libc6-dev", "Intl": "libc6-dev", "PkgConfig": "pkg-config", "Git": "git",
    "Doxygen": "doxygen", "SWIG": "swig", "BISON": "bison", "FLEX": "flex", "Patch": "patch", "Perl": "perl",
    "Python": "python3-dev", "Python3": "python3-dev", "PythonLibs": "python3-dev", "PythonInterp": "python3",
    "Java": "default-jdk-headless", "JNI": "default-jdk-headless", "Gettext": "gettext", "Threads": "libc6-dev",
    "OpenMP": "libgomp1", "Eigen3": "libeigen3-dev", "pybind11": "pybind11-dev", "LibFFI": "libffi-dev",
}
"""CMake package names (find_package) -> Debian packages: the Find modules CMake itself ships (whose files,
in cmake-data, say nothing of the library) and the commonest config packages; the Contents index answers the rest."""

DEFAULT_SUITE = "trixie"
"""The suite of base images whose Python is not one Debian ships (Go, Rust, Node and Java images use it)."""
_PACKAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")


def package_for(kind: str, name: str, suite: str | None = None) -> str | None:
    """The Debian package for a missing header, library, CMake package or tool: the hand-kept maps, then
    Debian's Contents index for `suite` (when given), then a guess from the name; None if none."""
    found = _from_maps(kind, name)
    if found is None and suite:
        found = ContentsIndex.for_suite(suite).package(kind, name)
    if found is None:
        found = _guess(kind, name)
    return found if found and _PACKAGE_NAME.match(found) else None


def _from_maps(kind: str, name: str) -> str | None:
    if kind == "missing_header":
        return HEADERS.get(name) or HEADERS.get(name.rsplit("/", 1)[-1])
    if kind == "missing_library":
        return LIBRARIES.get(name) or PKG_CONFIG.get(name) or PKG_CONFIG.get(f"lib{name}")
    if kind == "missing_tool":
        return TOOLS.get(name)
    if kind == "missing_cmake":
        return CMAKE.get(name) or next((v for k, v in CMAKE.items() if k.lower() == name.lower()), None)
    return None


def _guess(kind: str, name: str) -> str | None:
    if kind == "missing_header":
        stem = re.sub(r"[^a-z0-9]+", "", name.rsplit("/", 1)[0 if "/" in name else -1].removesuffix(".h"))
        return f"lib{stem}-dev" if stem else None
    if kind in ("missing_library", "missing_cmake"):
        return f"{name.lower()}-dev" if name.lower().startswith("lib") else f"lib{name.lower()}-dev"
    return None


def system_package_repair(ctx: RepairContext, purpose: str, also: list[str] | tuple[str, ...] = ()) -> Repair | None:
    """Install the Debian package for the diagnosed missing header, library or tool before the failing step
    (`purpose`: what needs it, e.g. "a -sys crate's build script"), with those for `also` (more names of the
    same kind the output shows missing) in the same step; None when no package is known for the diagnosed one."""
    suite = debian_suite(ctx.python) or DEFAULT_SUITE
    package = package_for(ctx.diagnosis.kind, ctx.diagnosis.subject, suite)
    if package is None:
        return None
    found = {ctx.diagnosis.subject: package}
    for name in also:
        if name not in found and (more := package_for(ctx.diagnosis.kind, name, suite)) is not None:
            found[name] = more
    packages = sorted(set(found.values()))  # the same step whichever of the names was diagnosed first
    if any(r.step is not None and r.step.command == f"{APT} {' '.join(packages)}" for r in ctx.tried):
        return None  # installed already, and the names are still missing
    step = Step(command=f"{APT} {' '.join(packages)}", why=f"provides {', '.join(sorted(found))} ({purpose})",
                kind="system",
                evidence=[Evidence(file="<output>", text=ctx.diagnosis.evidence)])
    return Repair(kind="insert_before", reason=f"{ctx.diagnosis.describe()} -> Debian {', '.join(packages)}",
                  step=step)
