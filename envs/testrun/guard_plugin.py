"""The grader's guard in a graded Python run, started by its sitecustomize (guard_sitecustomize.py) in every Python
process and named first to pytest (`-p autoinstall_guard`): in place before any conftest or test module imports
the agent's code. Stdlib only; run by the test user.

What the text screen (envs/grading/kit/python_reach.py) refuses by spelling, the guard refuses by deed:
- the runner's process (pytest's, or the run's first Python process) is made non-dumpable, so no other
  process of the test user (one the agent's code started) can read or write its memory or trace it;
- an audit hook refuses, when the code that asks is in a file the grader took from the agent (taken.txt,
  beside this file): frames, the garbage collector's object lists, tracing hooks, ctypes, code made or run
  from data, a function's code replaced or read; with the agent's code on the stack, writing where the run's
  reports go and reading a test's source (where a product finds the asserted answers and passes without
  computing them; the workdir's git history holds them too); and to anyone, opening a process's memory file.
  What the agent's code hands to a thread or a process is the agent's (guard_threads.py and guard_handoffs.py,
  beside this file: its threads are marked, its child processes confined away from the tests by Landlock);
- a comparison (`__eq__`, `__ne__`) the agent's files define that says yes to an object it cannot know of (an
  "always equal" object; the text screen sees only one that never names the other side), at its use and at the
  runner's end (guard_comparisons.py, beside this file).
A refusal raises in the asking code and prints MARK on the run's stderr, which grades the run 0 (verdict.py).

PYTEST_DONT_REWRITE: imported before pytest names it, the guard must not make pytest warn (warnings as errors).
"""
import os
import re
import sys
import threading

MARK = "autoinstall-guard: refused"
HERE = os.path.dirname(os.path.abspath(__file__))
START_DIR = os.getcwd()  # where the process started: what a relative code filename is relative to
MEMORY = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/mem$")
ASKED = frozenset({
    "sys._getframe", "sys._current_frames", "sys._getframemodulename", "sys._current_exceptions",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "object.__getattr__", "object.__setattr__", "object.__delattr__", "function.__new__",
    "code.__new__", "exec", "compile", "marshal.loads", "marshal.load",
})
"""Events refused when the code that raised them (the nearest Python frame) is the agent's."""
STDLIB = os.path.dirname(os.path.abspath(os.__file__))
FRAME_HANDERS = {os.path.join(STDLIB, *path.split("/")): names for path, names in (
    ("inspect.py", {"currentframe", "stack", "trace", "getinnerframes", "getgeneratorlocals", "getcoroutinelocals"}),
    ("traceback.py", {"walk_stack", "walk_tb"}), ("logging/__init__.py", {"<lambda>"}),
    ("asyncio/base_tasks.py", {"_task_get_stack"}))}
FRAME_HANDERS_ELSEWHERE = (("/_pytest/_code/code.py", {"frame"}),)  # pytest's traceback entries: in every run
"""Standard library functions that take frames (sys._getframe, a traceback's or generator's frame) and hand them
to their caller: called by the agent's code, they give it the tests' frames (`inspect.currentframe().f_back`, whose
locals hold the asserted answers: neither is audited). Called by the library itself (logging finding its caller,
traceback formatting a stack) they hand nothing on."""
WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
START_COPIES = "/opt/autoinstall/task/start"  # the task's start files, tests among them (envs/grading/policy.py)


def _taken():
    """The agent's files -> the start's copy of each ("" when not given)."""
    try:
        with open(os.path.join(HERE, "taken.txt"), encoding="utf-8") as f:
            lines = [line.rstrip("\n").split("\t", 1) for line in f if line.strip()]
    except OSError:
        return {}
    return {parts[0]: parts[1] if len(parts) > 1 else "" for parts in lines}


TAKEN = _taken()


