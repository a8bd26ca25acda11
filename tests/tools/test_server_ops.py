"""The server's ops and checks in-process (no sandbox), and its JSON-lines loop as a subprocess."""
from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.server.files import op_edit, op_read
from tools.server.grep import glob_matcher
from tools.server.paths import OpError, Workspace
from tools.server.pycheck import undefined_names
from tools.server.term import _Capture
from tools.session import zipapp_bytes


def _undefined(src: str) -> list[str]:
    return [d["message"].split("'")[1] for d in undefined_names(ast.parse(src))]


@pytest.mark.parametrize("src", [
    "import os\nos.path",
    "def f(a, *b, c=1, **d):\n    return a, b, c, d, f",
    "class A:\n    x = 1\n    y = [x]\n    def m(self):\n        return A, self, __class__",
    "def f():\n    global G\n    G = 1\ndef g():\n    return G",
    "def outer():\n    v = 1\n    def inner():\n        nonlocal v\n        return v\n    return inner",
    "[y for x in range(3) for y in range(x) if y]\n{k: v for k, v in {}.items()}",
    "try:\n    import json\nexcept ImportError:\n    json = None\njson",
    "with open('f') as fh:\n    pass\nfh",
    "for i in range(3):\n    pass\ni",
    "try:\n    pass\nexcept Exception as e:\n    print(e)",
    "x = 1\ndel x\nx",
    "later()\ndef later():\n    return __name__, __file__",
    "from os import *\nundefined_but_star",
    "try:\n    unicode\nexcept NameError:\n    unicode = str",
    "if (n := 3):\n    print(n)\nprint([m for m in range(2) if (k := m)], k)",
    "lambda a, b=1: a + b",
    "def f(x: int = 0) -> int:\n    return x",
])
def test_no_false_positives(src: str) -> None:
    assert _undefined(src) == []


@pytest.mark.parametrize(("src", "names"), [
    ("print(nope)", ["nope"]),
    ("class A:\n    x = 1\n    def m(self):\n        return x", ["x"]),
    ("def f():\n    return local_only\ndef g():\n    local_only = 1", ["local_only"]),
    ("import os.path\nos\npath", ["path"]),
    ("[a for a in range(3)]\na", ["a"]),
])
def test_undefined_names_found(src: str, names: list[str]) -> None:
    assert _undefined(src) == names


def test_workspace_confines_paths(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path / "secret", tmp_path / "ws" / "link")
    ws = Workspace(str(tmp_path / "ws"))
    assert ws.resolve("a/../b") == str(tmp_path / "ws" / "b")
    assert ws.resolve(str(tmp_path / "ws" / "c")) == str(tmp_path / "ws" / "c")
    for bad in ("..", "../secret", str(tmp_path / "secret"), "link", "a/../../secret"):
        with pytest.raises(OpError, match="outside the workspace"):
            ws.resolve(bad)


