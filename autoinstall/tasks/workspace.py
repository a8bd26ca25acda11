"""What the generator does inside an environment's container: list and read sources, apply and revert a
patch, and run the environment's test suite with per-test results (envs/testrun)."""
from __future__ import annotations

import contextlib
import shlex
import uuid
import weakref
from collections.abc import Callable

from pydantic import BaseModel, Field

from autoinstall.tasks.coverage import PLUGIN_DIR, folder_prefix, install, with_plugin
from autoinstall.tasks.languages import grammar_for, is_source_path, is_test_path
from envs.base import Sandbox, read_capped
from envs.spec import Deselection, EnvSpec, TestRun
from envs.testrun import DEFAULT_RUNNER, abilities, run_tests, test_command

PATCH_DIR = "/var/tmp"
MAX_SOURCE_FILES = 400
SOURCE_CAP_BYTES = 2 * 1024 * 1024
"""A source file past this is not read (mutation skips any past 400,000 characters): at most
MAX_SOURCE_FILES of these are held on the host at once."""
FAILED = ("failed", "error")
QUIET_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
"""No .pyc is written: an edit of the same size in the same second must never run a stale cached module.
One hash seed: a test parametrized by a set's order (`",".join(names)`, `ids=str` of a frozenset) keeps its id
from run to run, in the search, the validation and the grader (grading.py carries these variables)."""


RUN_TMP = "/var/tmp/autoinstall-tmp"
"""TMPDIR of every task run (not the grader's): what tests put in temporary folders (pytest's tmp_path, Go's
t.TempDir, mkstemp) lands in the harness's scratch, which a validation container is emptied of between
validations (containers.py), not in /tmp, where it would stop the container's reuse."""


class Suite(BaseModel):
    """How the environment's tests are run: its command, runner, deselections and variables."""

    command: str
    runner: str = DEFAULT_RUNNER
    deselected: list[Deselection] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    flaky: list[str] = Field(default_factory=list)
    workdir: str = "/workspace"
    project: str = "."
    """The project's folder in the checkout (a nested plan's `Plan.workdir`): its sources are mutated, its
    suite's paths are relative to it."""

    @classmethod
    def from_spec(cls, spec: EnvSpec) -> Suite | None:
        command = spec.test_command or test_command(spec.plan)
        if not command or not abilities(spec.plan.test_runner).has_tests:
            return None
        return cls(command=command, runner=spec.plan.test_runner, deselected=list(spec.deselected),
                   env=dict(spec.env), flaky=list(spec.verification.flaky if spec.verification else []),
                   project=spec.plan.workdir)

    @property
    def selects(self) -> bool:
        """Its runner runs only given test ids (or the coarser units that hold them)."""
        return abilities(self.runner).select is not None

    def run(self, sandbox: Sandbox, timeout_s: float, max_fail: int | None = None,
            select: list[str] | None = None, trace: str | None = None) -> TestRun:
        """One run of the suite. Where the runner can: `max_fail` stops after that many failures, `select` runs
        only those test ids, `trace` writes the per-test call map there (see coverage.py)."""
        command, runner = self.command, abilities(self.runner)
        if max_fail is not None and runner.stop_after is not None:
            command = runner.stop_after(command, max_fail)
        if select is not None and runner.select is not None:
            if not _prepared(sandbox, PLUGIN_DIR):  # a fresh container (validation) has no plug-in yet
                runner.select.put(sandbox, PLUGIN_DIR)
                _remember(sandbox, PLUGIN_DIR)
            command = runner.select.selecting(sandbox, command, select, PLUGIN_DIR)
        if trace and runner.coverage_map:
            install(sandbox)
            command = with_plugin(command, {"AUTOINSTALL_TRACE": trace})
        if not _prepared(sandbox, RUN_TMP):
            sandbox.write_file(f"{RUN_TMP}/.keep", b"")  # the folder must exist: a missing TMPDIR is an error
            _remember(sandbox, RUN_TMP)
        return run_tests(sandbox, command, self.runner, self.deselected, timeout_s,  # type: ignore[arg-type]
                         {**self.env, **QUIET_ENV, "TMPDIR": RUN_TMP})


_PREPARED: weakref.WeakKeyDictionary[Sandbox, set[str]] = weakref.WeakKeyDictionary()
"""What each sandbox was given once (the selection plug-in's folder, the runs' TMPDIR): no run removes them."""


