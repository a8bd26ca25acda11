"""The agent's change, sorted: what touches product code is carried into the grading tree, the rest dropped.

`find(start, agent, policy)` compares the start state with the agent's tree (trees.py: no link followed) and
classifies every differing path. Dropped, each with its reason: what belongs to the task (the policy's
protected patterns and untransferred folders: tests, their data and configuration, manifests, build output,
runner plug-ins; and, when the policy names the language's source suffixes, every file that is not source:
a snapshot or golden file beside the code is as much the task's as one in a test folder), links and special files, binaries, files over the size cap, new modules where they would
shadow an import (a new top-level `pytest.py`, a new `org/junit/` class), and text whose added lines reach
into the runner or the grading (the policy's `reach` tokens, absent from the start's version; also in the
text as each language's lexer reads it: Java's unicode escapes decoded, Rust's raw identifiers, JavaScript's
escaped names and strings, Python's NFKC names, spelling.py; Go's and Rust's read with their imports spelled
out: go_reach.py, rust_reach.py, which also refuse what can end a test binary with status 0; Java's against
the JVM's runtime, reflection by name and raw descriptors: java_reach.py), and Python,
JavaScript and TypeScript code whose added code reaches there without spelling it (python_reach.py,
js_reach.py), and an equality that answers without looking at the other side (blind_equality.py). Rust test
items inside a source file are the start's, whatever the agent did to them (rust_inline.py), and so are Rust doc
comments and Python docstrings that hold doc tests (doc_tests.py).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import (
    blind_equality,
    doc_tests,
    go_reach,
    java_reach,
    js_reach,
    python_patches,
    python_reach,
    rust_inline,
    rust_reach,
    spelling,
    trees,
)
from .globs import first_match

READERS = {"go": go_reach, "rust": rust_reach, "java": java_reach, "node": js_reach, "python": python_reach}
"""Each language (as a policy's `code_checks` names it) -> its reader: its source suffixes, its lexer's name
and its `canonical` spelling, the text as the language reads it (spelling.py `spelled`), for the policy's
tokens."""
BINARY_SUFFIXES = (".so", ".pyd", ".dylib", ".dll", ".o", ".a", ".class", ".jar", ".war", ".node", ".wasm",
                   ".exe", ".pyc", ".pyo", ".rlib", ".rmeta")


@dataclass
class Change:
    path: str
    kind: str
    """added, modified, deleted (from the start's point of view)."""
    accepted: bool = False
    reason: str = ""
    content: bytes | None = None
    """What the grading tree gets for an accepted added/modified file (the agent's bytes, or merged)."""


@dataclass
class Policy:
    protected: tuple = ()
    untransferred: tuple = ()
    """Folder names (at any depth) never taken from the agent: dependencies, build output, .git."""
    new_modules: list = field(default_factory=list)
    """[{"suffixes": [...], "anchor": "__init__.py" | ".java", "root_ok": false}]: a new file with one of the
    suffixes is kept only inside a folder that held `anchor` (a file of that name, or of that suffix) at the
    start; never at the root unless root_ok."""
    inline_tests: tuple = ()
    """Languages whose source files hold tests of their own ("rust")."""
    reach: tuple = ()
    """Text that no added line of product code may contain (runner internals, the grader's paths)."""
    code: tuple = ()
    """Suffixes of source files: any other file is the task's (a snapshot, golden data, text the tests read)."""
    code_checks: tuple = ()
    """Languages whose added product code is read past its spelling ("python": python_reach.py, "node":
    js_reach.py; "java", "go", "rust": blind_equality.py)."""

    @classmethod
    def from_json(cls, data: dict) -> Policy:
        return cls(protected=tuple(data.get("protected", ())), untransferred=tuple(data.get("untransferred", ())),
                   new_modules=list(data.get("new_modules", ())), inline_tests=tuple(data.get("inline_tests", ())),
                   reach=tuple(data.get("reach", ())), code_checks=tuple(data.get("code_checks", ())),
                   code=tuple(data.get("code", ())))

    def is_bulky(self, rel: str) -> bool:
        """An untransferred folder (by its last part)."""
        return rel.rsplit("/", 1)[-1] in self.untransferred

    def in_bulky(self, rel: str) -> bool:
        """The path is an untransferred folder or lies under one."""
        return any(part in self.untransferred for part in rel.split("/"))

    def protects(self, path: str) -> str | None:
        """Why `path` belongs to the task, or None."""
        parts = path.split("/")
        bulky = next((p for p in parts if p in self.untransferred), None)
        if bulky:
            return f"{bulky}/ is the task's (dependencies or build output, as built)"
        pattern = first_match(path, self.protected)
        return f"belongs to the task ({pattern})" if pattern else None

    def not_taken(self, path: str) -> str | None:
        """Why the agent's change to `path` is not carried into the grading tree (what `protects` says, or
        that it is not a source file), or None. Unlike `protects`, a file that is not source is not locked for
        the test run: the tests may write it."""
        why = self.protects(path)
        if why is None and self.code and not path.endswith(self.code):
            why = "not a source file: data, snapshots and text the tests may read are the task's"
        return why


def _differs(start: str, agent: str, rel: str, s: trees.Entry | None, a: trees.Entry | None) -> bool:
    if s is None or a is None or s.kind != a.kind:
        return True
    if s.kind == "file":
        return not trees.same_file(os.path.join(start, rel), os.path.join(agent, rel))
    if s.kind == "link":
        return os.readlink(os.path.join(start, rel)) != os.readlink(os.path.join(agent, rel))
    return False  # directories: their contents are compared one by one; specials: never carried


def bulky(tree: dict, policy: Policy) -> set:
    """The untransferred folders of a walked tree (as walk lists them: outermost ones)."""
    return {rel for rel, e in tree.items() if e.kind == "dir" and policy.is_bulky(rel)}


def walk(root: str, policy: Policy) -> dict:
    """The tree at `root` without descending into untransferred folders (they are listed, not entered)."""
    return trees.walk(root, policy.is_bulky)


def find(start: str, agent: str, policy: Policy, ours: dict | None = None) -> list:
    """Every path where the agent's tree differs from the start's, classified (see the module docstring);
    untransferred folders are left to mend.reset_bulky."""
    ours = walk(start, policy) if ours is None else ours
    theirs = walk(agent, policy)
    changes = []
    for rel in sorted(set(ours) | set(theirs)):
        s, a = ours.get(rel), theirs.get(rel)
        if policy.in_bulky(rel):
            continue
        if (s and s.kind == "dir") and (a and a.kind == "dir"):
            continue
        if (s is None or s.kind == "dir") and (a is None or a.kind == "dir"):
            continue  # a folder only one side has: its files are listed on their own
        if not _differs(start, agent, rel, s, a):
            continue
        kind = "added" if s is None or s.kind == "dir" else "deleted" if a is None or a.kind == "dir" else "modified"
        changes.append(_classify(Change(rel, kind), start, agent, ours, s, a, policy))
    return changes


def _classify(change: Change, start: str, agent: str, ours: dict, s: trees.Entry | None,
              a: trees.Entry | None, policy: Policy) -> Change:
    rel = change.path
    why = policy.not_taken(rel)
    if why:
        return _drop(change, why)
    if change.kind == "deleted":
        change.accepted = True
        return change
    assert a is not None
    if a.kind == "link":
        return _drop(change, "a symbolic link is never carried over")
    if a.kind != "file":
        return _drop(change, "not a regular file")
    if a.size > trees.MAX_FILE_BYTES:
        return _drop(change, f"larger than {trees.MAX_FILE_BYTES // (1024 * 1024)} MiB")
    data = trees.read_bytes(os.path.join(agent, rel))
    if data is None:
        return _drop(change, "could not be read as a regular file")
    if rel.endswith(BINARY_SUFFIXES) or b"\0" in data[:8192]:
        return _drop(change, "a binary file (compiled code is never carried over)")
    if change.kind == "added":
        shadow = _shadows(rel, ours, policy)
        if shadow:
            return _drop(change, shadow)
    before = trees.read_bytes(os.path.join(start, rel)) if s is not None and s.kind == "file" else b""
    before = before or b""
    data, kept, refused = _keep_inline_tests(rel, before, data, policy)
    if refused:
        return _drop(change, refused)
    if kept:
        if data == before:
            return _drop(change, f"only its {kept} changed, and those belong to the task")
        change.reason = f"its {kept} are the task's: the start's were kept"
    why = content_problem(rel, before, data, policy)
    if why:
        return _drop(change, why)
    change.accepted, change.content = True, data
    return change


def _keep_inline_tests(rel: str, before: bytes, data: bytes, policy: Policy) -> tuple:
    """(data with the task's tests inside a source file kept as the start has them, what was kept or "", why the
    file is refused or ""): Rust's `#[cfg(test)]`/`#[test]` items (rust_inline.py) and doc tests, Python's
    doctest examples (doc_tests.py); a whole file of tests (`#![cfg(test)]`) is refused."""
    text, start_text = data.decode("utf-8", "surrogateescape"), before.decode("utf-8", "surrogateescape")
    kept = []
    if rel.endswith(".rs") and "rust" in policy.inline_tests:
        if rust_inline.whole_file_is_tests(text) or rust_inline.whole_file_is_tests(start_text):
            return data, "", "a test module (#![cfg(test)]) belongs to the task"
        text, touched = rust_inline.keep_tests(start_text, text)
        kept += ["#[cfg(test)]/#[test] items"] if touched else []
        text, touched = doc_tests.keep_rust_docs(start_text, text)
        kept += ["doc comments with doc tests"] if touched else []
    elif rel.endswith(".py") and "doctest" in policy.inline_tests:
        text, touched = doc_tests.keep_python_doctests(start_text, text)
        kept += ["docstrings with doctest examples"] if touched else []
    return (text.encode("utf-8", "surrogateescape"), " and ".join(kept), "") if kept else (data, "", "")


def moved_doc_tests(found: list, start: str) -> dict:
    """Workdir path of each accepted Rust file -> the lines its doc tests moved to -> the start's lines."""
    moved = {}
    for c in found:
        if c.accepted and c.content is not None and c.path.endswith(".rs"):
            before = trees.read_bytes(os.path.join(start, c.path)) or b""
            lines = doc_tests.moved_blocks(before.decode("utf-8", "surrogateescape"),
                                           c.content.decode("utf-8", "surrogateescape"))
            if lines:
                moved[c.path] = lines
    return moved


def content_problem(rel: str, before: bytes, after: bytes, policy: Policy) -> str | None:
    """Why the grader refuses `after` as the new text of product file `rel` whose start text is `before`, else
    None: a token an added line holds (as written or squeezed), or added code that reaches where product code
    may not, or compares blindly. Task making asks the same of a gold patch (autoinstall/tasks/grading.py)."""
    old, new = before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
    token = _reaches(old, new, policy.reach)
    for language, reader in READERS.items():  # names spelled as the language's lexer reads them
        if not token and rel.endswith(reader.SUFFIXES) and language in policy.code_checks:
            token = _reaches(reader.canonical(old), reader.canonical(new), policy.reach, reader.LEXER)
    if token:
        return f"an added line reaches into the test runner or the grading ({token!r})"
    for language, reader in (("go", go_reach), ("rust", rust_reach), ("java", java_reach)):
        mine = rel.endswith(reader.SUFFIXES) and language in policy.code_checks
        why = reader.new_reach(old, new) if mine else None
        if why:
            return f"its added code reaches where product code may not: {why}"
    if rel.endswith(go_reach.NATIVE) and "go" in policy.code_checks:
        why = go_reach.native_reach(rel, old, new)
        if why:
            return why
    if rel.endswith(".py") and "python" in policy.code_checks:
        why = python_reach.new_reach(old, new, policy.reach, python_patches.own_package(rel))
        if why:
            return f"its added code reaches where product code may not ({why})"
    for language, suffixes in blind_equality.SUFFIXES.items():
        if rel.endswith(suffixes) and language in policy.code_checks:
            why = blind_equality.blind(language, old, new)
            if why:
                return f"its added code compares blindly: {why}"
    if rel.endswith(js_reach.SUFFIXES) and "node" in policy.code_checks:
        why = js_reach.new_reach(old, new)
        if why:
            return f"its added code reaches where product code may not: {why}"
    return None


def _drop(change: Change, reason: str) -> Change:
    change.accepted, change.reason, change.content = False, reason, None
    return change


def _shadows(rel: str, ours: dict, policy: Policy) -> str | None:
    """Why a new file would shadow an import (see Policy.new_modules), else None."""
    for rule in policy.new_modules:
        if not rel.endswith(tuple(rule.get("suffixes", ()))):
            continue
        parent = os.path.dirname(rel)
        while parent and (ours.get(parent) is None or ours[parent].kind != "dir"):
            parent = os.path.dirname(parent)
        anchor = rule.get("anchor", "")
        if not parent and not rule.get("root_ok"):
            return "a new module at the top of the tree would shadow an installed one"
        names = [p.rsplit("/", 1)[-1] for p in ours if os.path.dirname(p) == parent and ours[p].kind == "file"]
        held = any(n == anchor or (anchor.startswith(".") and n.endswith(anchor)) for n in names)
        if not held:
            where = parent or "the top of the tree"
            return f"a new module outside the project's own packages (in {where}) would shadow an installed one"
    return None


def _reaches(start: str, after: str, tokens: tuple, language: str = "") -> str | None:
    """The first token an added line holds that the start did not, as written or once squeezed (spelling.py:
    `System . exit`, `process\n.exit`, `"org.ju" + "nit"` spell their token too; with a language, comments are
    those its lexer sees in the whole file)."""
    if not tokens:
        return None
    old = set(start.splitlines())
    text = "\n".join(ln for ln in after.splitlines() if ln not in old)
    if language:
        tight, tight_start = spelling.added_code(start, after, language)
    else:
        tight, tight_start = spelling.squeezed(text), spelling.squeezed(start)
    for token in tokens:
        if token in text and token not in start:
            return token
        squeezed = spelling.squeezed(token)
        if squeezed and squeezed in tight and squeezed not in tight_start:
            return token
    return None
