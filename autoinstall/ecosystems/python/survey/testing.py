"""The pytest configuration (and the plugins it implies) and the layout and style of the tests."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from autoinstall.ecosystems.python.pypi_names import distribution_for
from autoinstall.ecosystems.python.pytest_plugins import plugin_for_ini, plugin_for_option
from autoinstall.ecosystems.python.survey.facts import Named, PytestConfig, RepoFacts, TestLayout
from autoinstall.ecosystems.repofiles import RepoFiles

BUILTIN_PLUGINS = {
    "pytester",
    "doctest",
    "cacheprovider",
    "faulthandler",
    "junitxml",
    "logging",
    "warnings",
    "unittest",
    "terminal",
    "debugging",
    "monkeypatch",
    "capture",
    "skipping",
    "tmpdir",
    "python",
    "nose",
    "recwarn",
    "stepwise",
    "setuponly",
    "setupplan",
    "legacypath",
    "pastebin",
    "helpconfig",
    "main",
    "mark",
    "unraisableexception",
    "threadexception",
    "fixtures",
    "assertion",
    "reports",
    "runner",
    "python_path",
    "tracemalloc",
    "lsof",
}
TEST_DIR_NAMES = {"test", "tests", "testing", "unittests", "unit_tests"}
_TEST_DEF = r"^\s*(?:async\s+)?def test\w*\([^)]*\b"
FIXTURE_PLUGINS = [
    (re.compile(_TEST_DEF + r"mocker\b", re.MULTILINE), "pytest-mock"),
    (re.compile(r"^\s*@pytest\.mark\.asyncio\b", re.MULTILINE), "pytest-asyncio"),
    (re.compile(_TEST_DEF + r"benchmark\b", re.MULTILINE), "pytest-benchmark"),
    (re.compile(_TEST_DEF + r"httpserver\b", re.MULTILINE), "pytest-httpserver"),
    (re.compile(_TEST_DEF + r"requests_mock\b", re.MULTILINE), "requests-mock"),
    (re.compile(r"^\s*@pytest\.mark\.timeout\b", re.MULTILINE), "pytest-timeout"),
    (re.compile(r"^\s*@pytest\.mark\.django_db\b", re.MULTILINE), "pytest-django"),
    (re.compile(r"^\s*@pytest\.mark\.trio\b", re.MULTILINE), "pytest-trio"),
    (re.compile(r"^\s*@pytest\.mark\.vcr\b", re.MULTILINE), "pytest-recording"),
]


def _config_source(files: RepoFiles) -> tuple[str, dict[str, Any]] | None:
    """The file pytest reads its configuration from, in pytest's order, and its options."""
    for rel in ("pytest.ini", ".pytest.ini"):
        cfg = files.ini(rel) if files.is_file(rel) else None
        if cfg is not None:
            return rel, dict(cfg.items("pytest")) if cfg.has_section("pytest") else {}
    tool = ((files.toml("pyproject.toml") or {}).get("tool") or {}).get("pytest")
    if isinstance(tool, dict):
        options = tool.get("ini_options") if isinstance(tool.get("ini_options"), dict) else tool
        return "pyproject.toml", options
    for rel, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        cfg = files.ini(rel)
        if cfg is not None and cfg.has_section(section):
            return rel, dict(cfg.items(section))
    return None


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value or ""))
    except ValueError:
        return str(value or "").split()


PLUGIN_MODULES = {"xdist": "pytest-xdist", "instafail": "pytest-instafail", "cov": "pytest-cov",
                  "timeout": "pytest-timeout", "randomly": "pytest-randomly", "asyncio": "pytest-asyncio",
                  "mock": "pytest-mock", "rerunfailures": "pytest-rerunfailures", "benchmark": "pytest-benchmark",
                  "subtests": "pytest-subtests", "anyio": "anyio", "trio": "pytest-trio", "hypothesis": "hypothesis",
                  "forked": "pytest-forked", "django": "pytest-django", "env": "pytest-env", "sugar": "pytest-sugar"}