def _prepared(sandbox: Sandbox, folder: str) -> bool:
    try:
        return folder in _PREPARED.get(sandbox, ())
    except TypeError:  # a sandbox that takes no weak reference is given them every run
        return False


def _remember(sandbox: Sandbox, folder: str) -> None:
    with contextlib.suppress(TypeError):
        _PREPARED.setdefault(sandbox, set()).add(folder)


def outcomes(run: TestRun) -> dict[str, str]:
    """test id -> outcome of one run."""
    return {r.test_id: r.outcome for r in run.results}


def source_files(sandbox: Sandbox, project: str = ".", *, tests: bool = False) -> list[str]:
    """Repository-relative paths of the non-test source files in a supported language (with `tests`: the
    test files instead), in the project's folder only (a monorepo's other projects are not what its suite
    tests)."""
    listed = sandbox.exec("git ls-files 2>/dev/null || find . -type f -not -path './.git/*' | sed 's|^./||'",
                          timeout=120)
    inside = folder_prefix(project)

    def wanted(path: str) -> bool:
        return grammar_for(path) is not None and is_test_path(path) if tests else is_source_path(path)

    return sorted(p for p in listed.stdout.splitlines()
                  if p.startswith(inside) and wanted(p.removeprefix(inside)))[:MAX_SOURCE_FILES]


def read_sources(sandbox: Sandbox, paths: list[str],
                 log: Callable[[str], None] | None = None) -> dict[str, str]:
    """path -> text of each readable UTF-8 file of at most SOURCE_CAP_BYTES (a larger one is left out, said
    in `log`)."""
    texts = {}
    for path in paths:
        try:
            data, note = read_capped(sandbox, path, SOURCE_CAP_BYTES)
            if note:
                if log:
                    log(f"{note}: not mutated")
                continue
            texts[path] = data.decode("utf-8")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            continue
    return texts


INLINE_PATCH_BYTES = 64 * 1024
"""A patch up to this size travels inside the command that applies it (one call to the sandbox, not two)."""


def apply_patch(sandbox: Sandbox, patch: str, *, reverse: bool = False, check_only: bool = False) -> bool:
    """Apply a -p1 unified diff in the workdir (git apply, else patch); False when it does not apply."""
    path = f"{PATCH_DIR}/autoinstall-{uuid.uuid4().hex[:8]}.diff"
    quoted = shlex.quote(path)
    write = _inline_write(quoted, patch)
    if not write:
        sandbox.write_file(path, patch.encode())
    flag = " -R" if reverse else ""
    git = f"git apply --check{flag} {quoted}" + ("" if check_only else f" && git apply{flag} {quoted}")
    dry = "--dry-run" if check_only else ""
    fallback = f"patch -p1 -s -f{flag} {dry} < {quoted}"
    result = sandbox.exec(f"{write}if command -v git >/dev/null; then {git}; else {fallback}; fi; rc=$?; "
                          f"rm -f {quoted}; exit $rc", timeout=60)
    return result.ok


def _inline_write(quoted_path: str, text: str) -> str:
    """A here-document writing `text` byte for byte to the path, or "" when it cannot carry it (too large, no
    final newline, a NUL, the delimiter inside)."""
    delimiter = f"AUTOINSTALL_PATCH_{uuid.uuid4().hex}"
    if len(text.encode()) > INLINE_PATCH_BYTES or not text.endswith("\n") or "\0" in text or delimiter in text:
        return ""
    return f"cat > {quoted_path} <<'{delimiter}'\n{text}{delimiter}\n"


def git_diffs(sandbox: Sandbox, files: list[str]) -> tuple[str, str]:
    """(`git diff`, `git diff -R`) of `files` against HEAD, in one call: once a bug is applied, its exact bug and
    gold patches; ("", "") without git."""
    paths = " ".join(shlex.quote(f) for f in files)
    marker = f"autoinstall-diff-{uuid.uuid4().hex}"
    diff = "git diff --no-color --no-ext-diff"
    result = sandbox.exec(f"{diff} HEAD -- {paths} && echo {marker} && {diff} -R HEAD -- {paths}", timeout=60)
    bug, found, gold = result.stdout.partition(f"{marker}\n")
    return (bug, gold) if result.ok and found else ("", "")
