"""Mutation operators on small sources: pure, fast, no Docker."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autoinstall.tasks.candidate import unified_diff
from autoinstall.tasks.languages import is_source_path, is_test_path
from autoinstall.tasks.mutation import apply_site, mutations, sites

PY = '''"""Module docstring."""


class Box:
    def fits(self, size, limit=10):
        """True when size fits."""
        if size is None:
            return False
        return size - 1 < limit and not self.full


def scale(a, b):
    log("scaling", a)
    return a - b
'''


def rewrites(path: str, text: str) -> dict[str, list[str]]:
    """operator -> the rewritten texts it offers."""
    out: dict[str, list[str]] = {}
    for site in sites(path, text):
        out.setdefault(site.operator, []).append(apply_site(text, site))
    return out


def test_python_operators_rewrite_the_expected_spots() -> None:
    by_op = rewrites("pkg/box.py", PY)
    assert any("size - 1 >= limit" in t for t in by_op["flip_comparison"])
    assert any("size is not None" in t for t in by_op["flip_comparison"])
    assert any("return True" in t for t in by_op["flip_boolean"])
    assert any("< limit or not self.full" in t for t in by_op["flip_boolean"])
    assert any("and self.full" in t for t in by_op["flip_boolean"])
    assert any("return b - a" in t for t in by_op["swap_operands"])
    assert any("size - 2 < limit" in t for t in by_op["off_by_one"])
    assert any("size - 0 < limit" in t for t in by_op["off_by_one"])
    assert any('log("", a)' in t for t in by_op["change_constant"])
    assert by_op["swap_arguments"] == [PY.replace('log("scaling", a)', 'log(a, "scaling")')]
    removed = by_op["remove_statement"]
    assert any('log("scaling", a)' not in t and "def scale(a, b):\n    return a - b" in t for t in removed)
    early = by_op["remove_early_return"]
    assert early == [PY.replace("        if size is None:\n            return False\n", "")]


def test_docstrings_and_tests_are_never_mutated() -> None:
    assert all("Module docstring" in t and "True when size fits" in t
               for texts in rewrites("pkg/box.py", PY).values() for t in texts)
    assert sites("tests/test_box.py", PY) == []
    assert sites("pkg/test_box.py", PY) == []
    assert sites("pkg/conftest.py", PY) == []
    assert is_test_path("pkg/box_test.go") and is_test_path("docs/conf.py") and is_test_path("setup.py")
    assert is_source_path("src/pkg/box.py") and not is_source_path("src/pkg/box.c")


def test_order_is_seeded_and_spreads_over_functions() -> None:
    first, again, other = mutations({"pkg/box.py": PY}, 1), mutations({"pkg/box.py": PY}, 1), \
        mutations({"pkg/box.py": PY}, 2)
    assert [c.bug_patch for c in first] == [c.bug_patch for c in again]
    assert [c.bug_patch for c in first] != [c.bug_patch for c in other]
    assert {c.mutation.function for c in first[:2]} == {"Box.fits", "scale"}
    assert len({c.hunk_key for c in first}) == len(first)


def test_every_mutation_parses_and_its_patches_apply_both_ways(tmp_path: Path) -> None:
    candidates = mutations({"pkg/box.py": PY})
    assert len(candidates) >= 12
    for c in candidates:
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / "box.py").write_text(PY)
        for patch in (c.bug_patch, c.gold_patch):
            (tmp_path / "p.diff").write_text(patch)
            subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True, capture_output=True)
        assert (tmp_path / "pkg" / "box.py").read_text() == PY
        compile((tmp_path / "pkg" / "box.py").read_text(), "box.py", "exec")


def test_a_file_without_final_newline_gets_an_appliable_diff(tmp_path: Path) -> None:
    old, new = "a = 1\nb = 2", "a = 1\nb = 3"
    (tmp_path / "f.py").write_text(old)
    (tmp_path / "p.diff").write_text(unified_diff("f.py", old, new))
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "f.py").read_text() == new


GO = """package box

func Fits(size int, limit int) bool {
	if size < 0 {
		return false
	}
	return size-1 < limit && true
}
"""
RUST = """pub fn fits(size: i32, limit: i32) -> bool {
    size - 1 < limit && true
}

#[cfg(test)]
mod tests {
    fn helper() -> bool { 1 < 2 }
}
"""


@pytest.mark.parametrize(("path", "text", "expect"), [
    ("box/box.go", GO, ["size-1 >= limit", "&& false", "|| true", "size-2 < limit"]),
    ("src/lib.rs", RUST, ["size - 1 >= limit", "&& false", "|| true", "size - 2 < limit"]),
])
def test_other_grammars_plug_in(path: str, text: str, expect: list[str]) -> None:
    texts = [t for group in rewrites(path, text).values() for t in group]
    for wanted in expect:
        assert any(wanted in t for t in texts), wanted
    assert all("1 < 2" in t for t in texts) or "1 < 2" not in text  # Rust's `mod tests` is left alone
    assert all(c.mutation.file == path for c in mutations({path: text}))
