"""prepare_source: URLs, directories, work trees and bare git dirs become checkouts; bad input says how."""

from __future__ import annotations

import hashlib
from pathlib import Path

import git
import pytest

from autoinstall.source.checkout import SourceError, prepare_source, repo_name


def _commit(repo: git.Repo, files: dict[str, str], message: str) -> git.Commit:
    for name, text in files.items():
        path = Path(repo.working_tree_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message)


@pytest.fixture
def work_tree(tmp_path: Path) -> git.Repo:
    """A work tree with two commits, a tag `v1` on the first, and an untracked file."""
    repo = git.Repo.init(tmp_path / "proj")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "t").set_value("user", "email", "t@example.com")
    first = _commit(repo, {"pkg/__init__.py": "VERSION = 1\n"}, "one")
    repo.create_tag("v1", ref=first)
    _commit(
        repo,
        {"pkg/__init__.py": "VERSION = 2\n", "setup.py": "from setuptools import setup\nsetup()\n"},
        "two",
    )
    (tmp_path / "proj" / "untracked.txt").write_text("local only\n")
    return repo


@pytest.fixture
def bare(work_tree: git.Repo, tmp_path: Path) -> Path:
    """A bare clone laid out like a fetched mirror: /.../owner+proj/repo."""
    path = tmp_path / "mirror" / "owner+proj" / "repo"
    work_tree.clone(str(path), bare=True)
    return path


def _snapshot(root: Path) -> dict[str, tuple[int, str]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_plain_directory_is_copied_without_envs(tmp_path: Path) -> None:
    src = tmp_path / "plain"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "pkg" / "__pycache__").mkdir()
    (src / "env").mkdir()
    (src / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    info = prepare_source(str(src), None, tmp_path / "out")
    assert (info.kind, info.commit, info.name) == ("dir", None, "plain")
    assert (tmp_path / "out" / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not (tmp_path / "out" / "pkg" / "__pycache__").exists()
    assert not (tmp_path / "out" / "env").exists()


def test_work_tree_is_copied_as_is_with_head_recorded(work_tree: git.Repo, tmp_path: Path) -> None:
    info = prepare_source(work_tree.working_tree_dir, None, tmp_path / "out")
    assert info.kind == "dir"
    assert info.commit == work_tree.head.commit.hexsha
    assert info.commit_date == work_tree.head.commit.committed_datetime.isoformat()
    assert info.is_dirty
    assert (tmp_path / "out" / "untracked.txt").is_file()
    assert (tmp_path / "out" / ".git").is_dir()  # setuptools-scm reads versions from it


def test_commit_pins_a_work_tree_by_cloning(work_tree: git.Repo, tmp_path: Path) -> None:
    info = prepare_source(work_tree.working_tree_dir, "v1", tmp_path / "out")
    assert info.kind == "git"
    assert info.commit == work_tree.tags["v1"].commit.hexsha
    assert (tmp_path / "out" / "pkg" / "__init__.py").read_text() == "VERSION = 1\n"
    assert not (tmp_path / "out" / "setup.py").exists()
    assert not (tmp_path / "out" / "untracked.txt").exists()


def test_bare_git_dir_is_cloned_at_head_and_at_a_sha(bare: Path, work_tree: git.Repo, tmp_path: Path) -> None:
    info = prepare_source(str(bare), None, tmp_path / "head")
    assert (info.kind, info.name, info.commit) == ("git", "proj", work_tree.head.commit.hexsha)
    assert (tmp_path / "head" / "setup.py").is_file()
    first = work_tree.tags["v1"].commit.hexsha
    assert prepare_source(str(bare), first[:10], tmp_path / "old").commit == first


def test_dot_git_dir_and_file_url(work_tree: git.Repo, tmp_path: Path) -> None:
    info = prepare_source(work_tree.git_dir, None, tmp_path / "a")
    assert (info.kind, info.name) == ("git", "proj")
    url = f"file://{work_tree.working_tree_dir}"  # a local path like any other: git never runs on it
    info = prepare_source(url, "master", tmp_path / "b")
    assert (info.kind, info.commit) == ("git", work_tree.head.commit.hexsha)


def test_input_is_never_modified(work_tree: git.Repo, bare: Path, tmp_path: Path) -> None:
    root = Path(work_tree.working_tree_dir)
    before, before_bare = _snapshot(root), _snapshot(bare)
    prepare_source(str(root), None, tmp_path / "a")
    prepare_source(str(root), "v1", tmp_path / "b")
    prepare_source(str(bare), None, tmp_path / "c")
    with pytest.raises(SourceError):
        prepare_source(str(bare), "no-such-ref", tmp_path / "d")
    assert _snapshot(root) == before
    assert _snapshot(bare) == before_bare


@pytest.mark.parametrize(
    ("make", "commit", "expected"),
    [
        (lambda tmp: str(tmp / "missing"), None, "no such directory"),
        (lambda tmp: "github.com/nobody/nothing", None, "include the scheme"),
        (lambda tmp: str(tmp / "plain" / "f.txt"), None, "is a file"),
        (lambda tmp: str(tmp / "plain"), "abc123", "--commit needs a git repository"),
        (lambda tmp: f"file://{tmp}/nothing.git", None, "no such directory"),
    ],
)
def test_bad_paths_and_urls(tmp_path: Path, make, commit: str | None, expected: str) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "f.txt").write_text("x")
    with pytest.raises(SourceError, match=expected):
        prepare_source(make(tmp_path), commit, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_unknown_commit_lists_recent_commits_and_branches(
    bare: Path, work_tree: git.Repo, tmp_path: Path
) -> None:
    with pytest.raises(SourceError) as info:
        prepare_source(str(bare), "deadbeef", tmp_path / "out")
    message = str(info.value)
    assert "unknown commit 'deadbeef'" in message
    assert work_tree.head.commit.hexsha[:12] in message
    assert "master" in message


def test_empty_repository(tmp_path: Path) -> None:
    git.Repo.init(tmp_path / "empty.git", bare=True)
    with pytest.raises(SourceError, match="empty repository"):
        prepare_source(str(tmp_path / "empty.git"), None, tmp_path / "out")
    git.Repo.init(tmp_path / "fresh")
    with pytest.raises(SourceError, match="no commits"):
        prepare_source(str(tmp_path / "fresh"), None, tmp_path / "out2")


def test_destination_must_be_empty(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(SourceError, match="not empty"):
        prepare_source(str(tmp_path / "src"), None, tmp_path / "out")
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("repo", "name"),
    [
        ("https://github.com/pallets/jinja.git", "jinja"),
        ("git@github.com:pallets/jinja.git", "jinja"),
        ("/work/.mirror/pallets+jinja/repo", "jinja"),
        ("/work/.mirror/pallets+jinja/repo/.git", "jinja"),
        ("/src/proj/.git", "proj"),
        ("/src/proj/", "proj"),
    ],
)
def test_repo_name(repo: str, name: str) -> None:
    assert repo_name(repo) == name
