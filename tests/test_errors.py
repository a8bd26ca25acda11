"""One exception root for what the user sees: every exception class under autoinstall/, envs/ and tools/
derives from `UserFacingError` (envs/errors.py), which cli.main() reports as one line, unless it is listed in
INTERNAL with the reason it never reaches the user.

The classes are found by reading the source (ast), so a new module is checked without being named here; each
one found is then imported and checked with issubclass, so the real method resolution order decides.
"""
from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

from envs.errors import UserFacingError

ROOT = Path(__file__).parents[1]
PACKAGES = ("autoinstall", "envs", "tools")
INTERNAL = {
    "autoinstall.install.loop._Restart": "control flow: the install loop catches it and starts over",
    "autoinstall.install.loop._ModelFailed": "control flow: the install loop catches it and stops the build "
                                             "with what it has recorded",
    "autoinstall.source.gitdata.GitDataError": "checkout.py wraps every one in a SourceError that says what "
                                               "to do next",
    "autoinstall.source.tree.CopyTooLarge": "checkout.py and gitdata.py wrap every one in a SourceError (or a "
                                            "GitDataError, itself wrapped) that says what to do next",
    "envs.testrun.grading.NotGradable": "autoinstall/tasks/make.py catches it and drops the task (counted)",
    "envs.grading.kit.trees.TreeTooLarge": "raised inside task images by the stdlib-only grader kit, which "
                                           "cannot import envs.errors",
    "tools.base.ToolError": "for the model: returned to it as a tool result, never raised to the user",
    "tools.server.paths.OpError": "for the model: the stdlib tool server inside the sandbox sends it back as "
                                  "{ok: false, error}",
}
"""Exceptions that never reach the user, each with the reason; BaseExceptions such as BuildInterrupted
(which must pass `except Exception`) are not Exceptions and are not checked."""
EXCEPTIONS = {name for name in dir(builtins)
              if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Exception)}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exception_classes() -> list[str]:
    """Dotted names of the classes defined under PACKAGES that derive, by name, from a builtin Exception."""
    bases: dict[str, tuple[str, list[str]]] = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    names = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                    bases[f"{_module(path)}.{node.name}"] = (node.name, names)
    derived = set(EXCEPTIONS)
    grew = True
    while grew:
        found = {name for name, b in bases.values() if name not in derived and derived.intersection(b)}
        derived |= found
        grew = bool(found)
    return sorted(dotted for dotted, (name, _) in bases.items() if name in derived)


def _load(dotted: str) -> type:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_exception_the_cli_may_show_derives_from_the_one_root() -> None:
    classes = _exception_classes()
    outside = [c for c in classes if c not in INTERNAL and not issubclass(_load(c), UserFacingError)]
    assert not outside, ("these exceptions may reach the CLI as a traceback; derive them from the package's "
                         "root (AutoinstallError, EnvError, ToolServerError), or list them in INTERNAL with "
                         "the reason they never reach the user:\n" + "\n".join(outside))
    stale = sorted(set(INTERNAL) - set(classes))
    assert not stale, f"INTERNAL names exceptions that no longer exist: {stale}"


def test_internal_exceptions_stay_outside_the_root() -> None:
    inside = [c for c in INTERNAL if issubclass(_load(c), UserFacingError)]
    assert not inside, f"these derive from UserFacingError; drop them from INTERNAL: {inside}"


def test_the_walk_finds_the_roots_and_their_builtin_mix_ins() -> None:
    from autoinstall.errors import AutoinstallError
    from autoinstall.source import SourceError
    from envs.errors import EnvError, ImageNotFoundError
    from tools.session import ToolServerError, ToolServerTimeout

    classes = _exception_classes()
    assert {"autoinstall.errors.AutoinstallError", "envs.errors.EnvError", "tools.session.ToolServerError",
            "autoinstall.source.checkout.EmptyRepositoryError"} <= set(classes)
    assert "autoinstall.batch.runner.BuildInterrupted" not in classes  # a BaseException, not an Exception
    assert all(issubclass(root, UserFacingError) for root in (AutoinstallError, EnvError, ToolServerError))
    assert issubclass(SourceError, ValueError) and issubclass(ToolServerTimeout, TimeoutError)
    assert issubclass(EnvError, RuntimeError) and issubclass(ImageNotFoundError, LookupError)
