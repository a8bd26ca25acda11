"""The doctest check of the grader's guard in a graded Python run (envs/testrun/guard_plugin.py), imported by it
beside it (as autoinstall_guard_doctests) only in a run that collects doctests of the agent's files: a doctest of
the agent's file runs the start's examples of that name. Stdlib only; run by the test user.

PYTEST_DONT_REWRITE: the guard's, not a test module.
"""
import ast
import doctest
import os


def doctest_changed(item, taken):
    """What the doctest `item` runs that the start's docstring of its name does not hold, if the file is the
    agent's (`taken`: the agent's files -> the start's copy of each)."""
    test = getattr(item, "dtest", None)
    path = os.path.normpath(str(getattr(test, "filename", "") or ""))
    start = taken.get(path) if test is not None else None
    if not start:
        return None
    try:
        with open(start, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    module = str(test.globs.get("__name__", ""))  # doctest names `module.Class.method`; its own docs `module`
    qualified = "" if test.name == module else test.name[len(module) + 1:] if test.name.startswith(module + ".") \
        else None
    doc = _start_docstrings(tree).get(qualified) if qualified is not None else None
    if doc is None or ">>>" not in doc:
        return None
    parser = doctest.DocTestParser()
    want = [(e.source, e.want) for e in parser.get_examples(doc)]
    if [(e.source, e.want) for e in test.examples] != want:
        return f"the doctest {test.name} runs examples its start docstring does not hold"
    return None


def _start_docstrings(tree):
    """Qualified name ("" for the module) -> the start's docstring of the first scope of that name."""
    found = {}

    def visit(node, name):
        doc = ast.get_docstring(node, clean=False)
        if doc is not None:
            found.setdefault(name, doc)
        for child in node.body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{name}.{child.name}" if name else child.name)

    visit(tree, "")
    return found
