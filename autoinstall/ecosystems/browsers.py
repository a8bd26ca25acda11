"""Browsers for suites that drive one (puppeteer, playwright, karma's Chrome launchers, selenium): Debian's chromium.

Their own installers download a browser build from the browser vendor's servers, which these machines cannot
reach (`Failed to set up chrome vN! Set "PUPPETEER_SKIP_DOWNLOAD"`, playwright's "Executable doesn't exist at
~/.cache/ms-playwright/..." after an install that fetched nothing, Selenium Manager's "Unable to obtain driver
for chrome"), and their launchers then look for it in their own cache. Nothing here knows a language: an
ecosystem diagnoses with these patterns and proposes `chromium_step` when its survey sees a suite that needs a
browser (python/proposal/browsers.py). The repairs, each once:
1. a download that failed: `set_env`, the downloads skipped and every launcher pointed at /usr/bin/chromium
   (recorded in the spec, so the environment image and the replay Dockerfile carry it);
2. a browser not found: `insert_before` Debian's chromium (and chromium-driver when selenium or chromedriver
   asks), with flags a container needs for every launch (no setuid sandbox as root, /tmp instead of a small
   /dev/shm) in /etc/chromium.d, which Debian's launcher script reads, and Selenium Manager told to stay
   offline; where playwright names the path it looks for, that path becomes a link to the launcher;
3. still not found: the variables of 1, then a link at each path a launcher names that has none yet, where it
   expects a Chromium build;
4. playwright's own Firefox or WebKit build not found (no source here has one): the tests that failed for it
   are deselected, the launcher's message their evidence.
A suite that still cannot start the browser then fails with the launcher's own message.
"""
from __future__ import annotations

import re
import shlex

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.debian_names import APT
from envs.spec import Evidence, Repair, Step

CHROMIUM = "/usr/bin/chromium"
BROWSER_DOWNLOAD = re.compile(r'Failed to set up (?:chrome|chrome-headless-shell|chromium)\b[^\n]*!\s*Set '
                              r'"PUPPETEER_SKIP_DOWNLOAD"|Failed to install browsers\b|'
                              r"Error: Download failed: server returned code \d+\. URL: https://\S*playwright")
"""A browser build that the package's install script could not download."""
BROWSER_MISSING = re.compile(
    r"Could not find (?:Chrome|Chromium|chrome-headless-shell) \(ver\. [\w.]+\)|"
    r"Browser was not found at the configured executablePath \((?P<s1>[^)\s]+)\)|"
    r"Tried to find the browser at the configured path \((?P<s4>[^)\s]+)\), but no executable was found|"
    r"Executable doesn't exist at (?P<s2>/\S+)|No binary for \w*Chrome\w* browser on your platform|"
    r"Running as root without --no-sandbox is not supported|No usable sandbox!|"
    r"spawn (?P<s3>/\S*chrom\S*) ENOENT|"
    r"Unable to obtain driver for chrome\b|'chromedriver' executable needs to be in PATH|"
    r"cannot find Chrome binary|DevToolsActivePort file doesn't exist")
"""A launcher that finds no browser (or driver), or one that cannot start in a container."""
BROWSER_WORDS = ("Chrom", "chrom", "Executable doesn't exist", "sandbox", "executablePath", "configured path",
                 "DevToolsActivePort")
"""Words one of BROWSER_MISSING's matches contains: a substring test that skips the regex on long logs."""
DRIVER_WANTED = re.compile(r"chromedriver|selenium|Unable to obtain driver", re.I)
"""Output of a suite that drives the browser through a WebDriver (selenium): it needs chromium-driver too."""
ENV = {
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_EXECUTABLE_PATH": CHROMIUM,
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "CHROME_BIN": CHROMIUM,
    "CHROMIUM_BIN": CHROMIUM,
    "SE_OFFLINE": "true",
}
CHROMIUM_BUILD = re.compile(r"chrom|headless_shell", re.I)
"""A path a launcher expects a Chromium build at (playwright's chromium-N and chromium_headless_shell-N,
puppeteer's chrome/, Chrome's /opt/google/chrome): Debian's chromium speaks that browser's protocol there."""
UNOBTAINABLE = re.compile(r"Executable doesn\\?'t exist at (?P<path>/\S*ms-playwright/(?P<engine>firefox|webkit)"
                          r"[-\w.]*/\S*)")
"""Playwright's own Firefox or WebKit build not found: playwright drives only those patched builds, which are
downloaded from its CDN (not reachable here), and no Debian package is one (firefox-esr is not playwright's
Juggler build). A link to chromium there made each such launch wait out the suite's own launch timeout (45
serial browser tests at 20-45 s each ran a suite past its 15 minutes), so those tests are left out, with
this message as the evidence."""
"""Every launcher's own variable for "skip the download" and "this is the browser" (puppeteer, playwright,
karma-chrome-launcher; Selenium Manager's offline mode, which takes the driver on PATH)."""
FLAGS_FILE = "/etc/chromium.d/autoinstall-container"
FLAGS = 'export CHROMIUM_FLAGS="$CHROMIUM_FLAGS --no-sandbox --disable-dev-shm-usage"'
"""Read by Debian's /usr/bin/chromium at every launch: as root in a container the setuid sandbox cannot
start, and /dev/shm is small."""
SELENIUM_CONFIG = "$HOME/.cache/selenium/se-config.toml"
"""Selenium Manager's configuration file: `offline = true` there is SE_OFFLINE for every run, so it takes the
chromedriver on PATH without first trying the network."""