def _workdir():
    """The task's workdir, as the grader wrote it beside this file (workdir.txt): a process the tests start in
    another folder guards the same tests. Without one, where the process started."""
    try:
        with open(os.path.join(HERE, "workdir.txt"), encoding="utf-8") as f:
            written = f.read().strip()
    except OSError:
        written = ""
    return os.path.realpath(written or START_DIR)


WORKDIR = _workdir()
REPORTS = os.environ.get("AUTOINSTALL_REPORT_DIR", "")
_state = threading.local()
MAIN = threading.main_thread().ident


def _agents(filename, _known={}):  # noqa: B006 - a cache of each file's answer: the stack is walked at every open
    if filename not in _known:
        path = filename if os.path.isabs(filename) else os.path.join(START_DIR, filename)
        _known[filename] = os.path.normpath(path) in TAKEN
    return _known[filename]


def _asker_is_agents(frame):
    return frame is not None and _agents(frame.f_code.co_filename)


def _agent_on_stack(frame):
    return getattr(_state, "agents", False) or _agents_frame_in(frame)


def _agents_frame_in(frame):
    while frame is not None:
        if _agents(frame.f_code.co_filename):
            return True
        frame = frame.f_back
    return False


def _agent_in_another_thread():
    """The agent's code on another thread's stack (waiting on what it handed to a pool, say): asked of a thread
    other than the main one, doing what the agent may not; it does it for the agent."""
    me = threading.get_ident()
    return any(i != me and _agents_frame_in(f) for i, f in sys._current_frames().items())


def _writes(args):
    mode, flags = args[1] if len(args) > 1 else "r", args[2] if len(args) > 2 else 0
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & WRITES)


def _absolute(path):
    """`path` from the folder the process is in when it asks (where the process started, if that is gone)."""
    path = os.fsdecode(path)
    try:
        return os.path.abspath(path)
    except OSError:
        return os.path.normpath(os.path.join(START_DIR, path))


def _test_source(path):
    """A test module, conftest.py or Python file under `tests/` (or its pyc), in the workdir or the start copies,
    or a file of the workdir's git history (which holds them all)."""
    if not isinstance(path, (str, bytes)):
        return False
    full = os.path.realpath(_absolute(path))  # a link to a test is the test
    root = next((r for r in (WORKDIR, START_COPIES) if full.startswith(r + os.sep)), None)
    parts = full[len(root) + 1:].split(os.sep) if root and full not in TAKEN else [""]
    stem, _, suffix = parts[-1].partition(".")
    return (root == WORKDIR and parts[0] == ".git") or suffix.rsplit(".", 1)[-1] in ("py", "pyc") and (
        stem.startswith("test_") or stem.endswith("_test") or stem == "conftest" or "tests" in parts[:-1])


def _refuse(what):
    text = f"{MARK} {what}\n"
    try:
        os.write(2, text.encode("utf-8", "replace"))
    finally:
        raise PermissionError(text.strip())


def _frame_handers(filename):
    found = FRAME_HANDERS.get(filename)
    return found if found is not None else next((n for end, n in FRAME_HANDERS_ELSEWHERE if filename.endswith(end)), ())


def _hands_frames_to_agent(frame):
    """The asking code is one of FRAME_HANDERS called by the agent's code (directly or through others of them:
    inspect.trace calls getinnerframes)."""
    while frame is not None and frame.f_code.co_name in _frame_handers(frame.f_code.co_filename):
        frame = frame.f_back
        if _asker_is_agents(frame):
            return True
    return False


