"""Sources: turn REPO (a URL, a local directory, or a local git directory) into a clean checkout.

- URL (`https://...`, `ssh://...`, `git@host:path`, `file://...`): cloned with gitpython.
- Local git directory, bare (`/work/.mirror/owner+name/repo`) or a `.git` folder: cloned locally.
- Local directory: copied as it is, uncommitted files included. If it is a git work tree its `.git` is
  copied too (setuptools-scm and friends read versions from it) and HEAD is recorded; with `--commit`
  it is cloned at that commit instead, so the checkout is exactly that commit.
The user's input is never modified: git runs with GIT_OPTIONAL_LOCKS=0 (no index refresh) and clones
copy objects rather than hard-linking them. Virtualenvs, tox/nox envs and caches are not copied.

Repositories are strangers' code, so git is inert on them: every invocation carries config overrides
(INERT_CONFIG, through GIT_CONFIG_COUNT, which outranks the repository's own config) that disable hooks,
fsmonitor, pagers, editors, credential helpers and external diff drivers; a copied work tree gets a
`.git/config` written here (its own may define filter and diff drivers that checkout and status would
run), and only then is git asked whether it is dirty.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Literal

import git
from pydantic import BaseModel

from autoinstall.errors import AutoinstallError

INERT_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.pager": "cat",
    "core.editor": "true",
    "core.askPass": "true",
    "core.gitProxy": "",
    "core.alternateRefsCommand": "",
    "credential.helper": "",
    "diff.external": "",
    "protocol.ext.allow": "never",
    "uploadpack.packObjectsHook": "",
}
"""Config that every git invocation on a source carries: nothing in the repository's config runs."""
KEPT_CONFIG = ("core.repositoryformatversion", "extensions.objectformat", "extensions.refstorage")
"""What a copied work tree's `.git/config` keeps: what git needs to read the repository, nothing it runs."""