def _plugin_module_dist(module: str) -> str | None:
    """The distribution behind a `-p NAME` plugin module (`-p xdist` -> pytest-xdist)."""
    if module.startswith(("no:", "_pytest")) or module in BUILTIN_PLUGINS:
        return None
    if module in PLUGIN_MODULES:
        return PLUGIN_MODULES[module]
    dist = distribution_for(module)
    if dist.startswith("pytest_") or dist.startswith("pytest-"):
        return dist.replace("_", "-")
    return f"pytest-{module}" if dist == module and "." not in module else dist


def _addopts_plugins(words: list[str], local: set[str]) -> list[str]:
    found = []
    for i, word in enumerate(words):
        if word == "-p" and i + 1 < len(words):
            module = words[i + 1]
            dist = None if module.split(".")[0] in local else _plugin_module_dist(module)
        elif word.startswith("-p") and len(word) > 2:
            dist = _plugin_module_dist(word[2:])
        elif re.fullmatch(r"-n\S+", word):
            dist = plugin_for_option("-n")
        elif word.startswith("--benchmark"):
            dist = "pytest-benchmark"
        else:
            dist = plugin_for_option(word) if word.startswith("-") else None
        if dist:
            found.append(dist)
    return found


def read_pytest_config(files: RepoFiles, facts: RepoFacts, local: set[str]) -> None:
    """Testpaths, addopts and the plugins they and other ini keys imply."""
    source = _config_source(files)
    if source is None:
        return
    rel, options = source
    header = {"pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest]"}.get(rel, "[pytest]")
    after = files.line_of(rel, header)
    config = PytestConfig(
        file=rel, testpaths=_words(options.get("testpaths")), evidence=files.evidence(rel, header)
    )
    words = _words(options.get("addopts"))
    config.addopts = shlex.join(words)
    plugins = [(d, "addopts") for d in _addopts_plugins(words, local)]
    plugins += [(d, key) for key in options if (d := plugin_for_ini(key))]
    plugins += [
        (re.split(r"[<>=!~ ;\[]", spec, maxsplit=1)[0], spec)
        for spec in _words(options.get("required_plugins"))
    ]
    seen = set()
    for dist, needle in plugins:
        if dist.lower() not in seen:
            seen.add(dist.lower())
            config.plugins.append(Named(name=dist, evidence=files.evidence(rel, needle, after)))
    facts.pytest = config


def _is_test_file(path: Path, rel: str) -> bool:
    name = path.name
    if name.startswith("test_") or name.endswith("_test.py"):
        return True
    return name.startswith("test") and any(p in TEST_DIR_NAMES for p in rel.split("/")[:-1])


def _test_dir(rel: str) -> str:
    parts = rel.split("/")[:-1]
    for i, part in enumerate(parts):
        if part in TEST_DIR_NAMES:
            return "/".join(parts[: i + 1])
    return "/".join(parts) or "."


def read_test_layout(files: RepoFiles, facts: RepoFacts) -> None:
    """Test modules, their folders and style, conftest files, and plugins the tests use directly."""
    layout = TestLayout()
    pytest_style = unittest_style = 0
    plugins: dict[str, Named] = {}
    for path in files.walk((".py",)):
        rel = files.rel(path)
        if path.name == "conftest.py":
            layout.conftest.append(rel)
            continue
        if not _is_test_file(path, rel):
            continue
        layout.files += 1
        if not (path.name.startswith("test_") or path.name.endswith("_test.py")):
            layout.file_pattern = "test*.py"
        directory = _test_dir(rel)
        if directory not in layout.dirs:
            layout.dirs.append(directory)
        text = files.text(rel) or ""
        if re.search(r"^\s*def load_tests\(", text, re.MULTILINE):
            layout.load_tests = True
        if re.search(r"^import pytest|^from pytest|@pytest\.|^def test", text, re.MULTILINE):
            pytest_style += 1
        elif re.search(r"TestCase\b|import unittest|testtools", text):
            unittest_style += 1
        for pattern, dist in FIXTURE_PLUGINS:
            match = pattern.search(text)
            if match and dist not in plugins:
                line = text.count("\n", 0, match.start()) + 1
                plugins[dist] = Named(
                    name=dist, evidence=files.evidence(rel, text.splitlines()[line - 1].strip(), line)
                )
    if layout.files:
        layout.style = (
            "pytest" if pytest_style or layout.conftest else "unittest" if unittest_style else "pytest"
        )
    layout.dirs.sort()
    layout.fixtures = list(plugins.values())
    facts.tests = layout
