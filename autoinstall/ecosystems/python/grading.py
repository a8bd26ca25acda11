"""What of a Python task belongs to the task: test modules and conftest.py wherever they are, pytest's, tox's,
nox's and coverage's configuration, the project's manifests (whose test sections decide what runs), files the
interpreter runs at start-up (`*.pth`, sitecustomize), installed metadata (entry points load pytest plug-ins),
and any new module outside the project's own packages (a top-level `pytest.py` would be imported instead)."""
from __future__ import annotations

from autoinstall.ecosystems.grading import rules
from envs.grading.policy import GradingRules, NewModuleRule

RULES = rules(GradingRules(
    code=[".py", ".pyi", ".pyx", ".pxd", ".pxi", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".f", ".f90", ".rs"],
    protected=["**/test_*.py", "**/*_test.py", "**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/tox.ini",
               "**/setup.cfg", "**/pyproject.toml", "**/setup.py", "**/noxfile.py", "**/.coveragerc",
               "**/*.pth", "**/sitecustomize.py", "**/usercustomize.py", "**/*.egg-info/**", "**/*.dist-info/**",
               "**/*.egg-link", "**/__editable__*"],
    untransferred=[".venv", "venv", ".tox", ".nox", "__pycache__", ".pytest_cache", ".mypy_cache", "node_modules"],
    new_modules=[NewModuleRule(suffixes=[".py", ".pyi", ".pyc", ".so"], anchor="__init__.py")],
    inline_tests=["doctest"],
    reach=["pytest", "pluggy", "junitxml", "unittest", "sys.settrace", "sys.setprofile", "os._exit", "atexit",
           "faulthandler", "sys.modules[", "builtins", "sys.exit", "sys.stdout.write", "sys.__stdout__",
           # code that writes code or reaches into frames and objects it was not given
           "__import__", "importlib", "exec(", "eval(", "compile(", "marshal", "ctypes", "_getframe",
           "__subclasses__", "__globals__", "__code__", "__builtins__", "globals()", "gc.get_", "inspect.",
           "codecs", "base64", "b64decode", "bytes.fromhex", "pickle"],
    code_checks=["python"],
    compiled=["__pycache__"],
))