def test_read_cuts_overlong_lines_and_clips(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x" * 50_000 + "\nshort\n" + "y\n" * 3000)
    out = op_read(Workspace(str(tmp_path)), "f.txt")
    first, second = out["output"].splitlines()[:2]
    assert "line cut at 2000 characters" in first and len(first) < 2100
    assert second == "     2\tshort"
    assert out["clipped"] and "start_line=2001" in out["output"]


def test_edit_is_atomic_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "s.sh"
    target.write_text("echo a\necho a\n")
    target.chmod(0o750)
    res = op_edit(Workspace(str(tmp_path)), "s.sh", "echo a", "echo b", replace_all=True)
    assert res["replacements"] == 2 and res["lines"] == [1, 2]
    assert target.read_text() == "echo b\necho b\n" and target.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["s.sh"]


def test_glob_matcher() -> None:
    m = glob_matcher("src/**/*.{ts,tsx}")
    assert m("src/a/b.tsx") and m("src/b.ts") and not m("lib/b.ts")
    assert glob_matcher("*.py")("deep/down/x.py") and not glob_matcher("*.py")("x.pyc")


def test_capture_keeps_head_and_tail() -> None:
    cap = _Capture()
    for _ in range(1000):
        cap.add(b"0123456789" * 100)
    text = cap.text()
    assert cap.total == 1_000_000 and len(text) < 33_000
    assert text.startswith("0123") and text.endswith("6789") and "omitted" in text


def test_server_loop_over_pipes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    reqs = [{"id": 1, "op": "read", "args": {"path": "a.txt"}}, {"id": 2, "op": "nope"},
            {"id": 3, "op": "read", "args": {"path": "a.txt", "bogus": 1}}]
    lines = "\n".join(json.dumps(r) for r in reqs) + "\nnot json\n"
    proc = subprocess.run([sys.executable, "-m", "tools.server", "--root", str(tmp_path)], input=lines.encode(),
                          capture_output=True, timeout=30, cwd=Path(__file__).parents[2])
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert answers[0]["result"]["root"] == str(tmp_path)
    assert answers[1]["result"]["output"] == "     1\thello\n"
    assert "unknown op 'nope'" in answers[2]["error"]
    assert "bad arguments for read" in answers[3]["error"]
    assert "malformed request" in answers[None]["error"]


def test_server_source_is_python38_syntax() -> None:
    for src in (Path(__file__).parents[2] / "tools" / "server").glob("*.py"):
        ast.parse(src.read_text(), str(src), feature_version=(3, 8))


def _python38() -> str | None:
    """A working Python 3.8 (pyenv's shims may exist without one behind them)."""
    for candidate in [*glob.glob("/root/.pyenv/versions/3.8*/bin/python3.8"), shutil.which("python3.8")]:
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


@pytest.mark.skipif(_python38() is None, reason="no Python 3.8 interpreter on this machine")
def test_zipapp_serves_under_python38(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return g()\n")
    (tmp_path / "n.py").write_text("def h():\n    return g()\n")
    pyz = tmp_path / "server.pyz"
    pyz.write_bytes(zipapp_bytes()[0])
    # The server answers concurrently, so the edit works on another file than the lint and search read.
    reqs = [{"id": 1, "op": "lint", "args": {"path": "m.py"}},
            {"id": 2, "op": "terminal", "args": {"command": "echo hi"}},
            {"id": 3, "op": "search", "args": {"pattern": r"g\(\)", "path": "m.py"}},
            {"id": 4, "op": "edit", "args": {"path": "n.py", "old_str": "g()", "new_str": "(g("}}]
    proc = subprocess.run([str(_python38()), "-I", str(pyz), "--root", str(tmp_path)], capture_output=True,
                          input=("\n".join(json.dumps(r) for r in reqs) + "\n").encode(), timeout=30)
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert answers[0]["result"]["python"].startswith("3.8"), proc.stderr
    assert answers[1]["result"]["diagnostics"][0]["message"] == "undefined name 'g'"
    assert answers[2]["result"]["output"] == "hi\n"
    assert answers[3]["result"]["output"].startswith("m.py:2:")
    assert answers[4]["result"]["syntax_error"]["line"] >= 2


def test_server_answers_every_malformed_request(tmp_path: Path) -> None:
    reqs = [{"id": 1, "op": ["read"]}, {"id": 2, "op": "read", "args": [1]}, {"id": 3, "op": "read", "args": {}}]
    proc = subprocess.run([sys.executable, "-m", "tools.server", "--root", str(tmp_path)], timeout=30,
                          input=("\n".join(json.dumps(r) for r in reqs) + "\n").encode(), capture_output=True,
                          cwd=Path(__file__).parents[2])
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert "unknown op" in answers[1]["error"] and "JSON object" in answers[2]["error"]
    assert "bad arguments" in answers[3]["error"]


SYSV_PROBE = """
import ctypes, sys
from tools.server.reset import _sysv_ids, remove_sysv_ipc
c = ctypes.CDLL(None)
made = [c.shmget(0x5eed, 4096, 0o1666), c.semget(0x5eed, 1, 0o1666), c.msgget(0x5eed, 0o1666)]
assert -1 not in made and len(_sysv_ids()) == 3, (made, _sysv_ids())
print(remove_sysv_ipc(), len(_sysv_ids()))
"""


def test_reset_removes_sysv_ipc_objects() -> None:
    """In an IPC namespace of its own (never the host's): shared memory, a semaphore set, a message queue."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a private IPC namespace needs root and unshare(1)")
    out = subprocess.run(["unshare", "--ipc", sys.executable, "-c", SYSV_PROBE], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"]
