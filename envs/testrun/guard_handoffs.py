"""What the agent's code hands to other processes in a graded run (imported by the grader's Python guard,
envs/testrun/guard_plugin.py, beside it as autoinstall_guard_handoffs, when the run has files taken from the agent;
run as a launcher by the Node guard and by Go, Rust and Java runs: `launch` below). Threads: guard_threads.py.

A child process is a reader the guard's audit hook cannot see: `cat` of a test file, `git show HEAD:` of one,
a pool's process handed `Path.read_text`. So a process started while the agent's code is on the stack (by
subprocess, os.posix_spawn, os.system, a fork: multiprocessing's too) is started under Landlock (Linux 5.13 and
later; no privilege needed): it may read every file but the hidden ones (the tests' sources, the task's start
copies, the workdir's git history, which holds the tests too), and so may every process it starts. Landlock
grants by folder, so the folders above a hidden file are granted entry by entry, as they are when the child
starts. Where the kernel (or a seccomp filter) has no Landlock, the guard says so on stderr once and the children
run as they would.

Stdlib only; run by the test user. PYTEST_DONT_REWRITE: the guard's, not a test module.
"""
import os
import re
import sys
import threading

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
READ_FILE = 1 << 2  # LANDLOCK_ACCESS_FS_READ_FILE: the only access handled, so writing and running stay free
PATH_BENEATH = 1
NO_NEW_PRIVS = 38  # PR_SET_NO_NEW_PRIVS: what Landlock asks of a process without CAP_SYS_ADMIN
PRUNED = frozenset({".git", "node_modules", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache"})
"""Folders never walked for test sources (.git is hidden whole)."""
MARK = "autoinstall-guard:"


def _kernel(_loaded={}):  # noqa: B006 - ctypes, loaded at the first process the agent's code starts
    """(ctypes, libc, the ruleset's attribute struct, a path rule's struct)."""
    if not _loaded:
        import ctypes  # the guard's own use

        class RulesetAttr(ctypes.Structure):
            _fields_ = [("handled_access_fs", ctypes.c_uint64)]

        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _loaded["kernel"] = (ctypes, libc, RulesetAttr, PathBeneath)
    return _loaded["kernel"]


def _syscall(number, *args):
    ctypes, libc, _, _ = _kernel()
    return libc.syscall(ctypes.c_long(number), *args)


def available(_known=[]):  # noqa: B006 - asked once
    """Whether this kernel (and the container's seccomp filter) offers Landlock."""
    if not _known:
        ctypes = _kernel()[0]
        _known.append(_syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1)) >= 1)
    return _known[0]


_said = []


def hidden_files(workdir, test_source):
    """The test sources under `workdir` (by `test_source`), by real path."""
    found = set()
    for folder, dirs, files in os.walk(workdir):
        dirs[:] = [d for d in dirs if d not in PRUNED and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))]
        found.update(os.path.realpath(os.path.join(folder, f)) for f in files if test_source(os.path.join(folder, f)))
    return found


def granted(hidden, walked=None):
    """Every path to grant for `hidden` to stay unread: each entry of each folder above a hidden path, but the
    hidden paths and the folders above them (walked into instead, each added to `walked`). Links are not
    granted: what they lead to is judged by its own place."""
    above = {os.path.dirname(p) for p in hidden}
    for path in list(above):
        while path not in ("/", ""):
            path = os.path.dirname(path)
            above.add(path)
    walk = ["/"]
    while walk:
        folder = walk.pop()
        try:
            if walked is not None:
                walked.append((folder, os.stat(folder).st_mtime_ns))
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.path in hidden:
                continue
            if entry.path in above and entry.is_dir(follow_symlinks=False):
                walk.append(entry.path)
            elif not entry.is_symlink():
                yield entry.path


def _unchanged(walked):
    try:
        return all(os.stat(folder).st_mtime_ns == stamp for folder, stamp in walked)
    except OSError:
        return False


