"""Suites that drive a browser (puppeteer, playwright, karma): the download their installers cannot make here is
skipped, Debian's chromium stands in, with the flags a container needs. The real build is the fixture
tests/fixtures/repos/node_browser (tests/autoinstall/test_e2e_fixtures.py: puppeteer renders a page)."""
from __future__ import annotations

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.browsers import CHROMIUM, ENV, FLAGS_FILE
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.ecosystems.node.diagnosis import diagnose
from autoinstall.ecosystems.node.repairs import repair
from envs.testrun.node_output import parse_node_output
from envs.spec import Plan, Repair, Step

INSTALL = Step(command="npm install --package-lock --no-audit --no-fund", why="install", kind="project")
TESTS = Step(command="npm test --ignore-scripts", why="run the test suite")
DOWNLOAD = ('npm ERR! Error: ERROR: Failed to set up chrome v148.0.7778.97! Set "PUPPETEER_SKIP_DOWNLOAD" env '
            "variable to skip download.\nnpm ERR!   [cause]: Error: All providers failed for chrome 148.0.7778.97:\n"
            "npm ERR!     - DefaultProvider: getaddrinfo ENOTFOUND storage.googleapis.com\n")
"""Captured: puppeteer 24's install script on this machine (no route to the browser vendor's servers)."""
CONFIGURED = ("not ok 2 - a browser renders the heading and the list\n  error: 'Tried to find the browser at the "
              "configured path (/usr/bin/chromium), but no executable was found.'\n")
"""Captured: the same suite's test run once the download is skipped, before chromium is installed."""
PLAYWRIGHT = ("browserType.launch: Executable doesn't exist at "
              "/root/.cache/ms-playwright/chromium_headless_shell-1169/chrome-linux/headless_shell\n"
              "Looks like Playwright Test or Playwright was just installed or updated.\n")


def _ctx(output: str, *, phase: str = "install", failing: Step = INSTALL, env: dict[str, str] | None = None,
         tried: list[Repair] | None = None) -> RepairContext:
    return RepairContext(plan=Plan(ecosystem="node", python="3.13", steps=[INSTALL], test_command=TESTS.command),
                         failing=failing, phase=phase, output=output, diagnosis=diagnose(output),  # type: ignore[arg-type]
                         python="3.13", available_pythons=["3.13"], env=env or {}, tried=tried or [])


def test_a_failed_browser_download_is_a_browser_not_the_internet() -> None:
    d = diagnose(DOWNLOAD)
    assert (d.kind, d.subject) == ("missing_tool", "browser (download)")
    assert "Failed to set up chrome" in d.evidence  # not the name lookup failure printed below it
    for output in (CONFIGURED, PLAYWRIGHT, ("ERROR [launcher]: No binary for ChromeHeadless browser on your "
                                            "platform.\n  Please, set \"CHROME_BIN\" env variable."),
                   "[FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! If you are running on Ubuntu"):
        assert (diagnose(output).kind, diagnose(output).subject) == ("missing_tool", "browser"), output


def test_first_the_download_is_skipped_and_every_launcher_pointed_at_debians_chromium() -> None:
    fix = repair(_ctx(DOWNLOAD))
    assert fix is not None and fix.kind == "set_env"
    assert fix.env == ENV and fix.env["PUPPETEER_SKIP_DOWNLOAD"] == "1"
    assert {fix.env[k] for k in ("PUPPETEER_EXECUTABLE_PATH", "CHROME_BIN")} == {CHROMIUM}
    # the variables set, a download that still fails has no second repair of its own (the install is the build)
    assert repair(_ctx(DOWNLOAD, env=dict(ENV), tried=[fix])) is None


def test_then_chromium_is_installed_with_the_flags_a_container_needs() -> None:
    fix = repair(_ctx(CONFIGURED, phase="tests", failing=TESTS, env=dict(ENV)))
    assert fix is not None and fix.kind == "insert_before" and fix.step is not None
    assert fix.step.kind == "system" and " chromium && " in fix.step.command
    assert f"> {FLAGS_FILE}" in fix.step.command and "--no-sandbox" in fix.step.command
    assert "ln -sf" not in fix.step.command  # puppeteer was told where the browser is: no link needed
    assert fix.step.evidence[0].text.startswith("error: 'Tried to find the browser")


def test_playwright_gets_a_link_where_it_looks_for_its_own_build() -> None:
    fix = repair(_ctx(PLAYWRIGHT, phase="tests", failing=TESTS, env=dict(ENV)))
    assert fix is not None and fix.step is not None
    wanted = "/root/.cache/ms-playwright/chromium_headless_shell-1169/chrome-linux/headless_shell"
    assert f"mkdir -p {wanted.rsplit('/', 1)[0]} && ln -sf {CHROMIUM} {wanted}" in fix.step.command
    tricked = PLAYWRIGHT.replace("/root/.cache", "/root/../etc")  # never a link outside where it said
    again = repair(_ctx(tricked, phase="tests", failing=TESTS, env=dict(ENV)))
    assert again is not None and again.step is not None and "ln -sf" not in again.step.command


def test_a_second_browser_failure_after_both_repairs_gives_up() -> None:
    first = repair(_ctx(CONFIGURED, phase="tests", failing=TESTS, env=dict(ENV)))
    assert first is not None
    assert repair(_ctx(CONFIGURED, phase="tests", failing=TESTS, env=dict(ENV), tried=[first])) is None


