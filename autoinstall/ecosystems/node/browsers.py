"""Browsers for suites that drive one (puppeteer, playwright, karma's Chrome launchers): Debian's chromium.

Their own installers download a browser build from the browser vendor's servers, which these machines cannot
reach (`Failed to set up chrome vN! Set "PUPPETEER_SKIP_DOWNLOAD"`), and their launchers then look for it in
their own cache. Two repairs, in this order, each once:
1. `set_env`: the downloads skipped, and every launcher pointed at /usr/bin/chromium (recorded in the spec,
   so the environment image and the replay Dockerfile carry it).
2. `insert_before`: Debian's chromium, with flags a container needs for every launch (no setuid sandbox as
   root, /tmp instead of a small /dev/shm) in /etc/chromium.d, which Debian's launcher script reads; where
   playwright names the path it looks for, that path becomes a link to the launcher.
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
    r"spawn (?P<s3>/\S*chrom\S*) ENOENT")
"""A launcher that finds no browser, or one that cannot start in a container."""
ENV = {
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_EXECUTABLE_PATH": CHROMIUM,
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "CHROME_BIN": CHROMIUM,
    "CHROMIUM_BIN": CHROMIUM,
}
"""Every launcher's own variable for "skip the download" and "this is the browser" (puppeteer, playwright,
karma-chrome-launcher)."""
FLAGS_FILE = "/etc/chromium.d/autoinstall-container"
FLAGS = 'export CHROMIUM_FLAGS="$CHROMIUM_FLAGS --no-sandbox --disable-dev-shm-usage"'
"""Read by Debian's /usr/bin/chromium at every launch: as root in a container the setuid sandbox cannot
start, and /dev/shm is small."""


def _evidence(ctx: RepairContext) -> list[Evidence]:
    return [Evidence(file="<output>", text=ctx.diagnosis.evidence)]


def chromium_step(links: list[str], evidence: list[Evidence]) -> Step:
    """Debian's chromium, its container flags, and a link at each path a launcher looks for a browser."""
    command = f"{APT} chromium && mkdir -p /etc/chromium.d && echo {shlex.quote(FLAGS)} > {FLAGS_FILE}"
    for path in links:
        command += f" && mkdir -p {shlex.quote(path.rsplit('/', 1)[0] or '/')} && ln -sf {CHROMIUM} {shlex.quote(path)}"
    return Step(command=command, kind="system", evidence=evidence,
                why="the suite drives a browser, and its own download cannot be had here: Debian's chromium")


def _links(output: str) -> list[str]:
    """The paths a launcher said it looked for a browser at (playwright's cache), other than Debian's."""
    found = [m.group("s2") for m in BROWSER_MISSING.finditer(output) if m.group("s2")]
    return [p for p in dict.fromkeys(found) if p != CHROMIUM and ".." not in p.split("/")]


def browser_repair(ctx: RepairContext) -> Repair | None:
    """First the variables that skip the download and name Debian's browser, then the browser itself."""
    if any(ctx.env.get(k) != v for k, v in ENV.items()):
        return Repair(kind="set_env", env=dict(ENV),
                      reason=f"{ctx.diagnosis.describe()} -> skip the browser download, launch Debian's chromium "
                             f"({CHROMIUM})")
    if ctx.diagnosis.subject == "browser (download)":
        return None  # the variables are set and the download still fails: nothing else to try here
    return Repair(kind="insert_before", step=chromium_step(_links(ctx.output), _evidence(ctx)),
                  reason=f"{ctx.diagnosis.describe()} -> Debian's chromium, with the flags a container needs")


__all__ = ["BROWSER_DOWNLOAD", "BROWSER_MISSING", "CHROMIUM", "ENV", "browser_repair", "chromium_step"]