def _evidence(ctx: RepairContext) -> list[Evidence]:
    return [Evidence(file="<output>", text=ctx.diagnosis.evidence)]


def link_command(path: str) -> str:
    """A link to Debian's chromium at `path`, where a launcher looks for its own build."""
    return f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0] or '/')} && ln -sf {CHROMIUM} {shlex.quote(path)}"


def chromium_step(links: list[str], evidence: list[Evidence], *, driver: bool = False) -> Step:
    """Debian's chromium (with chromium-driver for a WebDriver), its container flags, and a link at each path
    a launcher looks for a browser."""
    packages = "chromium chromium-driver" if driver else "chromium"
    command = f"{APT} {packages} && mkdir -p /etc/chromium.d && echo {shlex.quote(FLAGS)} > {FLAGS_FILE}"
    if driver:
        command += f' && mkdir -p "$HOME/.cache/selenium" && echo "offline = true" > "{SELENIUM_CONFIG}"'
    for path in links:
        command += " && " + link_command(path)
    return Step(command=command, kind="system", evidence=evidence,
                why="the suite drives a browser, and its own download cannot be had here: Debian's "
                    + ("chromium and its chromedriver" if driver else "chromium"))


def _links(output: str) -> list[str]:
    """The paths a launcher said it looked for a browser at (playwright's cache), other than Debian's; never
    one cut short in a summary (`.../...`) or climbing out of where it said."""
    found = [m.group("s2").split("\u240a")[0].rstrip("'\",)`") for m in BROWSER_MISSING.finditer(output)
             if m.group("s2")]  # ava prints a message's line break as ␊ and quotes it in backticks
    return [p for p in dict.fromkeys(found)
            if p != CHROMIUM and CHROMIUM_BUILD.search(p.rsplit("/ms-playwright/", 1)[-1])
            and not any(part.startswith("..") or "\u2026" in part for part in p.split("/"))]


def unobtainable_browser(message: str) -> str | None:
    """The browser engine a failed test's message says playwright could not find its own build of, when no
    source here has one (firefox, webkit); None otherwise."""
    found = UNOBTAINABLE.search(message)
    return found.group("engine") if found else None


def _leave_out_unobtainable(ctx: RepairContext) -> Repair | None:
    """The tests that failed because playwright's Firefox or WebKit build is missing: deselected, with the
    launcher's message as evidence (the ecosystems accept it: `justifies_deselection`)."""
    if ctx.phase != "tests":
        return None
    needing = {t.test_id: engine for t in ctx.failed_tests if (engine := unobtainable_browser(t.message))}
    if not needing:
        return None
    engines = ", ".join(sorted(set(needing.values())))
    return Repair(kind="deselect", tests=list(needing),
                  reason=f"these tests drive playwright's own {engines} build, which is downloaded from its CDN "
                         "(not reachable here) and which no Debian package provides")


def browser_repair(ctx: RepairContext) -> Repair | None:
    """A failed download: the variables that skip it and name Debian's browser. A browser not found: the
    browser (once), then the variables, then links where a launcher still looks for its own build."""
    env_missing = any(ctx.env.get(k) != v for k, v in ENV.items())
    set_env = Repair(kind="set_env", env=dict(ENV),
                     reason=f"{ctx.diagnosis.describe()} -> skip the browser download, launch Debian's chromium "
                            f"({CHROMIUM})")
    if ctx.diagnosis.subject == "browser (download)":
        return set_env if env_missing else None  # set, and the download still fails: nothing else to try here
    steps = [*ctx.plan.steps, *(r.step for r in ctx.tried if r.step is not None)]
    links = [p for p in _links(ctx.output) if not any(link_command(p) in s.command for s in steps)]
    driver = bool(DRIVER_WANTED.search(ctx.output))
    if not any(FLAGS_FILE in s.command and (not driver or "chromium-driver" in s.command) for s in steps):
        return Repair(kind="insert_before", step=chromium_step(links, _evidence(ctx), driver=driver),
                      reason=f"{ctx.diagnosis.describe()} -> Debian's chromium, with the flags a container needs")
    if env_missing:
        return set_env
    if not links:
        return _leave_out_unobtainable(ctx)
    step = Step(command=" && ".join(link_command(p) for p in links), kind="system", evidence=_evidence(ctx),
                why="the launcher looks for its own browser build here: a link to Debian's chromium")
    return Repair(kind="insert_before", step=step,
                  reason=f"{ctx.diagnosis.describe()} -> link {', '.join(links)} to {CHROMIUM}")


__all__ = ["BROWSER_DOWNLOAD", "BROWSER_MISSING", "BROWSER_WORDS", "CHROMIUM", "ENV", "FLAGS_FILE",
           "SELENIUM_CONFIG", "UNOBTAINABLE", "browser_repair", "chromium_step", "link_command",
           "unobtainable_browser"]