def ruleset(hidden, _made={}):  # noqa: B006 - the last ruleset made, kept while the folders it walked are unchanged
    """A Landlock ruleset's descriptor: reading allowed beneath every granted path. Made again when a folder it
    walked has gained or lost an entry since (its modification time moved)."""
    key = frozenset(hidden)
    if key in _made and _unchanged(_made[key][1]):
        return _made[key][0]
    ctypes, _, attributes, path_beneath = _kernel()
    attr = attributes(READ_FILE)
    fd = _syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    walked = []
    for path in granted(hidden, walked):
        try:
            parent = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            rule = path_beneath(READ_FILE, parent)
            _syscall(ADD_RULE, ctypes.c_int(fd), ctypes.c_int(PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0))
        finally:
            os.close(parent)
    for old, _ in _made.values():
        os.close(old)
    _made.clear()
    _made[key] = (fd, walked)
    return fd


def confine(hidden):
    """Confine the calling thread (and every process it starts from now on) away from `hidden`."""
    fd = ruleset(hidden)
    ctypes, libc, _, _ = _kernel()
    if libc.prctl(NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or _syscall(RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


class Children:
    """The process starters of this interpreter, each confining what it starts for the agent's code."""

    def __init__(self, agents, hidden):
        self.agents, self.hidden, self._files = agents, hidden, None
        self._forking = False

    def files(self):
        if self._files is None:
            self._files = self.hidden()
        return self._files

    def confining(self, frame):
        """Whether a process started from `frame` is to be confined (the agent's code asks, Landlock is here)."""
        if not self.agents(frame):
            return False
        if available():
            return True
        if not _said:
            _said.append(1)
            os.write(2, f"{MARK} this kernel has no Landlock: the agent's child processes are not confined\n".encode())
        return False

    def starting(self, start):
        """`start`, run in a confined thread of its own when the agent's code asks."""
        def confined_start(*args, **kwargs):
            if not self.confining(sys._getframe(1)):
                return start(*args, **kwargs)
            done = {}

            def run():
                try:
                    confine(self.files())
                    done["value"] = start(*args, **kwargs)
                except BaseException as error:  # noqa: BLE001 - raised again in the asking thread
                    done["error"] = error

            thread = threading.Thread(target=run, name="autoinstall-guard-child")
            thread.start()
            thread.join()
            if "error" in done:
                raise done["error"]
            return done["value"]

        return confined_start

    def before_fork(self):
        self._forking = self.confining(sys._getframe(1))

    def after_fork_in_child(self):
        if self._forking:
            self._forking = False
            try:
                confine(self.files())
            except OSError:
                os.write(2, f"{MARK} refused a fork of the agent's code that could not be confined\n".encode())
                os._exit(70)

    def install(self):
        import _posixsubprocess  # the guard's own use (subprocess, imported later, binds the wrapper)

        subprocess = sys.modules.get("subprocess")
        for module, name in ((_posixsubprocess, "fork_exec"), (subprocess, "_fork_exec"), (os, "posix_spawn"),
                             (os, "posix_spawnp"), (os, "system")):
            if callable(getattr(module, name, None)):
                setattr(module, name, self.starting(getattr(module, name)))
        os.register_at_fork(before=self.before_fork, after_in_child=self.after_fork_in_child,
                            after_in_parent=lambda: setattr(self, "_forking", False))


def install(agents, test_source, workdir, start_copies):
    """Confine the children of the agent's code (`agents(frame)`: its code on the stack) away from the test sources
    under `workdir` (`test_source(path)`), `start_copies` and the workdir's .git."""
    workdir = os.path.realpath(workdir)
    children = Children(agents, lambda: {*hidden_files(workdir, test_source), os.path.join(workdir, ".git"),
                                         os.path.realpath(start_copies)})
    children.install()
    return children



def _rust_test_source(path):
    """An integration test target (tests/NAME.rs, tests/NAME/main.rs) or a source holding unit tests."""
    parts = path.split(os.sep)
    if not path.endswith(".rs"):
        return False
    if parts[-2:-1] == ["tests"] or (parts[-3:-2] == ["tests"] and parts[-1] == "main.rs"):
        return True
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20)
    except OSError:
        return False
    return b"#[cfg(test)]" in text or b"#[test]" in text


def _node_test_source(path):
    """A script under test/, tests/, __tests__/ or spec/, or named *.test.*, *.spec.*, test-*, *-test.*, *_test.*
    (the Node guard's rule: envs/testrun/node_guard.cjs)."""
    parts = path.split(os.sep)
    name = parts[-1]
    if not re.search(r"\.[cm]?[jt]sx?$", name):
        return False
    return bool(re.search(r"\.(test|spec)\.[^/]+$|^test-|[-_]test\.[^/]+$", name)) or \
        any(p in ("test", "tests", "__tests__", "spec") for p in parts[:-1])


TEST_SOURCES = {
    "node": _node_test_source,
    "go": lambda path: path.endswith("_test.go") and "testdata" not in path.split(os.sep),
    "rust": _rust_test_source,
    "java": lambda path: any(f"{os.sep}src{os.sep}test{os.sep}{kind}{os.sep}" in path
                             for kind in ("java", "kotlin", "groovy", "scala")),
}
"""A language's test sources: read by the build or the runner, never by the test binaries it runs or the processes
a product starts (their data, under testdata/, tests/ui/ or src/test/resources/, stays readable: a `_test.go` under
testdata/ is a Go tool's input, never compiled)."""
START_COPIES = "/opt/autoinstall/task/start"


def go_header(text):
    """A _test.go file's header alone: its build constraints, package clause and imports (each made blank, so
    the header compiles on its own): what the go command reads of a test file to load a package."""
    import re  # the launcher's own use (the Python guard, which imports this module, never needs it)

    package = re.search(r"^package\s+\w+", text, re.M)
    if package is None:
        return ""
    constraints = [line for line in text[:package.start()].splitlines()
                   if line.startswith(("//go:build", "// +build"))]
    body = re.search(r"^(?:func|type|var|const)\b", text, re.M)
    paths = []
    for block, single in re.findall(r'^import\s*\(([^)]*)\)|^import\s+(?:[\w.]+\s+)?("[^"\n]*")',
                                    text[:body.start() if body else len(text)], re.M):
        paths += re.findall(r'"[^"\n]*"', block) if block else [single]
    imports = "".join(f"import _ {path}\n" for path in dict.fromkeys(paths))
    return "\n".join([*constraints, "", package.group(0), "", imports])


def go_overlay(tests, folder):
    """An -overlay file for the go command (`go help build`) that reads each of `tests` (_test.go files) as its
    header alone, written with the headers in `folder`: a go command a test runs (`go build` of the module's
    command, `go vet`) loads the packages whose tests it cannot read, and reads no test's body."""
    replace = {}
    for n, path in enumerate(sorted(tests)):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                header = go_header(f.read(1 << 20))
        except OSError:
            continue
        stub = os.path.join(folder, f"{n}.go")
        with open(stub, "w") as f:
            f.write(header)
        replace[path] = stub
    import json  # the launcher's own use

    overlay = os.path.join(folder, "overlay.json")
    with open(overlay, "w") as f:
        json.dump({"Replace": replace}, f)
    return overlay


def launch(argv):
    """`LANGUAGE WORKDIR -- COMMAND...`: run COMMAND (a test binary, the JVM of a test fork) confined away from
    LANGUAGE's test sources under WORKDIR, the task's start copies and the workdir's .git. The graded run names
    this as the runner of its test binaries (Go's -exec, Cargo's target runner, Surefire's jvm). A Go test binary's
    go commands (a test that builds the module's command) read the tests' headers instead (go_overlay)."""
    if len(argv) < 4 or "--" not in argv or argv[1] not in TEST_SOURCES:
        os.write(2, f"usage: {argv[0]} {{{','.join(TEST_SOURCES)}}} WORKDIR -- COMMAND...\n".encode())
        return 2
    language, workdir, command = argv[1], os.path.realpath(argv[2]), argv[argv.index("--") + 1:]
    try:
        landlock = available()
    except ImportError:  # a Python without ctypes
        landlock = False
    if not landlock:
        os.write(2, f"{MARK} this kernel has no Landlock: the test binaries are not confined\n".encode())
    else:
        try:
            tests = hidden_files(workdir, TEST_SOURCES[language])
            if language == "go":
                import tempfile  # the launcher's own use

                overlay = go_overlay(tests, tempfile.mkdtemp(prefix="autoinstall-go-headers-"))
                os.environ["GOFLAGS"] = f"{os.environ.get('GOFLAGS', '')} -overlay={overlay}".strip()
            confine({*tests, os.path.join(workdir, ".git"), START_COPIES})
        except OSError as error:
            os.write(2, f"{MARK} the test binary was not run: it could not be confined ({error})\n".encode())
            return 70
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(launch(sys.argv))
