"""The batch file: one repository a line (`URL-or-path[@commit]`, `#` comments) or JSON Lines, per line."""
from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel


class BatchEntry(BaseModel):
    """One repository to build."""

    line: int
    """1-based line number in the batch file."""
    repo: str
    """URL, or an absolute local path (relative paths are resolved against the batch file's directory)."""
    commit: str | None = None


class LineError(BaseModel):
    """A line that could not be read; the other lines still run."""

    line: int
    text: str
    message: str


_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_JSON_KEYS = {"repo", "commit"}


def _is_remote(repo: str) -> bool:
    return "://" in repo or bool(_SCP_LIKE.match(repo))


def _split_commit(token: str) -> tuple[str, str | None]:
    """`repo@commit` -> (repo, commit); an `@` followed by a path or host part belongs to the URL."""
    head, at, tail = token.rpartition("@")
    if not at or not head or "/" in tail or ":" in tail:
        return token, None
    return head, tail


def _text_line(text: str) -> tuple[str, str | None]:
    words = text.split()
    if len(words) != 1:
        msg = f"expected one repository per line (URL or path, optionally @commit), got {len(words)} words"
        raise ValueError(msg)
    if words[0].endswith("@"):
        msg = "nothing after '@': write REPO@COMMIT, or leave out the '@' for the default branch"
        raise ValueError(msg)
    return _split_commit(words[0])


def _json_line(text: str) -> tuple[str, str | None]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        msg = f"invalid JSON ({e.msg} at column {e.colno})"
        raise ValueError(msg) from e
    if not isinstance(data, dict):
        msg = 'a JSON line must be an object like {"repo": "URL", "commit": "SHA"}'
        raise ValueError(msg)
    unknown = sorted(set(data) - _JSON_KEYS)
    if unknown:
        msg = f"unknown keys {unknown} (allowed: repo, commit)"
        raise ValueError(msg)
    repo, commit = data.get("repo"), data.get("commit")
    if not isinstance(repo, str) or not repo.strip():
        msg = 'missing "repo" (a URL or path string)'
        raise ValueError(msg)
    if commit is not None and (not isinstance(commit, str) or not commit.strip()):
        msg = '"commit" must be a non-empty string or null'
        raise ValueError(msg)
    return repo.strip(), commit.strip() if commit else None


def parse_batch(text: str, base_dir: Path | None = None) -> tuple[list[BatchEntry], list[LineError]]:
    """Entries and line errors of a batch file's text; each line is JSON when it starts with `{`."""
    entries: list[BatchEntry] = []
    errors: list[LineError] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line.startswith("{"):
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        try:
            repo, commit = _json_line(line) if line.startswith("{") else _text_line(line)
        except ValueError as e:
            errors.append(LineError(line=number, text=raw, message=str(e)))
            continue
        if not _is_remote(repo):
            path = Path(repo).expanduser()
            repo = str(path if path.is_absolute() or base_dir is None else (base_dir / path).resolve())
        entries.append(BatchEntry(line=number, repo=repo, commit=commit))
    return entries, errors


def read_batch_file(path: Path) -> tuple[list[BatchEntry], list[LineError]]:
    """Parse a batch file; relative local paths in it are relative to its directory."""
    return parse_batch(path.read_text(encoding="utf-8", errors="replace"), path.resolve().parent)
