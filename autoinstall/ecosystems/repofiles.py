"""Reading repository files for the survey: safe loaders that record problems as notes, and line lookup."""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def inside(root: Path, path: Path) -> bool:
    """True when `path`, with every symlink resolved, stays under `root`: the survey reads nothing else."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


class RepoFiles:
    """One repository's files, read at most once each, with problems collected in `notes`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.notes: list[str] = []
        self._text: dict[str, str | None] = {}

    def rel(self, path: Path) -> str:
        """The path relative to the repository root, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def text(self, rel: str) -> str | None:
        """The file's text, or None if it is missing, too large or not text."""
        if rel not in self._text:
            path = self.root / rel
            content = None
            try:
                if not inside(self.root, path):
                    self.notes.append(f"{rel}: points outside the checkout, not read")
                elif path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
                    content = path.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                self.notes.append(f"{rel}: could not be read ({e})")
            self._text[rel] = content
        return self._text[rel]

    def toml(self, rel: str) -> dict[str, Any] | None:
        """The parsed TOML file, or None (a note says why if it exists but is malformed)."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            self.notes.append(f"{rel}: malformed TOML, ignored ({e})")
            return None

    def ini(self, rel: str, text: str | None = None) -> configparser.ConfigParser | None:
        """The parsed INI file (no interpolation), or None with a note if malformed."""
        text = self.text(rel) if text is None else text
        if text is None:
            return None
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text, source=rel)
        except configparser.Error as e:
            self.notes.append(f"{rel}: malformed INI, ignored ({str(e).splitlines()[0]})")
            return None
        return parser

    def yaml(self, rel: str) -> Any:
        """The parsed YAML file, or None with a note if malformed."""
        text = self.text(rel)
        if text is None:
            return None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as e:
            self.notes.append(f"{rel}: malformed YAML, ignored ({str(e).splitlines()[0]})")
            return None

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
        workflows = self.root / ".github" / "workflows"
        paths = sorted(workflows.glob("*.y*ml")) if workflows.is_dir() else []
        paths += [self.root / n for n in root_files if (self.root / n).is_file()]
        found = []
        for path in paths:
            rel = self.rel(path)
            for number, line in enumerate((self.text(rel) or "").splitlines(), 1):
                if m := pattern.search(line):
                    found.append(Evidence(file=rel, line=number, text=m.group(0).strip()[:200]))
        return found

    def walk(self, suffixes: tuple[str, ...], limit: int = 5000) -> Iterator[Path]:
        """Files under the root with one of the suffixes, skipping VCS, venv and build folders."""
        count = 0
        stack = [self.root]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                        stack.append(entry)
                elif entry.name.endswith(suffixes):
                    count += 1
                    if count > limit:
                        self.notes.append(
                            f"more than {limit} {'/'.join(suffixes)} files: only the first read"
                        )
                        return
                    yield entry
