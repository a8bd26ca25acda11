"""Reading repository files for the survey: safe loaders that record problems as notes, and line lookup.

A checkout is a stranger's tree. Every path is looked at by lstat after resolving links that stay inside the
checkout (`kind_of`): nothing is read or listed through a link that leaves it, FIFOs, sockets and
devices are never opened (a FIFO opened for reading blocks forever), files over MAX_FILE_BYTES are skipped,
bytes that are not UTF-8 are replaced, and malformed TOML, JSON, YAML or INI is ignored: each with a note.
Ecosystems read through `RepoFiles` (and `is_file` in `detect`), never with `open` or `Path.read_text`.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import yaml

from envs.spec import Evidence

SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "env",
    ".env",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".eggs",
    "site-packages",
    ".idea",
    ".vscode",
}
MAX_FILE_BYTES = 2_000_000
"""Files larger than this are not read (a note says so): manifests and sources are far smaller."""
MAX_TOTAL_BYTES = 512_000_000
"""What one survey reads and keeps at most, all files together (a checkout of many large files stops)."""
YAML_ALIAS_NODES = 100_000
"""What a YAML file's aliases may add to it, in nodes: nine levels of `&a [*b, *b, ...]` make a 600-byte file
that is 9**9 nodes to whoever walks or prints it (alias reuse is fine: GitLab's `<<: *defaults`)."""
Kind = Literal["file", "dir", "missing", "outside", "loop", "fifo", "socket", "device", "other"]
SPECIAL = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device", stat.S_IFBLK: "device"}
_WHY = {"outside": "points outside the checkout, not read", "loop": "a symlink loop, not read",
        "fifo": "a FIFO, not a regular file: skipped", "socket": "a socket, not a regular file: skipped",
        "device": "a device, not a regular file: skipped", "other": "not a regular file: skipped"}
"""The note for each kind of path the survey does not read."""
_TYPES = {str: "string", int: "number", float: "number", bool: "boolean", list: "list"}


def kind_of(root: Path, path: Path) -> Kind:
    """What `path` is when links are followed only while they stay under `root`: the lstat of the resolved
    path (no link left in it); a path whose links lead out of `root` is "outside", whatever it points at."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return "loop"
    except ValueError:  # a NUL in the name: no such file
        return "missing"
    try:
        if not real.is_relative_to(root.resolve()):
            return "outside"
        mode = os.lstat(real).st_mode
    except (OSError, RuntimeError, ValueError):  # missing, a loop at the root, a NUL in the name
        return "missing"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):  # still a link after resolving: a loop or a dangling one
        return "loop"
    return SPECIAL.get(stat.S_IFMT(mode), "other")  # type: ignore[return-value]


def is_file(root: Path, path: Path) -> bool:
    """A regular file under `root`, links followed only inside it (what `detect` may look at)."""
    return kind_of(root, path) == "file"


def table(data: object, *keys: str) -> dict[str, Any]:
    """`data[k1][k2]...` when each is a table (a dict), else an empty one: a manifest with a wrong type
    there is not believed, and is no crash."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def read_capped(path: Path, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of the regular file `path` (already resolved), or None when it is not one or is over
    `limit`. Opened without following a link or waiting on a FIFO, checked again on the open file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = handle.read(limit + 1)
    return data if len(data) <= limit else None


class RepoFiles:
    """One repository's files, read at most once each, with problems collected in `notes`.

    Every read goes through `text` (or `is_file`, `is_dir`, `glob`, `listdir`, `walk`): nothing is read or
    listed across a link that leaves the root, FIFOs, sockets and devices are never opened, and files over
    MAX_FILE_BYTES are skipped; each of these gets a note.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.notes: list[str] = []
        self._text: dict[str, str | None] = {}
        self._read_bytes = 0

    def note(self, note: str) -> None:
        """Add `note` unless it is there already."""
        if note not in self.notes:
            self.notes.append(note)

    def rel(self, path: Path) -> str:
        """The path relative to the repository root, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def kind(self, rel: str, *, noted: bool = True) -> Kind:
        """What `rel` is (`kind_of`); a note for what is not read (a link out, a loop, a special file)."""
        found = kind_of(self.root, self.root / rel)
        if noted and found in _WHY:
            self.note(f"{rel}: {_WHY[found]}")
        return found

    def is_file(self, rel: str) -> bool:
        """A regular file in the checkout (links followed only inside it)."""
        return self.kind(rel) == "file"

    def is_dir(self, rel: str) -> bool:
        """A directory in the checkout (links followed only inside it)."""
        return self.kind(rel) == "dir"

    def listdir(self, rel: str = ".") -> list[Path]:
        """The entries of the folder `rel`, sorted; none when it is not a folder of the checkout."""
        if not self.is_dir(rel):
            return []
        try:
            return sorted((self.root / rel).iterdir())
        except OSError:
            return []

    def glob(self, pattern: str) -> list[Path]:
        """The matches of `pattern` that are files or folders of the checkout, sorted (the rest: a note)."""
        try:
            found = sorted(self.root.glob(pattern))
        except (OSError, ValueError, NotImplementedError):  # an absolute or empty pattern
            return []
        return [p for p in found if self.kind(self.rel(p)) in ("file", "dir")]

    def text(self, rel: str) -> str | None:
        """The file's text, or None if it is missing, too large, not a regular file or outside the checkout
        (a note says which, except for a missing one). Bytes that are not UTF-8 are replaced, with a note."""
        if rel not in self._text:
            self._text[rel] = self._read(rel) if self.kind(rel) == "file" else None
        return self._text[rel]

    def _read(self, rel: str) -> str | None:
        try:
            size = os.lstat((self.root / rel).resolve()).st_size
            if size > MAX_FILE_BYTES:
                self.note(f"{rel}: {size} bytes, over the {MAX_FILE_BYTES} byte cap: skipped")
                return None
            if self._read_bytes + size > MAX_TOTAL_BYTES:
                self.note(f"more than {MAX_TOTAL_BYTES} bytes read in all: the files after that are skipped")
                return None
            data = read_capped((self.root / rel).resolve())
        except OSError as e:
            self.note(f"{rel}: could not be read ({e.strerror or type(e).__name__})")
            return None
        if data is None:
            self.note(f"{rel}: changed while read (no longer a regular file under the cap): skipped")
            return None
        self._read_bytes += len(data)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.note(f"{rel}: not UTF-8, read with replacement characters")
            return data.decode("utf-8", errors="replace")

    def table(self, rel: str, data: object, *keys: str) -> dict[str, Any]:
        """`data[k1][k2]...` as `table()` reads it, with a note when one is there but is not a table."""
        for i, key in enumerate(keys):
            value = data.get(key) if isinstance(data, dict) else None
            if value is not None and not isinstance(value, dict):
                kind = _TYPES.get(type(value), type(value).__name__)
                self.note(f"{rel}: {'.'.join(keys[:i + 1])} is a {kind}, not a table: ignored")
                return {}
            data = value
        return data if isinstance(data, dict) else {}

    def guarded(self, what: str, read: Callable[[], object]) -> None:
        """Run one reader; a file shaped in a way it does not expect becomes a note, not a crash."""
        try:
            read()
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, OSError, RecursionError) as e:
            self.note(f"{what}: skipped part of the survey ({type(e).__name__}: {str(e)[:200]})")

    def json(self, rel: str) -> Any:
        """The parsed JSON file, or None (a note says why if it exists but is malformed)."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as e:
            self.note(f"{rel}: malformed JSON, ignored ({str(e)[:200]})")
            return None

    def toml(self, rel: str) -> dict[str, Any] | None:
        """The parsed TOML file, or None (a note says why if it exists but is malformed)."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as e:
            self.note(f"{rel}: malformed TOML, ignored ({str(e)[:200]})")
            return None
        return data

    def ini(self, rel: str, text: str | None = None) -> configparser.ConfigParser | None:
        """The parsed INI file (no interpolation), or None with a note if malformed."""
        text = self.text(rel) if text is None else text
        if text is None:
            return None
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text, source=rel)
        except configparser.Error as e:
            self.note(f"{rel}: malformed INI, ignored ({(str(e).splitlines() or [''])[0][:200]})")
            return None
        return parser

    def yaml(self, rel: str) -> Any:
        """The parsed YAML file, or None with a note if malformed or if its aliases blow it up (`tree_size`)."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError, TypeError) as e:  # a huge int, an unhashable key
            self.note(f"{rel}: malformed YAML, ignored ({(str(e).splitlines() or [''])[0][:200]})")
            return None
        if tree_size(data, len(text) + YAML_ALIAS_NODES) is None:
            self.note(f"{rel}: its aliases expand it past {YAML_ALIAS_NODES} nodes more than its length, or it "
                      "contains itself: ignored")
            return None
        return data

    def evidence(self, rel: str, needle: str, after: int = 0) -> Evidence:
        """Evidence for the first line at or after line `after` (1-based) containing `needle`."""
        text = self.text(rel) or ""
        lines = text.splitlines()
        for i in range(max(after - 1, 0), len(lines)):
            if needle in lines[i]:
                return Evidence(file=rel, line=i + 1, text=lines[i].strip()[:200])
        if after > 1:
            return self.evidence(rel, needle)
        return Evidence(file=rel, text=needle[:200])

    def line_of(self, rel: str, needle: str, after: int = 0) -> int:
        """The 1-based line of `needle` (see `evidence`), or 0 if absent."""
        return self.evidence(rel, needle, after).line or 0

    def lines_matching(self, pattern: re.Pattern[str], root_files: tuple[str, ...] = ("Makefile",)) -> list[Evidence]:
        """The matches of `pattern` in the CI workflows and the named root files (Makefile, justfile), with
        file:line: how a project's own CI runs its tests."""
        rels = [self.rel(p) for p in self.workflows()] + [n for n in root_files if self.is_file(n)]
        found = []
        for rel in rels:
            for number, line in enumerate((self.text(rel) or "").splitlines(), 1):
                if m := pattern.search(line):
                    found.append(Evidence(file=rel, line=number, text=m.group(0).strip()[:200]))
        return found

    def workflows(self) -> list[Path]:
        """The GitHub workflow files (.github/workflows/*.yml and *.yaml) that are files of the checkout."""
        if not self.is_dir(".github/workflows"):
            return []
        return [p for p in self.glob(".github/workflows/*.y*ml") if self.is_file(self.rel(p))]

    def walk(self, suffixes: tuple[str, ...], limit: int = 5000) -> Iterator[Path]:
        """Regular files under the root with one of the suffixes, skipping VCS, venv and build folders; links
        are not followed, special files (FIFOs, sockets, devices) are noted and skipped."""
        count = 0
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                            stack.append(Path(entry.path))
                        continue
                    regular = entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if not entry.name.endswith(suffixes):
                    continue
                path = Path(entry.path)
                if not regular:
                    self.kind(self.rel(path))  # the note says what it is
                    continue
                count += 1
                if count > limit:
                    self.note(f"more than {limit} {'/'.join(suffixes)} files: only the first read")
                    return
                yield path


def tree_size(data: object, limit: int) -> int | None:
    """The nodes of `data` counted as a tree (a list, pair or dict shared by aliases once per place it appears), or
    None past `limit` or when it contains itself. Each shared node is sized once, so this costs its own size."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the containers on the current path: meeting one again is a cycle
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, closing = stack.pop()
        if not isinstance(node, (list, tuple, dict)) or (not closing and id(node) in sizes):
            continue
        items = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        if closing:
            open_nodes.discard(id(node))
            size = sizes[id(node)] = 1 + sum(sizes.get(id(item), 1) for item in items)
            if size > limit:
                return None
        elif id(node) in open_nodes:
            return None
        else:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((item, False) for item in items)
    return sizes.get(id(data), 1)
