"""What the agent's code hands to other threads in a graded Python run (imported by the grader's guard,
envs/testrun/guard_plugin.py, beside it as autoinstall_guard_threads, when the run has files taken from the agent).

A thread started with the agent's code on the stack is the agent's: what it runs (a builtin handed over, `open`
itself, with no frame of the agent's on its own stack) does what the agent asked for. So is work the agent's code
hands to a thread pool (`submit`, an event loop's `run_in_executor`) or to an event loop (`call_soon`, `call_later`),
wherever and whenever it runs. Processes: guard_handoffs.py.

Stdlib only; run by the test user. PYTEST_DONT_REWRITE: the guard's, not a test module.
"""
import sys
import threading


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

    return {"concurrent.futures.thread": lambda m: setattr(m.ThreadPoolExecutor, "submit",
                                                             submit(m.ThreadPoolExecutor.submit)),
            "asyncio.events": lambda m: setattr(m.Handle, "__init__", handle(m.Handle.__init__))}


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


def install(agents, state):
    """Mark the threads of the agent's code (`agents(frame)`: its code on the stack) and the work it hands on
    (`state.agents`: the guard's thread-local, true while a thread works for the agent)."""
    mark_threads(agents, state)
    mark_handoffs(agents, state)
