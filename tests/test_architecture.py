"""The map and the rules that keep it true: named paths exist, no import cycles, nothing imports cli.py,
files stay small, imports inside functions say why, envs/ + tools/ never reach up into autoinstall/, and
`import cli` leaves the docker SDK unloaded.

Fast and Docker-free: it reads files and builds the import graph with grimp (what import-linter uses).
ARCHITECTURE.md describes the layers; `uv run lint-imports` enforces them.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp

ROOT = Path(__file__).parents[1]
PACKAGES = ("autoinstall", "envs", "tools")
TOP_FOLDERS = ("autoinstall", "envs", "tools", "tests", "bench", "scripts", ".ci", "docs")
MAX_LINES = 400


def _py_files(*tops: str) -> list[Path]:
    files = []
    for top in tops:
        path = ROOT / top
        files += [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts and not _rel(f).startswith("tests/fixtures/")]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- a: every path the documentation names exists -----------------------------------------------------------
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
TOKEN = re.compile(r"(?<![\w./~-])[\w./~-]*[A-Za-z][\w./~-]*")
PATH_SUFFIXES = (".py", ".md", ".toml", ".j2")
RELATIVE_NAME = re.compile(r"`([\w.-]+\.(?:py|md|toml|j2)|[\w-]+/)`")
"""A backticked bare file or folder name, as package READMEs and `__init__` docstrings list their files."""


def _named_paths(text: str) -> Iterator[str]:
    """Repository paths in `text`: tokens under a top-level folder, or `a/b.py`-like (.py .md .toml .j2).

    URLs, `~/...`, `../...` (outside the repository) and absolute paths (/opt, /var, /workspace, /tmp: inside
    a container) are not repository paths.
    """
    for token in TOKEN.findall(URL.sub(" ", text)):
        path = token.rstrip(".,;:!?").removeprefix("./")
        if path.startswith(("/", "~", "../")):
            continue
        if path.startswith(tuple(f"{top}/" for top in TOP_FOLDERS)) or (
                "/" in path and path.endswith(PATH_SUFFIXES)):
            yield path


def _documents() -> Iterator[tuple[str, str, Path, bool]]:
    """(where, text, its folder, lists its package's files) per README, ARCHITECTURE.md, docs/ page, module docstring.

    A path may be written from the repository root or from the document's folder. Bare backticked names
    (`loop.py`, `models/`) in a package's README or `__init__` docstring are that package's files.
    """
    for name in ("README.md", "ARCHITECTURE.md"):
        yield name, (ROOT / name).read_text(), ROOT, False
    for page in sorted((ROOT / "docs").glob("*.md")):  # the reference pages README links to
        yield _rel(page), page.read_text(), page.parent, False
    for top in PACKAGES:
        for readme in sorted((ROOT / top).rglob("README.md")):
            yield _rel(readme), readme.read_text(), readme.parent, True
    for module in _py_files("cli.py", *PACKAGES):
        doc = ast.get_docstring(ast.parse(module.read_text()), clean=False)
        if doc:  # an indented block is an example of some other tree (a task's layout, a trainer's code)
            prose = "\n".join(line for line in doc.splitlines() if not line.startswith(("    ", "\t")))
            yield _rel(module), prose, module.parent, module.name == "__init__.py"


def test_every_path_named_in_the_documentation_exists() -> None:
    missing = []
    for where, text, folder, lists_files in _documents():
        missing += [f"{where}: {path}" for path in _named_paths(text)
                    if not (ROOT / path).exists() and not (folder / path).exists()]
        if lists_files:
            missing += [f"{where}: {name} (in {_rel(folder)}/)" for name in RELATIVE_NAME.findall(text)
                        if not (folder / name).exists() and not (ROOT / name).exists()]
    assert not missing, "paths named in the documentation that do not exist:\n" + "\n".join(missing)


# -- b, c, f: the import graph ------------------------------------------------------------------------------
def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return [_one_cycle(graph, component) for component in components]


def _one_cycle(graph: grimp.ImportGraph, component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    first = min(component)
    paths = {first: [first]}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph.find_modules_directly_imported_by(node) & component):
            if child == first:
                return [*paths[node], first]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return sorted(component)


def test_no_import_cycles_between_any_project_modules() -> None:
    graph = grimp.build_graph(*PACKAGES)
    cycles = [" -> ".join(cycle) for cycle in _cycles(graph)]
    assert not cycles, "import cycles (imports inside functions count):\n" + "\n".join(cycles)


def _imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import statement in `path`, and every import_module("...") with a literal."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value


def _importers_of(module: str, *tops: str) -> list[str]:
    return [f"{_rel(path)}:{line}: {name}" for path in _py_files(*tops) if path != ROOT / "cli.py"
            for line, name in _imported_modules(path) if name == module or name.startswith(f"{module}.")]


def test_nothing_imports_cli() -> None:
    importers = _importers_of("cli", *PACKAGES, "bench", "scripts", "tests")
    assert not importers, "cli.py is the top layer; these import it:\n" + "\n".join(importers)


def test_envs_and_tools_never_import_autoinstall() -> None:
    importers = _importers_of("autoinstall", "envs", "tools")
    assert not importers, "envs/ and tools/ sit below the builder; these import it:\n" + "\n".join(importers)


def test_importing_cli_leaves_the_docker_sdk_unloaded() -> None:
    """`autoinstall --help`, surveys, plans and the fast tests load no docker SDK (a sixth of `import cli` when
    it did): only making a sandbox or an image does."""
    code = "import sys, cli; print(' '.join(m for m in sys.modules if m.split('.')[0] == 'docker'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not done.stdout.strip(), ("`import cli` loads the docker SDK; find the chain with "
                                     "`python -X importtime -c 'import cli'` and import envs.docker where a "
                                     f"sandbox or image is made:\n{done.stdout[:300]}")


# -- d: file size -------------------------------------------------------------------------------------------
def test_no_module_is_over_400_lines() -> None:
    long = [f"{_rel(p)}: {n} lines" for p in _py_files("cli.py", *PACKAGES, "bench")
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, f"modules over {MAX_LINES} lines (split them by responsibility):\n" + "\n".join(long)


# -- e: an import inside a function says why ----------------------------------------------------------------
def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _unexplained_imports(path: Path) -> Iterator[int]:
    """Lines of imports in function bodies with no `#` comment on them or on the line above.

    Consecutive import statements form one group: the comment above the first one explains them all.
    """
    lines = path.read_text().splitlines()

    def has_comment(first: int, last: int) -> bool:
        return any("#" in lines[i - 1] for i in range(first, last + 1))

    def visit(node: ast.AST, in_function: bool) -> Iterator[int]:
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            explained = False
            for i, child in enumerate(body):
                if isinstance(child, ast.Import | ast.ImportFrom):
                    continues = i > 0 and isinstance(body[i - 1], ast.Import | ast.ImportFrom) \
                        and body[i - 1].end_lineno == child.lineno - 1
                    if not continues:
                        explained = child.lineno > 1 and lines[child.lineno - 2].strip().startswith("#")
                    if in_function and not (explained or has_comment(child.lineno, child.end_lineno or 0)):
                        yield child.lineno
                elif not _is_type_checking(child):
                    nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                    yield from visit(child, nested)
        if isinstance(node, ast.match_case | ast.Match):
            for case in getattr(node, "cases", []):
                yield from visit(case, in_function)

    yield from visit(ast.parse("\n".join(lines)), in_function=False)


def test_imports_inside_functions_say_why() -> None:
    offenders = [f"{_rel(p)}:{line}" for p in _py_files("cli.py", *PACKAGES)
                 for line in _unexplained_imports(p)]
    assert not offenders, ("imports inside a function need a one-line `# why` on the line or the line above "
                           "(or move them to the top of the module):\n" + "\n".join(offenders))


# -- g: only envs/testrun/ and the ecosystems name a test runner ----------------------------------------------
RUNNER_BLIND = ("autoinstall/install", "autoinstall/verify", "autoinstall/record", "autoinstall/tasks",
                "autoinstall/plan", "envs/runtime", "envs/export", "envs/grading")
"""They ask a runner's record (envs/testrun/abilities.py) what it can do instead of naming it. envs/grading/kit/
is left out: it runs inside a task's image, stdlib only, and dispatches on report formats (`Parser`), two of
which share a name with a runner ("node", "unittest"); the record's `report` is what chooses it."""
RUNNER_BLIND_EXCEPT = ("envs/grading/kit/",)


def _runner_names(node: ast.AST, runners: frozenset[str]) -> list[str]:
    """The runner names `node` spells: a string literal, or the literals of a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in runners:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in runners]
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("frozenset", "set", "tuple") and node.args:
        return _runner_names(node.args[0], runners)
    return []


def runner_names_in(source: str, runners: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(line, name) where `source` compares with a runner's name (==, !=, in, not in, a `case`), or holds a table
    of two or more of them (a tuple, list or set: a parallel registry; a `Literal[...]` of names is a type)."""
    tree = ast.parse(source)
    types = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                yield from ((node.lineno, name) for name in _runner_names(operand, runners))
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            yield from ((node.pattern.lineno, name) for name in _runner_names(node.pattern.value, runners))
        elif (isinstance(node, ast.Tuple | ast.List | ast.Set) and id(node) not in types
              and len(names := _runner_names(node, runners)) >= 2):
            yield node.lineno, ", ".join(names)


def test_no_stage_task_runtime_or_export_module_names_a_test_runner() -> None:
    from envs.testrun import registered  # the registry's own names, whatever runners it holds

    runners = frozenset(registered())
    offenders = [f"{_rel(p)}:{line}: {name!r}" for p in _py_files(*RUNNER_BLIND)
                 if not _rel(p).startswith(RUNNER_BLIND_EXCEPT)
                 for line, name in runner_names_in(p.read_text(), runners)]
    assert not offenders, ("these modules name a test runner; ask its record instead (envs.testrun.abilities(name):"
                           " collect, select, warm_up, ...), adding a field there if none answers:\n"
                           + "\n".join(offenders))


def test_the_runner_rule_sees_comparisons_memberships_cases_and_tables() -> None:
    runners = frozenset({"pytest", "go", "cargo"})
    source = ('if runner == "pytest": pass\nif "go" in command: pass\nok = r in ("go", "cargo")\n'
              'WARM = frozenset({"go", "cargo"})\nmatch r:\n    case "cargo": pass\n'
              'fine = {"go": "Go"}\nname = "pytest"\nKind = Literal["go", "cargo"]\n')
    assert sorted({line for line, _ in runner_names_in(source, runners)}) == [1, 2, 3, 4, 6]


def test_only_the_docker_backend_of_the_runtime_knows_where_sandboxes_run() -> None:
    sandboxes = ("envs.docker", "envs.local", "envs.fake")
    importers = [f"{_rel(path)}:{line}: {name}" for path in _py_files("envs/runtime")
                 if path.name != "docker_backend.py" for line, name in _imported_modules(path)
                 if name in sandboxes or name.startswith(tuple(f"{s}." for s in sandboxes))]
    assert not importers, ("the runtime programs to the Sandbox protocol through its EpisodeBackend "
                           "(envs/runtime/backend.py); only docker_backend.py may import a sandbox:\n"
                           + "\n".join(importers))
