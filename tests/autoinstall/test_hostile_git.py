"""Hostile local repositories on the host side (issue 22): every `.git` trick is inert, nothing is read across
a link or written through one, special files are left out, and nothing under the source changes.

Each fixture is built in tmp_path and, where it can be, first shown to be really hostile: plain git on it runs
the planted command, follows the planted link or prints the planted secret. Then `autoinstall plan DIR` (the
command in this process, tests/clirun.py, or `propose_plan`, what it runs) and `prepare_source` must not.
"""
from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from autoinstall.plan import propose_plan
from autoinstall.source import SourceError, check_out, prepare_source, tree_digest
from tests.clirun import autoinstall

SECRET = "hunter2-host-secret"
EVIL = '#!/bin/sh\necho "$0 $*" >> "{marker}"\nexit 0\n'
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], check=check, capture_output=True, text=True,
                          env={**os.environ, **GIT_IDENTITY})


def lstat_snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` by lstat: kind, mode, size, mtime, and a regular file's content hash."""
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            st = os.lstat(path)
            content = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else (
                os.readlink(path) if stat.S_ISLNK(st.st_mode) else "")
            out[str(path.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_size, st.st_mtime_ns,
                                                content)
    return out


class Host:
    """What a hostile repository aims at: a marker a planted command appends to, a secret file, another repo."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.marker = tmp / "marker"
        self.script = tmp / "evil.sh"
        self.script.write_text(EVIL.format(marker=self.marker))
        self.script.chmod(0o755)
        self.secret = tmp / "host-secret.txt"
        self.secret.write_text(f"{SECRET}==1.0\n")  # not config: whoever parses it as config shows it
        self.other = tmp / "host-repo"  # someone's repository on the host
        self.other.mkdir()
        git(self.other, "init", "-q", "-b", "main")
        (self.other / "host_only.py").write_text("HOST = 1\n")
        git(self.other, "add", "-A")
        git(self.other, "commit", "-qm", "host work")
        git(self.other, "remote", "add", "origin", "https://example.invalid/host.git")
        (self.other / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")

    def filter_config(self) -> str:
        return (f"[filter \"x\"]\n\tclean = {self.script} clean\n\tsmudge = {self.script} smudge\n"
                f"[core]\n\tfsmonitor = {self.script}\n")

    def ran(self) -> str:
        return self.marker.read_text() if self.marker.exists() else ""


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


def work_tree(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in (files or {"pyproject.toml": '[project]\nname = "victim"\nversion = "0.1"\n',
                                 "mod.py": "X = 1\n", ".gitattributes": "* filter=x diff=x\n"}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "mod.py").write_text("X = 2\n")  # dirty: git status must look at content, through the filter
    return root


def assert_inert(host: Host, repo: Path, tmp: Path, commit: str | None = None) -> str:
    """`autoinstall plan REPO` and `prepare_source` run nothing, change nothing under REPO or the other host
    repository, and never show the secret; returns the CLI's output."""
    before, other_before = lstat_snapshot(repo), lstat_snapshot(host.other)
    done = autoinstall("plan", str(repo), *(["--commit", commit] if commit else []), home=tmp / "ai-home")
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1, 2), output  # anything but a UserFacingError is raised (tests/clirun.py)
    try:
        info = prepare_source(str(repo), commit, tmp / f"out-{len(list(tmp.iterdir()))}")
        shown = info.model_dump_json()
    except SourceError as e:
        shown = str(e)
    assert host.ran() == "", host.ran()
    assert SECRET not in output and SECRET not in shown
    assert lstat_snapshot(repo) == before
    assert lstat_snapshot(host.other) == other_before
    return output


def test_commondir_config_runs_nothing(host: Host, tmp_path: Path) -> None:
    """`.git/commondir` names a folder whose config defines the filter `.gitattributes` asks for: rewriting
    `.git/config` changes nothing, and plain `git status` runs the filter."""
    repo = work_tree(tmp_path / "repo")
    common = repo / ".git" / "shared"
    common.mkdir()
    for name in ("objects", "refs"):
        (common / name).symlink_to(repo / ".git" / name)
    (common / "config").write_text(host.filter_config())
    (repo / ".git" / "commondir").write_text("shared\n")
    git(repo, "status", "--porcelain")
    assert host.ran(), "the fixture should make plain `git status` run its filter"
    host.marker.unlink()
    assert_inert(host, repo, tmp_path)
    assert_inert(host, repo, tmp_path, commit="main")


def test_a_config_that_is_a_link_is_neither_read_nor_written(host: Host, tmp_path: Path) -> None:
    repo = work_tree(tmp_path / "repo")
    target = tmp_path / "host-config-target"
    (repo / ".git" / "config").unlink()
    (repo / ".git" / "config").symlink_to(target)  # a host path the config rewrite once created
    (repo / ".git" / "hooks").mkdir(exist_ok=True)
    assert_inert(host, repo, tmp_path)
    assert not target.exists()
    (repo / ".git" / "config").unlink()
    (repo / ".git" / "config").symlink_to(host.secret)
    assert_inert(host, repo, tmp_path)
    assert SECRET in host.secret.read_text()


def test_a_dot_git_link_to_another_host_repository_leaves_it_alone(host: Host, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='victim')\n")
    (repo / ".git").symlink_to(host.other / ".git")
    assert_inert(host, repo, tmp_path)
    assert (host.other / ".git" / "hooks" / "pre-commit").is_file()
    assert "example.invalid" in (host.other / ".git" / "config").read_text()
    info = prepare_source(str(repo), None, tmp_path / "copy")
    assert info.commit is None and not (tmp_path / "copy" / ".git").exists()
    assert not (tmp_path / "copy" / "host_only.py").exists()
    assert any(".git is a link" in n for n in info.notes), info.notes


def test_include_of_any_key_is_not_followed(host: Host, tmp_path: Path) -> None:
    """GitPython followed every key of `[include]` (git follows only `path`) and printed the file."""
    repo = work_tree(tmp_path / "repo")
    secret_config = tmp_path / "host-secret.gitconfig"
    secret_config.write_text(f"[user]\n\tname = {SECRET}\n")
    with (repo / ".git" / "config").open("a") as f:
        f.write(f"[include]\n\tleak = {host.secret}\n\tpath = {secret_config}\n[includeIf \"gitdir:/\"]\n"
                f"\tpath = {secret_config}\n")
    assert SECRET in git(repo, "config", "--list").stdout  # git itself reads the `path` include
    assert_inert(host, repo, tmp_path)
    assert_inert(host, repo, tmp_path, commit="main")


def test_a_gitfile_is_not_followed_to_a_host_repository(host: Host, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("a linked worktree, they say\n")
    (repo / ".git").write_text(f"gitdir: {host.other / '.git'}\n")
    assert git(repo, "log", "--oneline").stdout  # plain git follows it to the host repository
    assert_inert(host, repo, tmp_path, commit="main")
    with pytest.raises(SourceError, match=r"--commit needs a git repository.*a file pointing at a git directory"):
        prepare_source(str(repo), "main", tmp_path / "pinned")
    assert not (tmp_path / "pinned").exists()
    info = prepare_source(str(repo), None, tmp_path / "plain")
    assert not (tmp_path / "plain" / "host_only.py").exists() and info.commit is None


def test_alternates_and_linked_objects_are_not_followed(host: Host, tmp_path: Path) -> None:
    """The repository's history lives in the host repository: through alternates, or objects as a link."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--shared", str(host.other), str(repo)], check=True)
    assert (repo / ".git" / "objects" / "info" / "alternates").is_file()
    with (repo / ".git" / "config").open("a") as f:
        f.write(host.filter_config())
    (repo / ".gitattributes").write_text("* filter=x\n")
    assert_inert(host, repo, tmp_path)
    with pytest.raises(SourceError, match="cannot check out|unknown commit|incomplete"):
        prepare_source(str(repo), "main", tmp_path / "pinned")
    info = prepare_source(str(repo), None, tmp_path / "copy")
    assert any("alternates" in n for n in info.notes), info.notes
    assert info.commit is None  # no history of its own to name it by
    linked = tmp_path / "linked"
    work_tree(linked)
    subprocess.run(["rm", "-rf", str(linked / ".git" / "objects")], check=True)
    (linked / ".git" / "objects").symlink_to(host.other / ".git" / "objects")
    assert_inert(host, linked, tmp_path)


def test_hooks_worktrees_and_global_filters_run_nothing(host: Host, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hooks of every kind, a `worktrees/` entry and a filter in the user's own global config (as git-lfs
    installs one) are all left alone: our git runs with no system or global config."""
    repo = work_tree(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\n{host.script} hook-{hook}\n")
        (hooks / hook).chmod(0o755)
    (repo / ".git" / "worktrees" / "w").mkdir(parents=True)
    (repo / ".git" / "worktrees" / "w" / "commondir").write_text(str(host.other / ".git"))
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text(host.filter_config())
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    assert_inert(host, repo, tmp_path)
    assert_inert(host, repo, tmp_path, commit="main")


def test_links_out_of_the_tree_are_left_out_of_every_checkout(host: Host, tmp_path: Path) -> None:
    """Absolute links, `..` links and `s/s/../..` through a link to `.`: each would hand the survey a host file."""
    repo = work_tree(tmp_path / "repo", {"setup.py": "from setuptools import setup\nsetup(name='victim')\n"})
    (repo / "requirements.txt").symlink_to(host.secret)
    (repo / "up").symlink_to("../host-secret.txt")
    (repo / "s").symlink_to(".")
    (repo / "sneaky.txt").symlink_to("s/s/../host-secret.txt")
    (repo / "inside.txt").symlink_to("setup.py")
    (repo / "dangling").symlink_to("nowhere")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    for commit in (None, "main"):
        out = tmp_path / f"links-{commit}"
        info = prepare_source(str(repo), commit, out)
        left = {p.name for p in out.iterdir()}
        assert {"requirements.txt", "up", "sneaky.txt"}.isdisjoint(left), left
        assert {"inside.txt", "s", "dangling", "setup.py"} <= left
        assert os.readlink(out / "inside.txt") == "setup.py"
        assert sum("a link to outside the checkout" in n for n in info.notes) == 3, info.notes
        assert SECRET not in tree_digest(out)
    assert_inert(host, repo, tmp_path)


def test_special_files_are_left_out_with_a_note(host: Host, tmp_path: Path) -> None:
    """A FIFO (reading it blocks forever), a socket: left out of the copy, a note each, no traceback."""
    import socket

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='victim')\n")
    os.mkfifo(repo / "requirements.txt")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(repo / "s.sock"))
    try:
        record = check_out(str(repo), None, tmp_path / "out")
        assert not (tmp_path / "out" / "requirements.txt").exists()
        assert not (tmp_path / "out" / "s.sock").exists()
        assert any("requirements.txt: a FIFO, left out" in n for n in record.notes), record.notes
        assert any("s.sock: a socket, left out" in n for n in record.notes), record.notes
        output = assert_inert(host, repo, tmp_path)
        assert "FIFO" in output
    finally:
        sock.close()


def test_a_repository_with_an_unknown_ref_storage_or_head_says_so(host: Host, tmp_path: Path) -> None:
    repo = work_tree(tmp_path / "repo")
    (repo / ".git" / "HEAD").write_text(f"ref: ../../{host.secret}\n")
    assert_inert(host, repo, tmp_path)
    info = prepare_source(str(repo), None, tmp_path / "copy")
    assert info.commit is None and any("HEAD is neither" in n for n in info.notes), info.notes
    with pytest.raises(SourceError, match="HEAD is neither a ref nor a commit"):
        prepare_source(str(repo / ".git"), None, tmp_path / "bare")
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    with (repo / ".git" / "config").open("a") as f:
        f.write("[extensions]\n\trefStorage = reftable\n")
    with pytest.raises(SourceError, match="refs are stored as 'reftable'"):
        prepare_source(str(repo), "main", tmp_path / "reftable")


@pytest.mark.parametrize("repo", ["-u{script}@host:x", "--upload-pack={script}", "ext::sh -c {script}",
                                  "ssh://-oProxyCommand={script}/x"])
def test_a_repo_argument_that_is_an_option_or_a_command_runs_nothing(host: Host, tmp_path: Path, repo: str) -> None:
    with pytest.raises(SourceError):
        prepare_source(repo.format(script=host.script), None, tmp_path / "out")
    assert host.ran() == ""
    assert not (tmp_path / "out").exists()
