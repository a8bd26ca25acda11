"""The grader's sitecustomize for a graded Python run (copied beside autoinstall_guard.py into the run's folder,
which heads PYTHONPATH): every Python process of the run starts with the guard installed, whatever runs its
tests (unittest, a project's runner script, pytest before its plug-ins load); then the sitecustomize this one
shadows (the interpreter's or the environment's) runs as it would have. Stdlib only."""
import importlib.machinery
import importlib.util
import os
import sys

import autoinstall_guard  # noqa: F401 - installs the guard (its module name is the plug-in's)


def _shadowed():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_shadowed()
