"""Missing files -> Debian packages through Debian's own Contents index, beyond the hand-kept maps."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from autoinstall.ecosystems import debian_names
from autoinstall.ecosystems.debian_contents import ContentsIndex, candidates, parse

CONTENTS = """\
usr/bin/xmllint                                         text/libxml2-utils
usr/include/blosc.h                                     libdevel/libblosc-dev
usr/include/hdf5/serial/hdf5.h                          libdevel/libhdf5-dev
usr/include/x86_64-linux-gnu/zconf.h                    libdevel/zlib1g-dev,libdevel/lib32z1-dev
usr/lib/x86_64-linux-gnu/libblosc.so                    libdevel/libblosc-dev
usr/lib/x86_64-linux-gnu/libblosc.so.1                  libs/libblosc1
usr/lib/x86_64-linux-gnu/pkgconfig/blosc.pc             libdevel/libblosc-dev
usr/lib/x86_64-linux-gnu/cmake/fmt/fmt-config.cmake     libdevel/libfmt-dev
usr/share/eigen3/cmake/Eigen3Config.cmake               libdevel/libeigen3-dev
usr/share/cmake-3.31/Modules/FindGSL.cmake              devel/cmake-data
usr/share/cmake-3.31/Modules/FindZLIB.cmake             devel/cmake-data
usr/lib/x86_64-linux-gnu/pkgconfig/gsl.pc               libdevel/libgsl-dev
usr/lib/x86_64-linux-gnu/pkgconfig/zlib.pc              libdevel/zlib1g-dev
usr/share/cmake/FindOpenCASCADE.cmake                   libdevel/libocct-dev
usr/share/doc/libblosc1/changelog.gz                    doc/libblosc1
usr/x86_64-w64-mingw32/include/blosc.h                  libdevel/mingw-blosc
usr/include/blosc2.h                                    libdevel/libblosc2-dev,libdevel/libblosc2-dev-cross
"""


def index() -> ContentsIndex:
    return ContentsIndex(parse(CONTENTS.splitlines()))


@pytest.mark.parametrize(("kind", "name", "package"), [
    ("missing_header", "blosc.h", "libblosc-dev"),
    ("missing_header", "hdf5/serial/hdf5.h", "libhdf5-dev"),
    ("missing_header", "zconf.h", "zlib1g-dev"),  # not lib32z1-dev: other-ABI packages come last
    ("missing_header", "blosc2.h", "libblosc2-dev"),  # not the cross package
    ("missing_library", "blosc", "libblosc-dev"),  # pkg-config module
    ("missing_library", "libblosc", "libblosc-dev"),
    ("missing_cmake", "fmt", "libfmt-dev"),  # fmt-config.cmake
    ("missing_cmake", "Eigen3", "libeigen3-dev"),  # Eigen3Config.cmake
    ("missing_cmake", "GSL", "libgsl-dev"),  # CMake's own FindGSL says nothing: the gsl pkg-config module does
    ("missing_cmake", "OpenCASCADE", "libocct-dev"),  # a Find module a -dev package ships
    ("missing_cmake", "Nothing", None),
    ("missing_tool", "xmllint", "libxml2-utils"),
    ("missing_tool", "blosc", None),
    ("missing_header", "nothing.h", None),
])
def test_the_index_names_the_package_that_ships_the_file(kind: str, name: str, package: str | None) -> None:
    assert index().package(kind, name) == package


def test_only_paths_a_build_can_miss_are_kept() -> None:
    paths = {path for path, _ in parse(CONTENTS.splitlines())}
    assert "usr/share/doc/libblosc1/changelog.gz" not in paths
    assert "usr/x86_64-w64-mingw32/include/blosc.h" not in paths
    assert "usr/lib/x86_64-linux-gnu/libblosc.so.1" not in paths  # runtime libraries: the -dev .so suffices


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_the_fast_line_finder_keeps_every_line_parse_keeps_in_order_across_chunks(chunk: int) -> None:
    data = (CONTENTS + "usr/lib/libz.a    libdevel/zlib1g-dev\nsbin/ldconfig  admin/libc-bin").encode()
    lines = list(candidates(io.BytesIO(data), chunk=chunk))
    assert list(parse(line.decode() for line in lines)) == list(parse(data.decode().splitlines()))
    assert len(lines) < len(data.decode().splitlines())  # the doc, the mingw header and the .so.1 are not read


def test_the_maps_answer_first_then_the_index_then_a_guess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {"trixie": index()})
    assert debian_names.package_for("missing_header", "zlib.h", "trixie") == "zlib1g-dev"  # the map
    assert debian_names.package_for("missing_tool", "xmllint", "trixie") == "libxml2-utils"  # the index
    assert debian_names.package_for("missing_tool", "xmllint") is None  # no suite: maps only
    assert debian_names.package_for("missing_header", "foo/bar.h", "trixie") == "libfoo-dev"  # the guess


def test_an_unreachable_mirror_leaves_the_maps_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {})
    monkeypatch.setattr("autoinstall.ecosystems.debian_contents.TIMEOUT_S", 2.0)
    empty = ContentsIndex.for_suite("trixie", mirror="http://127.0.0.1:9", cache=tmp_path)
    assert empty.package("missing_tool", "xmllint") is None
    assert not list(tmp_path.iterdir()), "nothing half-written is cached"


@pytest.mark.slow
def test_debians_real_index_answers_what_the_maps_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ContentsIndex, "_loaded", {})
    real = ContentsIndex.for_suite("trixie", cache=tmp_path)
    assert real.package("missing_header", "eigen3/Eigen/Core") == "libeigen3-dev"  # an architecture-all package
    assert real.package("missing_library", "blosc") == "libblosc-dev"
    assert real.package("missing_tool", "xmllint") == "libxml2-utils"
    assert real.package("missing_cmake", "Eigen3") == "libeigen3-dev"  # Eigen3Config.cmake
    assert real.package("missing_cmake", "nlohmann_json") == "nlohmann-json3-dev"
    assert real.package("missing_cmake", "fmt") == "libfmt-dev"  # fmt-config.cmake
    assert real.package("missing_cmake", "GSL") == "libgsl-dev"  # CMake's own FindGSL: the gsl pkg-config module
    assert [p.name for p in tmp_path.iterdir()][0].startswith("contents-trixie-")