FIREFOX = "/root/.cache/ms-playwright/firefox-1497/firefox/firefox"
WEBKIT = "/root/.cache/ms-playwright/webkit-2215/pw_run.sh"
CHROMIUM_BUILD = "/root/.cache/ms-playwright/chromium-1200/chrome-linux/chrome"


def _missing(path: str) -> str:
    return (f"browserType.launch: Executable doesn't exist at {path}\n"
            "Looks like Playwright was just installed or updated.\n")


def test_only_a_chromium_build_path_gets_a_link_never_firefox_or_webkit() -> None:
    # a link from playwright's Firefox or WebKit build to chromium made every such launch wait out the suite's
    # launch timeout (chromium does not speak those builds' protocol): 45 serial tests ran a suite past 15 minutes
    output = "".join(_missing(p) for p in (CHROMIUM_BUILD, FIREFOX, WEBKIT))
    output += f"    message: `browserType.launch: Executable doesn't exist at {CHROMIUM_BUILD}␊\n"  # ava's quoting
    fix = repair(_ctx(output, phase="tests", failing=TESTS, env=dict(ENV)))
    assert fix is not None and fix.step is not None
    assert f"ln -sf {CHROMIUM} {CHROMIUM_BUILD}" in fix.step.command and "␊" not in fix.step.command
    assert fix.step.command.count("ln -sf") == 1
    assert "firefox" not in fix.step.command and "webkit" not in fix.step.command
    # a home whose own name holds "chrom" is not a Chromium build
    odd = _missing("/home/chromebook/.cache/ms-playwright/firefox-1497/firefox/firefox")
    again = repair(_ctx(odd, phase="tests", failing=TESTS, env=dict(ENV)))
    assert again is not None and again.step is not None and "ln -sf" not in again.step.command


def test_tests_that_need_playwrights_firefox_or_webkit_are_left_out_with_the_launchers_message() -> None:
    output = _missing(FIREFOX) + _missing(WEBKIT)
    chromium = repair(_ctx(output, phase="tests", failing=TESTS, env=dict(ENV)))
    assert chromium is not None and chromium.kind == "insert_before"  # first Debian's chromium, as for any browser
    failed = [FailedTest(test_id="test/browser.ts > firefox - baseUrl option", message=_missing(FIREFOX)),
              FailedTest(test_id="test/browser.ts > webkit - retry with body", message=_missing(WEBKIT)),
              FailedTest(test_id="test/main.ts > a plain failure", message="AssertionError: 1 !== 2")]
    ctx = _ctx(output, phase="tests", failing=TESTS, env=dict(ENV), tried=[chromium]).model_copy(
        update={"failed_tests": failed})
    fix = repair(ctx)
    assert fix is not None and fix.kind == "deselect", fix
    assert fix.tests == [failed[0].test_id, failed[1].test_id]  # never the test that failed for another reason
    assert "firefox, webkit" in fix.reason and "CDN" in fix.reason
    # the evidence the install loop asks of every deselection, whoever proposes it
    for ecosystem in ("node", "python", "go"):
        eco = get_ecosystem(ecosystem)
        assert eco.justifies_deselection(_missing(FIREFOX)) and eco.justifies_deselection(_missing(WEBKIT))
        assert not eco.justifies_deselection(_missing(CHROMIUM_BUILD))  # that one Debian's chromium serves
        assert not eco.justifies_deselection("AssertionError: 1 !== 2")
    # in the install phase nothing is deselected
    assert repair(ctx.model_copy(update={"phase": "install", "failing": INSTALL})) is None


AVA_BROWSERS = f"""
  ✔ main › a plain request
  ✔ browser › chromium - baseUrl option
  ✘ [fail]: browser › firefox - baseUrl option Rejected promise returned by test
  ✘ [fail]: browser › webkit - baseUrl option Rejected promise returned by test
  ─

  browser › firefox - baseUrl option

  Rejected promise returned by test. Reason:

  browserType.launch: Executable doesn\\'t exist at {FIREFOX}

  browser › webkit - baseUrl option

  Rejected promise returned by test. Reason:

  Error {{
    message: `browserType.launch: Executable doesn't exist at {WEBKIT}␊
    ╔════════════════════════════════════════════════╗␊`,
  }}

  ─

  2 tests failed
"""
"""ava's default reporter (its layout captured from ava 6; the launcher's message as playwright words it)."""


def test_avas_browser_tests_without_a_build_are_left_out_by_their_own_ids() -> None:
    results = parse_node_output(AVA_BROWSERS)
    failed = [FailedTest(test_id=r.test_id, message=r.message) for r in results if r.outcome == "failed"]
    assert [f.test_id for f in failed] == ["browser > firefox - baseUrl option", "browser > webkit - baseUrl option"]
    chromium = repair(_ctx(AVA_BROWSERS, phase="tests", failing=TESTS, env=dict(ENV)))
    assert chromium is not None and chromium.kind == "insert_before"
    ctx = _ctx(AVA_BROWSERS, phase="tests", failing=TESTS, env=dict(ENV), tried=[chromium]).model_copy(
        update={"failed_tests": failed})
    fix = repair(ctx)
    assert fix is not None and fix.kind == "deselect" and fix.tests == [f.test_id for f in failed], fix
