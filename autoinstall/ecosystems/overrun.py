"""An install step that ran out of time, in any language: once more with more time when it was still working,
else a failure that says it hung and how to give it more time.

Whether it was still working is what the sandbox saw up to the timeout (`Overrun.progressing`: output, or its
files growing, /cache included, in the last quarter of its time), never the command's name: an `npm ci` of a
large graph starved of CPU, a Maven reactor under load, a compile printing a line per module all qualify; a
download that never answers, a prompt waiting on stdin, a deadlock do not. The one more run starts from the
last snapshot, as every repair does; the package cache under /cache is the sandbox's own volume, kept across
that rollback, so what the first run downloaded there is not fetched again (Maven's ~/.m2, Go's caches,
node_modules and build output live in the image, and are fetched or built again).
"""
from __future__ import annotations

from autoinstall.ecosystems.base import Overrun, RepairContext
from envs.spec import Repair

MORE = 2.0
"""The one more run asks for twice the time the first had."""
MIN_SHARE = 0.5
"""...and runs only if the build's time budget leaves it at least half the first's: what the first run left in
the package cache makes the second shorter, not free."""
HOW = "--step-timeout SECONDS (and --time-budget SECONDS, the whole build's)"
"""The CLI's options that give a step more time (BuildOptions.budgets: step_timeout_s, wall_s)."""


def granted(overrun: Overrun, asked: float | None = None) -> float | None:
    """The seconds the one more run gets (`asked`, else twice the first's; no less than the first's unless the
    build has less left, never more than it has left), or None when it gets none: it was not working, it had its
    one more run, or less than half the first's time is left."""
    if not overrun.progressing or overrun.retried:
        return None
    seconds = min(max(asked or MORE * overrun.timeout_s, overrun.timeout_s), overrun.remaining_s)
    return round(seconds) if seconds >= MIN_SHARE * overrun.timeout_s else None


def more_time(ctx: RepairContext) -> Repair | None:
    """The embedded model's rule for a timed-out install step, whatever the ecosystem: once more with more time
    when it was still working (see `granted`); None otherwise."""
    overrun = ctx.overrun
    if ctx.phase != "install" or ctx.diagnosis.kind != "timeout" or overrun is None:
        return None
    seconds = granted(overrun)
    if seconds is None:
        return None
    limited = seconds < MORE * overrun.timeout_s
    idle = overrun.idle_s or 0.0
    ago = "under a second" if idle < 1 else f"{idle:.0f} s"
    return Repair(kind="more_time", timeout_s=seconds, step=ctx.failing.model_copy(update={"timeout_s": seconds}),
                  reason=f"it ran out of its {overrun.timeout_s:.0f} s while still working (its last output or "
                         f"file written {ago} before the stop) -> once more from the last snapshot with {seconds:.0f} s"
                         + (" (what the build's time budget has left)" if limited else "")
                         + "; what it downloaded into the package cache (/cache) is kept")


def why_it_stopped(overrun: Overrun) -> str:
    """For a timed-out step that gets no more time: whether it hung, had its one more run, or the build has no
    time left, and the options that give it more."""
    t = f"{overrun.timeout_s:.0f} s"
    if overrun.retried:
        how = ("still working" if overrun.progressing else
               "with no output and no files written in its last "
               f"{overrun.idle_s if overrun.idle_s is not None else overrun.timeout_s:.0f} s")
        return f"it ran out of time again on its one more run ({t}), {how}; give it more time with {HOW}"
    if overrun.idle_s is None:
        return (f"it ran out of its {t} and the sandbox cannot tell whether it was still working; if it is only "
                f"slow, give it more time with {HOW}")
    if not overrun.progressing:
        return (f"it hung: no output and no files written in the last {overrun.idle_s:.0f} s of its {t} (waiting "
                f"on the network, on input, or on a lock?); if it is only slow, give it more time with {HOW}")
    if granted(overrun) is None:
        return (f"it ran out of its {t} while still working, and the build's time budget has "
                f"{overrun.remaining_s:.0f} s left, too little to run it again; give it more time with {HOW}")
    return f"it ran out of its {t} while still working, and no repair ran it again; give it more time with {HOW}"
