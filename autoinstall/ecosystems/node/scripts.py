"""Dependencies' install scripts, apart from the install: npm fetches and unpacks with `--ignore-scripts`, then
one step of their own runs every package's preinstall/install/postinstall (`npm rebuild`) and the project's
prepare, each script's start and end printed (`npm info run PKG EVENT LOCATION ...`).

Many such scripts download a prebuilt binary (a browser, Cypress, a native addon's build from GitHub releases)
from hosts these machines cannot reach, and fail, or fall back to a long compile, or wait on a connection that
never answers. Apart, their failure or timeout costs the scripts step only (the unpacked dependencies are
already a snapshot), and the output names the package whose script failed or was still running. A repair then
leaves that package's scripts out (its package.json's install scripts removed and its implicit node-gyp build
turned off, by a recorded step) and runs the others again; the tests that need what the script would have
made fail, and count as failures.
"""
from __future__ import annotations

import re
import shlex

from envs.spec import Evidence, Step

REBUILD = "npm rebuild --loglevel=info && npm run prepare --if-present"
"""Every dependency's install scripts in dependency order, each script's start and end logged (a failed one's
output follows as `npm ERR!` lines; `--foreground-scripts` would interleave its output with those lines), then
the project's own prepare (which `npm ci` runs, and `npm rebuild` does not)."""
IGNORE_SCRIPTS = "--ignore-scripts"
_RUN_START = re.compile(r"^npm info run (?P<pkg>\S+) (?P<event>\w+) (?P<where>node_modules/\S+) (?P<cmd>.*)$", re.M)
_RUN_END = re.compile(r"^npm info run (?P<pkg>\S+) (?P<event>\w+) \{ code: (?P<code>-?\d+|null), "
                      r"signal: (?P<signal>\S+) \}", re.M)
_FAILED_PATH = re.compile(r"^npm (?:ERR!|error) path /\S*?/(?P<where>node_modules/\S+?)/?$", re.M)
UNREACHABLE = re.compile(r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (?P<host>[\w.-]+)|connect (?:ETIMEDOUT|ECONNREFUSED|"
                         r"ENETUNREACH) (?P<addr>[\w.:\[\]]+)|Could not resolve host:? (?P<host2>[\w.-]+)|"
                         r"(?:ETIMEDOUT|ESOCKETTIMEDOUT|socket hang up)")
"""A download that cannot be had here: a host that does not resolve, a connection refused or timed out."""
_SKIP = ("const fs=require('fs');for(const d of process.argv.slice(1)){const f=d+'/package.json';"
         "const p=JSON.parse(fs.readFileSync(f,'utf8'));const s=p.scripts||{};"
         "for(const k of ['preinstall','install','postinstall'])delete s[k];p.gypfile=false;"
         "fs.writeFileSync(f,JSON.stringify(p,null,2));const g=d+'/binding.gyp';"
         "if(fs.existsSync(g))fs.renameSync(g,g+'.left-out');console.log('install scripts left out: '+d)}")
"""Removes a package's install scripts and its implicit `node-gyp rebuild` (npm 9's rebuild adds one for any
binding.gyp, gypfile: false or not: the file is renamed); a package that is not installed fails the step
(readFileSync throws) rather than being skipped silently."""


def scripts_step(evidence: Evidence) -> Step:
    """The dependencies' install scripts and the project's prepare, after an install that ran none."""
    return Step(command=REBUILD, kind="project", evidence=[evidence],
                why="the dependencies' install scripts (native builds, downloads) and the package's prepare, apart "
                    "from the install: a script that fails or hangs is named in the output and can be left out")


def skipped(command: str) -> list[str]:
    """The packages (node_modules/...) whose scripts `command` leaves out."""
    head, found, _ = command.partition(REBUILD)
    return re.findall(r"(?<!\S)(node_modules/\S+)", head) if found else []


def without_scripts(locations: list[str]) -> str:
    """The scripts step with the install scripts of the packages at `locations` left out."""
    where = " ".join(shlex.quote(w) for w in locations)
    return f"node -e {shlex.quote(_SKIP)} {where} && {REBUILD}"


def _end_code(output: str, pkg: str, event: str) -> str | None:
    ends = [m for m in _RUN_END.finditer(output) if (m.group("pkg"), m.group("event")) == (pkg, event)]
    return ends[-1].group("code") if ends else None


def failed_scripts(output: str, timed_out: bool = False) -> dict[str, str]:
    """Location (node_modules/...) -> the line that shows it, of each dependency whose install script failed, or
    was still running when the step timed out."""
    found: dict[str, str] = {}
    for m in _RUN_START.finditer(output):
        code = _end_code(output[m.end():], m.group("pkg"), m.group("event"))
        if code not in (None, "0") or (code is None and timed_out):
            state = "still running at the step's timeout" if code is None else f"exit {code}"
            found[m.group("where")] = f"{m.group('pkg')} {m.group('event')} ({state}): {m.group('cmd')[:160]}"
    for m in _FAILED_PATH.finditer(output):
        found.setdefault(m.group("where"), m.group(0).strip())
    return found


def unreachable_host(output: str) -> str:
    """The host (or address) a failed download tried, when the output shows one ("" otherwise)."""
    m = UNREACHABLE.search(output)
    return next((v for v in (m.group("host"), m.group("addr"), m.group("host2")) if v), "") if m else ""
