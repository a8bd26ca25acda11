"""Python suites that drive a browser (pytest-playwright, playwright, selenium): Debian's chromium, planned from
the evidence or repaired from the failure, with the links and flags each launcher needs (no Docker). The real
build is the fixture tests/fixtures/repos/python_browser (tests/autoinstall/test_e2e_fixtures.py)."""
from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.browsers import CHROMIUM, ENV, FLAGS_FILE, SELENIUM_CONFIG, link_command
from autoinstall.ecosystems.python.diagnosis import diagnose
from autoinstall.ecosystems.python.proposal.browsers import PLAYWRIGHT_LINKS
from autoinstall.ecosystems.python.repairs import repair
from autoinstall.plan.models import get_model
from autoinstall.survey import survey
from envs.spec import Plan, Repair, Step

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
PROJECT = {"pyproject.toml": '[project]\nname = "m"\nversion = "0"\n', "m.py": ""}
WANTED = "/root/.cache/ms-playwright/chromium_headless_shell-1255/chrome-headless-shell-linux64/chrome-headless-shell"
PLAYWRIGHT = (
    'awaitable = <Future finished exception=Error("Executable doesn\'t exist at '
    '/root/.cache/ms-playwright/chromium_headless_shell-1255/...right Team ║\\n╚═══╝")>\n'
    f"E       playwright._impl._errors.Error: BrowserType.launch: Executable doesn't exist at {WANTED}\n"
    "E       ║ Looks like Playwright was just installed or updated.       ║\n"
    "E       ║     playwright install                                     ║\n")
"""Captured: pytest-playwright 0.10 / playwright 1.65 in a base image without a browser (the first line is
pytest's repr of the same error, its path cut short)."""
SELENIUM = (
    "E           selenium.common.exceptions.WebDriverException: Message: Unsuccessful command executed: "
    "/opt/venv/lib/python3.11/site-packages/selenium/webdriver/common/linux-x86_64/selenium-manager --browser "
    "chrome --language-binding python --output json; code: 65\n"
    "E           {'code': 65, 'message': 'error sending request for url (https://googlechromelabs.github.io/"
    "chrome-for-testing/last-known-good-versions-with-downloads.json)', 'driver_path': '', 'browser_path': ''}\n"
    "E           selenium.common.exceptions.NoSuchDriverException: Message: Unable to obtain driver for chrome; "
    "For documentation on this error, please visit: https://www.selenium.dev/documentation/webdriver/"
    "troubleshooting/errors/driver_location\n")
"""Captured: selenium 4.51 with no chromedriver on PATH (Selenium Manager cannot download one here)."""
TESTS = Step(command="<tests>", why="run the test suite")


