"""Sources: turn REPO (a URL, a local directory, or a local git directory) into a clean checkout.

- URL (`https://...`, `ssh://...`, `git@host:path`): cloned with gitpython, checked out by our own git.
- Local git directory, bare (`/work/.mirror/owner+name/repo`) or a `.git` folder, or a `file://` URL of
  one: its objects and refs are copied into a fresh repository (`gitdata.py`), which is checked out.
- Local directory: copied as it is, uncommitted files included (`tree.py`). If it is a work tree with a `.git`
  folder of its own, a fresh `.git` holding its objects and refs goes with the copy (setuptools-scm and
  friends read versions from it), HEAD is recorded and git says whether the copy is dirty; with `--commit`
  the fresh repository is checked out at that commit instead. Virtualenvs, tox/nox envs and caches are not
  copied.

Repositories are strangers' code, and a local one is data: host git never runs on its `.git` (its config,
includes, hooks, attributes, commondir, gitfile, alternates, worktrees are never read), nothing is read across
one of its links or written through one, FIFOs and devices are left out, and nothing under it is written.
Every checkout, from a URL too, loses the links that point outside it; what was left out is in `notes`. A
commit whose checkout would write a file or a total over tree.py's caps is refused before git writes it.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path
from functools import partial
from typing import Literal, NamedTuple
from urllib.parse import unquote, urlparse

import git
from pydantic import BaseModel, Field

from autoinstall.errors import AutoinstallError
from autoinstall.source.gitdata import GIT_ENV, LOCAL_GIT_ENV, GitDataError, dot_git_problem, import_objects, looks_like_git_dir
from autoinstall.source.gitdata import git as run_git
from autoinstall.source import tree
from autoinstall.source.tree import CopyTooLarge, Notes, copy_tree, drop_escaping_links

URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://|^\w[\w.-]*@\w[\w.-]*:")
NOT_COPIED = {
    ".tox",
    ".nox",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
    ".venv",
}
CLONE_TIMEOUT_S = 900


class SourceError(AutoinstallError, ValueError):
    """REPO or --commit cannot be turned into a checkout; the message says how to fix it."""


class EmptyRepositoryError(SourceError):
    """The repository has no commits yet."""


class SourceInfo(BaseModel):
    """Where the checkout came from and which commit it is."""

    url_or_path: str
    """REPO as given."""
    kind: Literal["url", "dir", "git"]
    """`url`: cloned from a URL; `dir`: a copied directory; `git`: cloned from a local git directory."""
    commit: str | None = None
    """Full sha of the checked-out commit (HEAD of a copied work tree); None for a plain directory."""
    commit_date: str | None = None
    """Committer date of that commit, ISO 8601."""
    is_dirty: bool = False
    """A copied work tree had uncommitted changes or untracked files (they are in the checkout)."""
    name: str
    """A short name for the project, from the URL or path."""
    notes: list[str] = Field(default_factory=list)
    """What the checkout left out and why: links to outside it, special files, parts of `.git` not followed."""


def repo_name(repo: str) -> str:
    """A short name: `https://x/o/jinja.git` -> jinja, `/work/.mirror/pallets+jinja/repo` -> jinja."""
    parts = [p for p in re.split(r"[/:\\]", repo.rstrip("/")) if p]
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if part == ".git" or (part in ("repo", "repo.git") and i > 0 and "+" in parts[i - 1]):
            continue
        part = part.removesuffix(".git")
        return (part.split("+", 1)[1] if "+" in part else part) or "repo"
    return "repo"


class Commit(NamedTuple):
    sha: str
    date: str
    """Committer date, ISO 8601."""


def _recent(dest: Path) -> str:
    """A few recent commits and branch names, to show when a commit is unknown."""
    try:
        lines = run_git(dest, "log", "--all", "--max-count=5", "--format=%H %cs %s").splitlines()
        names = run_git(dest, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads", "refs/tags",
                        "refs/remotes").splitlines()
    except GitDataError:
        return ""
    shown = [f"  {sha[:12]} {rest[:70]}" for sha, _, rest in (ln.partition(" ") for ln in lines)]
    names = list(dict.fromkeys(n.removeprefix("origin/") for n in names if not n.endswith("/HEAD")))[:10]
    return ("recent commits:\n" + "\n".join(shown) if shown else "") + (
        f"\nbranches and tags: {', '.join(names)}" if names else ""
    )


def _verify(dest: Path, name: str) -> str | None:
    try:
        return run_git(dest, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}").strip()
    except GitDataError:
        return None


def _resolve(dest: Path, commit: str | None, where: str) -> Commit:
    """The commit to check out in our repository at `dest`: `commit`, else HEAD, else main/master."""
    refs = [ln for ln in run_git(dest, "for-each-ref", "--format=%(refname)").splitlines() if ln]
    sha = _verify(dest, "HEAD") if commit is None else _verify(dest, commit)
    if sha is None and commit is None:
        if not refs:
            msg = f"{where} is an empty repository (no commits yet); commit something first, or pass another REPO"
            raise EmptyRepositoryError(msg)
        refs.sort(key=lambda r: r.rsplit("/", 1)[-1] not in ("main", "master"))
        sha = next(filter(None, map(partial(_verify, dest), refs)), None)
        if sha is None:
            msg = f"{where} has refs but none names a commit it holds; its objects are incomplete. Pass another REPO"
            raise SourceError(msg)
    if sha is None:
        msg = f"unknown commit {commit!r} in {where}. Pass a sha, branch or tag that exists.\n{_recent(dest)}"
        raise SourceError(msg.strip())
    return Commit(sha, run_git(dest, "show", "--no-patch", "--format=%cI", sha).strip())


def _check_out(dest: Path, commit: str | None, where: str, notes: Notes) -> Commit:
    """Check our repository at `dest` out at `commit` (else its HEAD), detached; drop links leaving it."""
    try:
        target = _resolve(dest, commit, where)
        _refuse_oversized(dest, target.sha, where)
        run_git(dest, "checkout", "--quiet", "--detach", "--force", target.sha)
    except GitDataError as e:
        msg = f"cannot check out {commit or 'HEAD'} of {where}: {e}. Its objects may be incomplete or corrupt."
        raise SourceError(msg) from e
    drop_escaping_links(dest, notes)
    return target


def _refuse_oversized(dest: Path, sha: str, where: str) -> None:
    """Refuse a commit whose checkout writes a file or a total a copy may not (tree.py's caps): ten GB of
    zeros are ten MB of history, and git would write them all here."""
    total = 0
    for entry in run_git(dest, "ls-tree", "-r", "-l", "-z", "--full-tree", sha).split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()  # mode, type, object, size
        if len(parts) != 4 or parts[1] != "blob" or not parts[3].isdigit():
            continue
        size = int(parts[3])
        total += size
        if size > tree.MAX_FILE_BYTES or total > tree.MAX_TREE_BYTES:
            what = (f"{path[:200]!r} is {size} bytes" if size > tree.MAX_FILE_BYTES
                    else f"its files pass {tree.MAX_TREE_BYTES >> 30} GiB (at {path[:200]!r})")
            msg = (f"{where} at {sha[:12]}: {what}, more than a checkout writes on this host "
                   f"({tree.MAX_FILE_BYTES >> 20} MiB a file, {tree.MAX_TREE_BYTES >> 30} GiB in all). "
                   "Pass another commit, or a folder without it (a plain folder's large files are left out)")
            raise SourceError(msg)


def _clone(url: str, dest: Path, commit: str | None, notes: Notes) -> Commit:
    try:
        git.Repo.clone_from(url, dest, env=GIT_ENV, no_checkout=True, no_hardlinks=True,
                            kill_after_timeout=CLONE_TIMEOUT_S)
    except git.GitCommandError as e:
        lines = [ln.strip(" '\"") for ln in (e.stderr or str(e)).splitlines()]
        detail = next((ln for ln in lines if ln.startswith(("fatal:", "error:", "ERROR"))), None) or next(
            (ln for ln in reversed(lines) if ln), str(e)
        )
        msg = (
            f"cannot clone {url}: {detail}\n"
            "Check the URL and that the repository exists and is public (no credentials are asked for), "
            "or clone it yourself and pass the local path."
        )
        raise SourceError(msg) from e
    return _check_out(dest, commit, url, notes)


def _ignore_dir(src: Path):
    def skip(rel: str, name: str) -> bool:
        if rel == ".git" or name in NOT_COPIED:
            return True
        try:  # a virtualenv: its pyvenv.cfg, by lstat
            return stat.S_ISREG(os.lstat(src / rel / "pyvenv.cfg").st_mode)
        except OSError:
            return False
    return skip


def _skip_file(rel: str, name: str) -> bool:
    return rel == ".git" or name.endswith(".pyc")


def _from_git_dir(repo: str, git_dir: Path, commit: str | None, dest: Path, notes: Notes) -> SourceInfo:
    """A checkout of a local git directory at `commit`, from a fresh repository holding its objects."""
    try:
        import_objects(git_dir, dest, notes)
    except GitDataError as e:
        msg = f"{git_dir} cannot be read as a git repository: {e}. Clone it with a git you trust and pass the clone."
        raise SourceError(msg) from e
    target = _check_out(dest, commit, str(git_dir), notes)
    return SourceInfo(url_or_path=repo, kind="git", commit=target.sha,
                      commit_date=target.date, name=repo_name(repo), notes=notes.summary())


def _local(repo: str, path: Path, commit: str | None, dest: Path) -> SourceInfo:
    notes = Notes()
    if looks_like_git_dir(path):
        return _from_git_dir(repo, path, commit, dest, notes)
    problem = dot_git_problem(path)
    has_git = looks_like_git_dir(path / ".git") and problem is None
    if commit:
        if not has_git:
            why = f" ({problem})" if problem else ""
            msg = (f"--commit needs a git repository, but {path} is a plain directory{why}; drop --commit, or pass "
                   "the main repository's own folder")
            raise SourceError(msg)
        return _from_git_dir(repo, path / ".git", commit, dest, notes)
    try:
        copy_tree(path, dest, notes, skip_dir=_ignore_dir(path), skip_file=_skip_file, work_tree=True)
    except CopyTooLarge as e:
        msg = f"{repo}: {e}, more than a build's sandbox holds. Pass a smaller folder"
        raise SourceError(msg) from e
    if problem:
        notes.add("git", f"{problem}: copied as a plain directory")
    drop_escaping_links(dest, notes)
    if not has_git:
        return SourceInfo(url_or_path=repo, kind="dir", name=repo_name(str(path)), notes=notes.summary())
    try:
        import_objects(path / ".git", dest, notes)
        head = _resolve(dest, None, str(path))
        run_git(dest, "read-tree", head.sha)
        dirty = bool(run_git(dest, "status", "--porcelain", "--ignore-submodules=all").strip())
    except EmptyRepositoryError:
        raise
    except (GitDataError, SourceError) as e:
        shutil.rmtree(dest / ".git", ignore_errors=True)
        notes.add("git", f".git cannot be read as a repository ({e}): copied as a plain directory")
        return SourceInfo(url_or_path=repo, kind="dir", name=repo_name(str(path)), notes=notes.summary())
    return SourceInfo(url_or_path=repo, kind="dir", commit=head.sha, is_dirty=dirty,
                      commit_date=head.date, name=repo_name(str(path)),
                      notes=notes.summary())


def _local_path(repo: str) -> Path:
    """The local path REPO names: a path, `~/path`, or a `file://` URL."""
    if repo.startswith("file://"):
        return Path(unquote(urlparse(repo).path))
    return Path(os.path.expanduser(repo))


def prepare_source(repo: str, commit: str | None, dest: Path) -> SourceInfo:
    """Make `dest` a checkout of REPO (at `commit` if given) and say where it came from.

    Args:
        repo: a URL, a local directory, or a local git directory (bare or `.git`).
        commit: a sha, branch or tag to check out; None for the default branch (or the directory as is).
        dest: where the checkout goes; must not exist or be empty.

    Returns:
        The source, its commit and commit date.

    Raises:
        SourceError: REPO cannot be reached or read, the commit is unknown, or the repository is empty.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        msg = f"destination {dest} already exists and is not empty; remove it or choose another"
        raise SourceError(msg)
    created = not dest.exists()
    try:
        if URL.match(repo) and not repo.startswith("file://"):
            dest.parent.mkdir(parents=True, exist_ok=True)
            notes = Notes()
            target = _clone(repo, dest, commit, notes)
            return SourceInfo(url_or_path=repo, kind="url", commit=target.sha,
                              commit_date=target.date, name=repo_name(repo),
                              notes=notes.summary())
        path = _local_path(repo).resolve()
        if not path.exists():
            hint = " If it is a URL, include the scheme (https://...)." if "." in repo.split("/")[0] else ""
            msg = f"{repo}: no such directory.{hint} Pass a URL, a local directory or a local git directory."
            raise SourceError(msg)
        if not path.is_dir():
            msg = f"{repo} is a file, not a directory or git repository; pass the project's folder"
            raise SourceError(msg)
        return _local(repo, path, commit, dest)
    except BaseException:
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
            if not created:
                dest.mkdir()
        raise
