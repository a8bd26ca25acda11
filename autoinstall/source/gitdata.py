"""A local git directory read as data: its objects and refs, copied into a fresh repository of our own.

Host git never runs on a stranger's git directory. Its layout is found by lstat alone (`find_git_dir`); then
`import_objects` copies what names the history and nothing that runs or redirects: `objects/` (regular files
only), `refs/`, `packed-refs`, `HEAD` (if it is a ref name or a sha) and `shallow`. Left behind, always: its
config (and every `[include]` in it), hooks, `info/attributes`, `commondir`, `gitdir`, `worktrees/`,
`modules/`, `objects/info/alternates`, and every link. Git then runs only on the fresh repository, with system
and global config off, no template, no attributes file and the overrides of `LOCAL_GIT_ENV`.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from autoinstall.source.tree import CopyTooLarge, Notes, copy_file, copy_tree

INERT_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.pager": "cat",
    "core.editor": "true",
    "core.askPass": "true",
    "core.gitProxy": "",
    "core.alternateRefsCommand": "",
    "core.attributesFile": "/dev/null",
    "credential.helper": "",
    "diff.external": "",
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "submodule.recurse": "false",
    "protocol.ext.allow": "never",
    "protocol.file.allow": "never",
    "uploadpack.packObjectsHook": "",
}
"""Config that every git invocation carries (GIT_CONFIG_COUNT outranks any config file): nothing runs."""


def _inert_env() -> dict[str, str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_ASKPASS": "true",
           "GIT_CONFIG_COUNT": str(len(INERT_CONFIG))}
    for i, (key, value) in enumerate(INERT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


GIT_ENV = _inert_env()
"""For clones from a URL: the user's own config (proxies, CA) stays, the overrides above win."""
LOCAL_GIT_ENV = {**GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1",
                 "GIT_TEMPLATE_DIR": "", "GIT_OPTIONAL_LOCKS": "1"}
"""For our own fresh repositories: no system or global config either (a global `filter.lfs` would run on
a checkout); the repository is ours, so git may write its index."""

KEPT = ("objects", "refs", "packed-refs", "HEAD", "shallow")
"""The entries of a git directory that are copied: the history, and which commit is current."""
LEFT_OUT_OBJECTS = ("info/alternates", "info/http-alternates")
REF = re.compile(r"^ref: (refs/[A-Za-z0-9._/-]{1,240})\n?$")
SHA = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})\n?$")
MAX_SMALL_FILE = 1 << 20


class GitDataError(Exception):
    """The git directory cannot be read as a repository; the message says why (the caller adds what to do)."""


def _lstat_kind(path: Path) -> int | None:
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except OSError:
        return None


def looks_like_git_dir(path: Path) -> bool:
    """`path` is a git directory of its own by lstat: a regular HEAD, real `objects/` and `refs/` folders."""
    return (_lstat_kind(path / "HEAD") == stat.S_IFREG and _lstat_kind(path / "objects") == stat.S_IFDIR
            and _lstat_kind(path / "refs") == stat.S_IFDIR)


def dot_git_problem(work_tree: Path) -> str | None:
    """Why `work_tree/.git` is not followed (a gitfile, a link, an incomplete folder), or None if it is usable.

    Returns None too when there is no `.git` at all (then it is a plain directory, and no note is due).
    """
    dot_git = work_tree / ".git"
    kind = _lstat_kind(dot_git)
    if kind is None or (kind == stat.S_IFDIR and looks_like_git_dir(dot_git)):
        return None
    if kind == stat.S_IFLNK:
        return ".git is a link (to another repository or host path), not followed"
    if kind == stat.S_IFREG:
        return ".git is a file pointing at a git directory elsewhere (a linked worktree or a submodule), not followed"
    if kind == stat.S_IFDIR:
        return ".git has no objects, refs or HEAD of its own (its history lives elsewhere), not followed"
    return ".git is a special file, not followed"


def _small_text(path: Path) -> str | None:
    """A small regular file's text, by lstat and O_NOFOLLOW; None for anything else."""
    if _lstat_kind(path) != stat.S_IFREG:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            return f.read(MAX_SMALL_FILE).decode("utf-8", "replace")
    except OSError:
        return None


