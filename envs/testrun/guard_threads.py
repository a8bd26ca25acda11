"""What the agent's code hands to other threads in a graded Python run (imported by the grader's guard,
envs/testrun/guard_plugin.py, beside it as autoinstall_guard_threads, when the run has files taken from the agent).

A thread started with the agent's code on the stack is the agent's: what it runs (a builtin handed over, `open`
itself, with no frame of the agent's on its own stack) does what the agent asked for. So is work the agent's code
hands to a thread pool (`submit`, an event loop's `run_in_executor`) or to an event loop (`call_soon`, `call_later`),
wherever and whenever it runs. Processes: guard_handoffs.py. So is a tracer, profiler or monitor installed while the
agent's code is anywhere on the stack (`bdb.Bdb().set_trace()`, `cProfile.Profile().__enter__()`,
`threading.settrace_all_threads`: the standard library's frame asks, for the agent), or installed as a thread
starts when it is the agent's (`threading.settrace(f)`, run by the thread the tests start later): it sees the tests'
frames and code, whose locals and constants are the asserted answers (`watching_for_agent`).

Stdlib only; run by the test user. PYTEST_DONT_REWRITE: the guard's, not a test module.
"""
import functools
import os
import sys
import threading
import types


def marking(start, agents, state):
    """A thread starter whose threads, when started with the agent's code on the stack, are the agent's
    (`state.agents`: the guard's thread-local)."""
    def start_thread(function, *args, **kwargs):
        if agents(sys._getframe(1)):
            def agents_thread(*a, **k):
                state.agents = True
                return function(*a, **k)

            return start(agents_thread, *args, **kwargs)
        return start(function, *args, **kwargs)

    return start_thread


def mark_threads(agents, state):
    import _thread  # the guard's own use

    for module, names in ((_thread, ("start_new_thread", "start_new", "start_joinable_thread")),
                          (threading, ("_start_new_thread", "_start_joinable_thread"))):
        for name in names:
            if callable(getattr(module, name, None)):
                setattr(module, name, marking(getattr(module, name), agents, state))


def as_agents(function, state):
    """`function`, run as the agent's wherever it runs (a pool's thread, an event loop's turn), then as before."""
    def agents_call(*args, **kwargs):
        before, state.agents = getattr(state, "agents", False), True
        try:
            return function(*args, **kwargs)
        finally:
            state.agents = before

    return agents_call


def _handing(agents, state):
    """Patches of the standard library's hand-off points, by module: work handed to them while the agent's code
    is on the stack runs as the agent's, later, wherever it runs."""
    def submit(original):
        def submitting(self, fn, /, *args, **kwargs):
            if agents(sys._getframe(1)):
                fn = as_agents(fn, state)
            return original(self, fn, *args, **kwargs)
        return submitting

    def handle(original):
        def scheduling(self, callback, args, loop, context=None):
            if agents(sys._getframe(1)):
                callback = as_agents(callback, state)
            return original(self, callback, args, loop, context)
        return scheduling

    def finalize(original):
        def registering(self, obj, func, /, *args, **kwargs):
            if agents(sys._getframe(1)):
                func = as_agents(func, state)
            return original(self, obj, func, *args, **kwargs)
        return registering

    return {"concurrent.futures.thread": lambda m: setattr(m.ThreadPoolExecutor, "submit",
                                                             submit(m.ThreadPoolExecutor.submit)),
            "asyncio.events": lambda m: setattr(m.Handle, "__init__", handle(m.Handle.__init__)),
            "weakref": lambda m: setattr(m.finalize, "__init__", finalize(m.finalize.__init__))}


def mark_forks(agents, state):
    """What the agent's code registers to run at a fork runs as the agent's: `os.register_at_fork(after_in_child=
    partial(exec, code))` would read the tests in a child the tests fork, with no frame of the agent's on its stack
    (at exit it could only write what the runner's exit status and summary already contradict)."""
    if not hasattr(os, "register_at_fork"):
        return
    original = os.register_at_fork

    def register_at_fork(**kwargs):
        if agents(sys._getframe(1)):
            kwargs = {k: as_agents(v, state) if callable(v) else v for k, v in kwargs.items()}
        return original(**kwargs)

    os.register_at_fork = register_at_fork


class _Patcher:
    """A finder first on sys.meta_path that patches each hand-off module once it has run (imported or not yet:
    the guard imports none of them itself)."""

    def __init__(self, patches):
        self.patches = patches

    def find_spec(self, name, path=None, target=None):
        if name not in self.patches:
            return None
        from importlib.machinery import PathFinder  # the guard's own use

        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return None
        patch, run = self.patches.pop(name), loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        loader.exec_module = exec_module
        return spec


def mark_handoffs(agents, state):
    patches = _handing(agents, state)
    for name in [n for n in patches if n in sys.modules]:
        patches.pop(name)(sys.modules[name])
    sys.meta_path.insert(0, _Patcher(patches))


WATCHING = frozenset({"sys.settrace", "sys.setprofile", "sys.monitoring.register_callback"})
"""The audit events that install what watches the run (sys.monitoring: Python 3.12 and later)."""


def _code_of(hook, depth=0):
    """The code of what a hook calls: a function, a method, a partial's function, a class's __new__ or __init__,
    an object's __call__ (read without running any of its code); None for a builtin."""
    if depth > 8 or hook is None:
        return None
    kind = type(hook)
    if kind is types.FunctionType:
        return hook.__code__
    if kind is types.MethodType:
        return _code_of(hook.__func__, depth + 1)
    if kind is functools.partial:
        return _code_of(hook.func, depth + 1)
    look = type.__getattribute__  # not the class's own lookup: no code of the hook's runs here
    owners = look(hook if isinstance(hook, type) else kind, "__mro__")
    names = ("__new__", "__init__") if isinstance(hook, type) else ("__call__",)
    for owner in owners:
        for name in names:
            found = look(owner, "__dict__").get(name)
            if type(found) in (types.FunctionType, staticmethod, classmethod):
                return _code_of(getattr(found, "__func__", found), depth + 1)
    return None


def watching_for_agent(event, frame, agents, agents_file):
    """`event` (one of WATCHING) installs a watcher for the agent: its code on the stack (`agents(frame)`), or, as
    a thread starts, threading's hook is the agent's (`agents_file(filename)`)."""
    if frame is not None and frame.f_code.co_name == "_bootstrap_inner" and frame.f_globals.get("__name__") == "threading":
        hook = getattr(threading, "_trace_hook" if event == "sys.settrace" else "_profile_hook", None)
        code = _code_of(hook)
        return code is not None and agents_file(code.co_filename)
    return agents(frame)


def _unframed(handler):
    def handler_without_frame(signum, frame):
        return handler(signum, None)

    return handler_without_frame


def unframe_signals(agents, state):
    """A signal handler the agent's code installs runs as the agent's, handed no frame: the one a signal interrupts
    is the tests' or below them (`frame.f_back.f_locals` holds the asserted answers, and reading it is not audited)."""
    import _signal  # the guard's own use (builtin; signal.signal calls it)

    original = _signal.signal

    def installing(signalnum, handler):
        if callable(handler) and agents(sys._getframe(1)):
            handler = as_agents(_unframed(handler), state)
        return original(signalnum, handler)

    _signal.signal = installing


def install(agents, state):
    """Mark the threads of the agent's code (`agents(frame)`: its code on the stack) and the work it hands on
    (`state.agents`: the guard's thread-local, true while a thread works for the agent)."""
    mark_threads(agents, state)
    mark_handoffs(agents, state)
    mark_forks(agents, state)
    unframe_signals(agents, state)