def _inert_env() -> dict[str, str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_ASKPASS": "true",
           "GIT_CONFIG_COUNT": str(len(INERT_CONFIG))}
    for i, (key, value) in enumerate(INERT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


GIT_ENV = _inert_env()
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://|^[\w.-]+@[\w.-]+:")
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


def _recent(repo: git.Repo) -> str:
    """A few recent commits and branch names, to show when a commit is unknown."""
    lines = []
    try:
        for commit in repo.iter_commits("--all", max_count=5):
            lines.append(f"  {commit.hexsha[:12]} {commit.committed_datetime.date()} {commit.summary[:60]}")
    except (git.GitCommandError, ValueError):
        pass
    names = [ref.name.removeprefix("origin/") for ref in repo.refs if not ref.name.endswith("/HEAD")]
    branches = list(dict.fromkeys(names))[:10]
    return ("recent commits:\n" + "\n".join(lines) if lines else "") + (
        f"\nbranches and tags: {', '.join(branches)}" if branches else ""
    )


def _resolve(repo: git.Repo, commit: str | None, where: str) -> git.Commit:
    """The commit to check out: `commit`, else HEAD, else the main/master branch."""
    if not any(True for _ in repo.refs) and not repo.head.is_valid():
        msg = f"{where} is an empty repository (no commits yet); commit something first, or pass another REPO"
        raise SourceError(msg)
    if commit is None:
        if repo.head.is_valid():
            return repo.head.commit
        refs = sorted(repo.refs, key=lambda r: r.name.split("/")[-1] not in ("main", "master"))
        return refs[0].commit
    try:
        return repo.commit(commit)
    except (git.BadName, ValueError, git.GitCommandError) as e:
        msg = f"unknown commit {commit!r} in {where}. Pass a sha, branch or tag that exists.\n{_recent(repo)}"
        raise SourceError(msg.strip()) from e


def _clone(url_or_path: str, dest: Path, commit: str | None, where: str) -> git.Commit:
    try:
        clone = git.Repo.clone_from(
            url_or_path,
            dest,
            env=GIT_ENV,
            no_checkout=True,
            no_hardlinks=True,
            kill_after_timeout=CLONE_TIMEOUT_S,
        )
    except git.GitCommandError as e:
        lines = [ln.strip(" '\"") for ln in (e.stderr or str(e)).splitlines()]
        detail = next((ln for ln in lines if ln.startswith(("fatal:", "error:", "ERROR"))), None) or next(
            (ln for ln in reversed(lines) if ln), str(e)
        )
        msg = (
            f"cannot clone {url_or_path}: {detail}\n"
            "Check the URL and that the repository exists and is public (no credentials are asked for), "
            "or clone it yourself and pass the local path."
        )
        raise SourceError(msg) from e
    clone.git.update_environment(**GIT_ENV)
    target = _resolve(clone, commit, where)
    clone.git.checkout("--detach", "--force", target.hexsha)
    return target


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {
        n for n in names if n in NOT_COPIED or n.endswith(".pyc") or (Path(folder, n, "pyvenv.cfg").is_file())
    }


def _open_git(path: Path) -> git.Repo | None:
    try:
        repo = git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    repo.git.update_environment(**GIT_ENV)
    return repo


def _local(repo: str, path: Path, commit: str | None, dest: Path) -> SourceInfo:
    local = _open_git(path)
    is_git_dir = local is not None and (local.bare or path.name == ".git" or Path(local.git_dir) == path)
    work_tree = local is not None and not is_git_dir and Path(local.working_tree_dir or "") == path
    if local is None or not (is_git_dir or work_tree):
        if commit:
            msg = f"--commit needs a git repository, but {path} is a plain directory; drop --commit"
            raise SourceError(msg)
        shutil.copytree(path, dest, symlinks=True, ignore=_ignore, dirs_exist_ok=True)
        return SourceInfo(url_or_path=repo, kind="dir", name=repo_name(str(path)))
    if is_git_dir or commit:
        target = _clone(str(path), dest, commit, str(path))
        return SourceInfo(
            url_or_path=repo,
            kind="git",
            commit=target.hexsha,
            commit_date=target.committed_datetime.isoformat(),
            name=repo_name(str(path)),
        )
    head = _resolve(local, None, str(path))
    shutil.copytree(path, dest, symlinks=True, ignore=_ignore, dirs_exist_ok=True)
    dirty = _dirty_copy(dest)
    return SourceInfo(
        url_or_path=repo,
        kind="dir",
        commit=head.hexsha,
        is_dirty=dirty,
        commit_date=head.committed_datetime.isoformat(),
        name=repo_name(str(path)),
    )


def _dirty_copy(copy: Path) -> bool:
    """Whether a copied work tree differs from its HEAD, asked of git only after its config was replaced.

    A `.git` file (a linked worktree or submodule) points at a git directory elsewhere whose config
    cannot be rewritten here: such a copy counts as dirty, and its content digest names it.
    """
    git_dir = copy / ".git"
    if not git_dir.is_dir():
        return True
    _write_inert_config(git_dir)
    shutil.rmtree(git_dir / "hooks", ignore_errors=True)
    (git_dir / "config.worktree").unlink(missing_ok=True)
    try:
        return bool(git.Repo(copy).git.status("--porcelain", env=GIT_ENV).strip())
    except git.GitCommandError:
        return True


def _write_inert_config(git_dir: Path) -> None:
    """Replace `.git/config` by one that keeps only KEPT_CONFIG (read without running anything)."""
    config = git_dir / "config"
    reader = git.GitConfigParser(str(config), read_only=True) if config.is_file() else None
    kept = []
    for key in KEPT_CONFIG:
        section, option = key.split(".")
        if reader is not None and reader.has_option(section, option):
            kept.append((section, option, str(reader.get_value(section, option))))
    lines: dict[str, list[str]] = {"core": ["\tbare = false"]}
    for section, option, value in kept:
        lines.setdefault(section, []).append(f"\t{option} = {value}")
    config.write_text("".join(f"[{s}]\n" + "\n".join(v) + "\n" for s, v in lines.items()))


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
        if URL.match(repo):
            dest.parent.mkdir(parents=True, exist_ok=True)
            target = _clone(repo, dest, commit, repo)
            return SourceInfo(
                url_or_path=repo,
                kind="url",
                commit=target.hexsha,
                commit_date=target.committed_datetime.isoformat(),
                name=repo_name(repo),
            )
        path = Path(os.path.expanduser(repo)).resolve()
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