def _extension(config_text: str, name: str) -> str | None:
    """`extensions.<name>` from a config file's text, read as text: nothing is included, nothing is run."""
    section = None
    for raw in config_text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if m := re.match(r"^\[\s*([A-Za-z0-9.-]+)\s*\]", line):
            section = m.group(1).lower()
        elif section == "extensions" and "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            if key.lower() == name:
                return value.strip('"').lower()
    return None


def git(dest: Path, *args: str, timeout: float = 600) -> str:
    """Run host git on our own repository at `dest` (its `.git` made by `import_objects`)."""
    env = {**os.environ, **LOCAL_GIT_ENV, "GIT_DIR": str(dest / ".git"), "GIT_WORK_TREE": str(dest)}
    for inherited in ("GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR",
                      "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"):
        env.pop(inherited, None)
    try:
        done = subprocess.run(["git", *args], cwd=dest, env=env, capture_output=True, text=True, errors="replace",
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise GitDataError(f"git {args[0]} took more than {timeout:.0f}s") from e
    if done.returncode:
        detail = next((ln for ln in done.stderr.splitlines() if ln.startswith(("fatal:", "error:"))),
                      done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
        raise GitDataError(f"git {args[0]}: {_printable(detail[:300])}")
    return done.stdout


def _printable(text: str) -> str:
    """Git quotes a repository's own bytes in its errors: keep them from reaching a terminal as controls."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def import_objects(git_dir: Path, dest: Path, notes: Notes) -> None:
    """Make `dest/.git` a fresh repository holding `git_dir`'s objects and refs (see the module).

    Raises:
        GitDataError: its object format or ref storage is one this git cannot read, or HEAD is neither a ref
            nor a sha.
    """
    config = _small_text(git_dir / "config") or ""
    if (refs := _extension(config, "refstorage")) not in (None, "files"):
        raise GitDataError(f"its refs are stored as {refs!r}, which git {_git_version()} here cannot read")
    object_format = _extension(config, "objectformat") or "sha1"
    if object_format not in ("sha1", "sha256"):
        raise GitDataError(f"its object format {object_format!r} is not one git knows")
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "--quiet", "--template=", f"--object-format={object_format}")
    ours = dest / ".git"
    head = _small_text(git_dir / "HEAD") or ""
    if not (REF.match(head) or SHA.match(head)):
        raise GitDataError("its HEAD is neither a ref nor a commit")
    for name in KEPT:
        source = git_dir / name
        kind = _lstat_kind(source)
        if kind is None:
            continue
        if name in ("objects", "refs"):
            if kind != stat.S_IFDIR:
                notes.add("git", f".git/{name} is not a folder (a link?), not followed")
                continue
            left_out = LEFT_OUT_OBJECTS if name == "objects" else ()
            for rel in left_out:
                if _lstat_kind(source / rel) is not None:
                    notes.add("git", f".git/objects/{rel} names objects stored elsewhere, not followed")
            copied = Notes()
            try:
                copy_tree(source, ours / name, copied, skip_file=lambda rel, _n, skip=left_out: rel in skip)
            except CopyTooLarge as e:
                raise GitDataError(f".git/{name}: {e}") from e
            for line in copied.summary():
                notes.add("git", f".git/{name}/{line}")
        elif kind != stat.S_IFREG:
            notes.add("git", f".git/{name} is not a regular file, not followed")
        elif name == "HEAD":
            (ours / "HEAD").write_text(head)
        else:
            copy_file(str(source), str(ours / name), 0o644)
    _drop_links(ours, notes)


def _drop_links(ours: Path, notes: Notes) -> None:
    """A git directory of ours holds no links at all: a copied `refs/heads/x -> /etc/passwd` would be read."""
    for folder, dirs, files in os.walk(ours, followlinks=False):
        for name in [*files, *dirs]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                notes.add("git", f".git/{os.path.relpath(path, ours)} is a link, not followed")
                os.unlink(path)


def _git_version() -> str:
    try:
        return subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.split()[-1]
    except (OSError, IndexError):
        return "?"
