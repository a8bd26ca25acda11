"""Which PyPI plugin provides a pytest command-line option or ini setting."""
from __future__ import annotations

OPTION_PLUGINS = {
    "--cov": "pytest-cov", "--cov-report": "pytest-cov", "--cov-config": "pytest-cov", "--no-cov": "pytest-cov",
    "--cov-fail-under": "pytest-cov", "--timeout": "pytest-timeout", "--timeout-method": "pytest-timeout",
    "-n": "pytest-xdist", "--numprocesses": "pytest-xdist", "--dist": "pytest-xdist", "--forked": "pytest-forked",
    "--benchmark-skip": "pytest-benchmark", "--benchmark-disable": "pytest-benchmark",
    "--benchmark-only": "pytest-benchmark", "--asyncio-mode": "pytest-asyncio", "--reruns": "pytest-rerunfailures",
    "--reruns-delay": "pytest-rerunfailures", "--randomly-seed": "pytest-randomly", "-p randomly": "pytest-randomly",
    "--mypy": "pytest-mypy", "--flake8": "pytest-flake8", "--black": "pytest-black", "--isort": "pytest-isort",
    "--hypothesis-profile": "hypothesis", "--hypothesis-show-statistics": "hypothesis", "--mpl": "pytest-mpl",
    "--doctest-plus": "pytest-doctestplus", "--remote-data": "pytest-remotedata", "--html": "pytest-html",
    "--json-report": "pytest-json-report", "--env": "pytest-env", "--ds": "pytest-django",
    "--reuse-db": "pytest-django", "--nomigrations": "pytest-django", "--run-slow": "", "--snapshot-update": "syrupy",
    "--force-sugar": "pytest-sugar", "--instafail": "pytest-instafail", "--memray": "pytest-memray",
    "--codspeed": "pytest-codspeed", "--import-check": "", "--lf": "", "--sw": "",
}

INI_PLUGINS = {
    "asyncio_mode": "pytest-asyncio", "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout", "timeout_method": "pytest-timeout", "env": "pytest-env",
    "DJANGO_SETTINGS_MODULE": "pytest-django", "mock_use_standalone_module": "pytest-mock",
    "flake8-max-line-length": "pytest-flake8", "mypy_ini_file": "pytest-mypy", "doctest_plus": "pytest-doctestplus",
    "mpl-baseline-path": "pytest-mpl", "rerun_except": "pytest-rerunfailures", "django_find_project": "pytest-django",
    "qt_api": "pytest-qt", "httpx_assert_all_responses_were_requested": "pytest-httpx", "trio_mode": "pytest-trio",
    "anyio_backend": "anyio", "console_output_style": "", "required_plugins": "",
}


def plugin_for_option(option: str) -> str | None:
    """The plugin for an unrecognized option such as `--timeout=30` or `--cov`; None if unknown or builtin."""
    name = option.split("=", 1)[0].strip()
    return OPTION_PLUGINS.get(name) or None


def plugin_for_ini(key: str) -> str | None:
    """The plugin for an unknown pytest ini key such as `asyncio_mode`; None if unknown."""
    return INI_PLUGINS.get(key) or None


MARKER_PLUGINS = {
    "flaky": "pytest-rerunfailures", "timeout": "pytest-timeout", "asyncio": "pytest-asyncio",
    "django_db": "pytest-django", "benchmark": "pytest-benchmark", "forked": "pytest-forked",
    "xdist_group": "pytest-xdist", "anyio": "anyio", "trio": "pytest-trio", "vcr": "pytest-recording",
    "order": "pytest-order", "dependency": "pytest-dependency", "httpx_mock": "pytest-httpx",
    "freeze_time": "pytest-freezer", "mpl_image_compare": "pytest-mpl", "randomly_seed": "pytest-randomly",
    "repeat": "pytest-repeat", "subtests": "pytest-subtests", "qt_no_exception_capture": "pytest-qt",
    "remote_data": "pytest-remotedata", "doctest_plus": "pytest-doctestplus", "hypothesis": "hypothesis",
}


def plugin_for_marker(marker: str) -> str | None:
    """The plugin that registers a marker such as `flaky`; None if unknown."""
    return MARKER_PLUGINS.get(marker)
