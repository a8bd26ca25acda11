"""Keeps only the tests named (exactly or by prefix) in the file $AUTOINSTALL_SELECT."""
import os


def selects(entry, node):
    return node == entry or node.startswith((entry + "::", entry + "/", entry + "["))


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("AUTOINSTALL_SELECT")
    if not path:
        return
    with open(path) as f:
        want = [w.strip() for w in f.read().splitlines() if w.strip()]
    keep = [i for i in items if any(selects(w, i.nodeid) for w in want)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