def _why(event, args, frame):
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        if MEMORY.match(path):
            return f"opening a process's memory ({path})"
        inside = REPORTS and _absolute(path).startswith(REPORTS + os.sep)
        writes = inside and _writes(args)
        if _agent_on_stack(frame):
            if writes:
                return f"the agent's code writing the run's reports ({path})"
            return f"the agent's code reading a test's source ({path})" if _test_source(path) else None
        if threading.get_ident() != MAIN and (writes or _test_source(path)) and _agent_in_another_thread():
            return f"a thread working for the agent's code reading a test's source or writing the reports ({path})"
        return None
    if event in ("os.rename", "os.link", "os.symlink") and _agent_on_stack(frame) and _test_source(args[0]):
        return f"the agent's code moving or linking a test's source ({os.fsdecode(args[0])})"
    if event in ("sys._getframe", "object.__getattr__") and _hands_frames_to_agent(frame):
        return f"the agent's code taking frames through {frame.f_code.co_filename}'s {frame.f_code.co_name}"
    if event in _watchers and _watchers[event](event, frame, _agent_on_stack, _agents):
        return f"the agent's code watching the run ({event}, from {frame.f_code.co_filename}:{frame.f_lineno})"
    if (event in ASKED or event.startswith("ctypes.")) and _asker_is_agents(frame):
        return f"{event} from {frame.f_code.co_filename}:{frame.f_lineno}"
    return None


def _hook(event, args):
    if not TAKEN or getattr(_state, "busy", False):
        return
    _state.busy = True
    try:
        why = _why(event, args, sys._getframe(0).f_back)  # the code that raised it (none at start-up)
    finally:
        _state.busy = False
    if why:
        _refuse(why)


FIRST = "AUTOINSTALL_GUARD_FIRST"  # set by the run's first guarded process: the runner (made non-dumpable)


def not_dumpable():
    """PR_SET_DUMPABLE 0: /proc/PID/mem and ptrace need CAP_SYS_PTRACE, which the test user has not."""
    try:
        import ctypes  # the guard's own use (its dlopen is not the agent's)

        if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0:
            return
    except (OSError, AttributeError, ImportError):
        pass
    sys.stderr.write("autoinstall-guard: the test process could not be made non-dumpable\n")


_runner = {}
_watchers = {}  # audit event -> whether it installs a watcher for the agent (guard_threads.py)


def runner():
    """This process holds the run's results: non-dumpable, and its comparisons checked at its end."""
    if _runner:
        return
    _runner["pid"] = os.getpid()
    not_dumpable()
    import atexit  # the guard's own use
    import builtins  # the class statements of this process, recorded from here on

    from autoinstall_guard_comparisons import recording, report_blind_comparisons  # beside this file

    builtins.__build_class__ = recording(builtins.__build_class__)
    atexit.register(report_blind_comparisons)


def install():
    """Add the hook (an audit hook cannot be taken back); the run's first Python process is the runner."""
    if FIRST not in os.environ:
        os.environ[FIRST] = str(os.getpid())
        runner()
    if hasattr(sys, "addaudithook"):  # Python 3.8 and later
        if TAKEN:
            from autoinstall_guard_handoffs import install as confine_children  # beside this file
            from autoinstall_guard_threads import WATCHING, watching_for_agent  # beside this file
            from autoinstall_guard_threads import install as mark_threads  # beside this file

            mark_threads(_agent_on_stack, _state)
            _watchers.update(dict.fromkeys(WATCHING, watching_for_agent))
            confine_children(_agent_on_stack, _test_source, WORKDIR, START_COPIES)
        sys.addaudithook(_hook)
    else:
        sys.stderr.write("autoinstall-guard: this Python has no audit hooks; only the text screen applies\n")


def pytest_configure(config):
    runner()  # pytest's own process holds the results, however the run started it (tox, nox, a script)


def pytest_collection_modifyitems(session, config, items):
    """A doctest of the agent's file runs the start's examples of that name (envs/grading/kit/doc_tests.py keeps
    them); what text cannot see (a name bound elsewhere, a docstring set at run time) is refused here."""
    if TAKEN and any(getattr(item, "dtest", None) is not None for item in items):
        from autoinstall_guard_doctests import doctest_changed  # beside this file (guard_doctests.py)

        for item in items:
            what = doctest_changed(item, TAKEN)
            if what:
                os.write(2, f"{MARK} {what}\n".encode("utf-8", "replace"))


if __name__ == "autoinstall_guard":  # loaded by the grader's `-p`; imported as a module of envs, it does nothing
    install()