def _plan(root: Path, files: dict[str, str]) -> Plan:
    for name, text in {**PROJECT, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return get_model("embedded").propose(survey(root), root)


def _ctx(output: str, steps: list[Step] | None = None, env: dict[str, str] | None = None,
         tried: list[Repair] | None = None) -> RepairContext:
    plan = Plan(steps=steps or [Step(command="uv pip install -e '.[test]'", why="install", kind="project")],
                test_command="python -m pytest")
    return RepairContext(plan=plan, failing=TESTS, phase="tests", output=output, diagnosis=diagnose(output),
                         python="3.11", available_pythons=["3.11"], env=env or {}, tried=tried or [],
                         failed_tests=[FailedTest(test_id="tests/test_page.py::test_page", message=output)])


def test_the_fixture_plans_chromium_and_its_driver_first_and_playwrights_links_after_its_install() -> None:
    plan = get_model("embedded").propose(survey(REPOS / "python_browser"), REPOS / "python_browser")
    first, last = plan.steps[0], plan.steps[-1]
    assert first.kind == "system" and " chromium chromium-driver && " in first.command
    assert f"> {FLAGS_FILE}" in first.command and "--no-sandbox --disable-dev-shm-usage" in first.command
    assert f'> "{SELENIUM_CONFIG}"' in first.command and "offline = true" in first.command
    assert {(e.file, e.line) for e in first.evidence} == {("pyproject.toml", 12), ("tests/test_selenium.py", 1)}
    assert plan.steps[1].kind == "project" and "sync_playwright" in last.command and last.kind == "test-deps"
    assert any("drive a browser through playwright and selenium (pyproject.toml:12" in n for n in plan.notes)


def test_playwright_alone_gets_no_driver_and_selenium_alone_no_links(tmp_path: Path) -> None:
    plan = _plan(tmp_path / "pw", {"requirements-test.txt": "pytest\npytest-playwright>=0.4\n",
                                   "tests/test_m.py": "def test_m(page):\n    pass\n"})
    chromium = next(s for s in plan.steps if FLAGS_FILE in s.command)
    assert "chromium-driver" not in chromium.command and "selenium" not in chromium.command
    assert chromium.evidence[0].file == "requirements-test.txt" and chromium.evidence[0].line == 2
    assert "sync_playwright" in plan.steps[-1].command
    plan = _plan(tmp_path / "se", {"tests/test_m.py": "import os\nfrom selenium import webdriver\n"})
    assert any("chromium chromium-driver" in s.command for s in plan.steps)
    assert not any("sync_playwright" in s.command for s in plan.steps)


def test_a_runtime_dependency_alone_is_no_evidence_but_ci_running_playwright_install_is(tmp_path: Path) -> None:
    scraper = {"pyproject.toml": '[project]\nname = "m"\nversion = "0"\ndependencies = ["playwright"]\n',
               "tests/test_m.py": "import m\n\ndef test_m():\n    pass\n"}
    assert not any(FLAGS_FILE in s.command for s in _plan(tmp_path / "scraper", scraper).steps)
    ci = {".github/workflows/test.yml": "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
                                        "      - run: pip install -e . pytest\n"
                                        "      - run: playwright install --with-deps chromium\n"
                                        "      - run: pytest\n"}
    plan = _plan(tmp_path / "ci", {**scraper, **ci})
    chromium = next(s for s in plan.steps if FLAGS_FILE in s.command)
    assert chromium.evidence[0].file == ".github/workflows/test.yml"


def test_the_link_finder_is_python_that_compiles() -> None:
    compile(PLAYWRIGHT_LINKS, "<links>", "exec")
    assert f'os.symlink("{CHROMIUM}", m[1])' in PLAYWRIGHT_LINKS


def test_both_failures_are_a_missing_browser() -> None:
    for output in (PLAYWRIGHT, SELENIUM, "selenium.common.exceptions.SessionNotCreatedException: Message: "
                   "session not created: DevToolsActivePort file doesn't exist"):
        d = diagnose(output)
        assert (d.kind, d.subject) == ("missing_tool", "browser"), output
    assert "Unable to obtain driver for chrome" in diagnose(SELENIUM).evidence


def test_from_the_failure_chromium_with_a_link_at_the_full_path_never_the_cut_one() -> None:
    fix = repair(_ctx(PLAYWRIGHT))
    assert fix is not None and fix.kind == "insert_before" and fix.step is not None
    assert " chromium && " in fix.step.command and link_command(WANTED) in fix.step.command
    assert fix.step.command.count("ln -sf") == 1 and "chromium-driver" not in fix.step.command
    fix = repair(_ctx(SELENIUM))
    assert fix is not None and fix.step is not None and " chromium chromium-driver && " in fix.step.command


def test_once_chromium_is_there_the_variables_then_a_link_per_new_path_then_nothing() -> None:
    chromium = repair(_ctx(SELENIUM))
    assert chromium is not None and chromium.step is not None
    planned = [chromium.step, Step(command="uv pip install -e .", why="install", kind="project")]
    env = repair(_ctx(PLAYWRIGHT, steps=planned))
    assert env is not None and env.kind == "set_env" and env.env == ENV and env.env["SE_OFFLINE"] == "true"
    link = repair(_ctx(PLAYWRIGHT, steps=planned, env=dict(ENV)))
    assert link is not None and link.step is not None and link.step.command == link_command(WANTED)
    assert repair(_ctx(PLAYWRIGHT, steps=[*planned, link.step], env=dict(ENV), tried=[link])) is None
