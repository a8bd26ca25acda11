"""Fuzz: random hostile repositories through the source, survey and plan stages (no Docker).

Each case is a directory built from one seed: random `.git` layouts (garbage HEAD, objects and refs, a
`commondir` or a gitfile naming a host repository, alternates, `[include]` of a host file, config that runs
commands, a symlinked `.git` or `.git/config`, hooks), links out of the tree, loops and dangling links, FIFOs,
a socket, sparse 50 MB files, and manifests of random bytes or of the right syntax with the wrong types. It is
checked out (sometimes at a commit, sometimes as its git directory), surveyed and planned. What must hold:

- every outcome is a result or an `AutoinstallError`, never another exception (a traceback);
- the secret marker of the host files never reaches a record, fact, note, plan or error;
- nothing is written outside the case's work dir: the host files, the scripts and the source itself are
  unchanged, lstat by lstat and byte for byte;
- no command runs (every planted hook, filter, fsmonitor and pager appends to one file that must not appear);
- each case ends within its timeout (a FIFO opened for reading would block forever).

A failure names its seed; rerun one with
`pytest 'tests/autoinstall/test_fuzz_hostile_inputs.py::test_hostile_tree[SEED]'`.
AUTOINSTALL_FUZZ_CASES sets the number of seeds (default 200); the first FAST_CASES run in the fast tier, the rest
are marked slow (the whole suite runs them all).
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from autoinstall.errors import AutoinstallError
from autoinstall.options import BuildOptions
from autoinstall.plan import propose, propose_plan
from autoinstall.source import check_out
from autoinstall.survey import survey

MARKER = "zqhostsecret5b7e"
"""In every host file: lowercase letters and digits, so no normalisation (of a name, a path) hides it."""
CASES = int(os.environ.get("AUTOINSTALL_FUZZ_CASES", "200"))
FAST_CASES = 50
HUGE = 50 * 1024 * 1024
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
MANIFESTS = ["pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml", "Cargo.lock", "go.mod",
             "go.sum", "pom.xml", "requirements.txt", "requirements-dev.txt", "tox.ini", "noxfile.py",
             "pytest.ini", "Pipfile.lock", "poetry.lock", "uv.lock", "Makefile", "justfile", ".nvmrc",
             "rust-toolchain", ".github/workflows/ci.yml", "docker-compose.yml", "tests/test_a.py", "mvnw",
             ".mvn/wrapper/maven-wrapper.properties", "sub/pyproject.toml", "sub/package.json", "main.go",
             "src/lib.rs", "src/pkg/__init__.py", "tsconfig.json", "README.md", "CONTRIBUTING.md"]
DIRS = "src tests docs .github .github/workflows requirements sub crates lib vendor".split()
WORDS = """project name version dependencies optional-dependencies requires-python build-system requires
build-backend tool poetry setuptools pytest ini_options testpaths addopts hatch envs tox
legacy_tox_ini maturin manifest-path setuptools-rust ext-modules path dependency-groups
include-group scripts packages py-modules pdm dev-dependencies package-mode test extras readme
dynamic devDependencies engines node workspaces exports main module types packageManager build
prepare pretest jest package edition rust-version workspace members features default
build-dependencies openssl-sys source marker markers develop jobs steps run services image env
strategy matrix python-version node-version with uses working-directory on environment ports modules
groupId artifactId""".split()
"""Keys and values the manifests' readers look for: random structures of them reach the readers' branches."""
ODD = ["", " ", "../../../outside", "/etc/passwd", "pytest -x tests", "npm test", "cargo test", "${x}",
       "{env:X}", "%(x)s", "-r ../../x.txt", "pnpm@9", "postgres:15", "\x00", "é\u202e", "a" * 300, "*",
       "**/*", "[", "1.0", ">=3.8", "~", "C:\\x", "\n", "'\"", "file:///etc/passwd", "::"]
HOOKS = ("post-checkout post-merge pre-commit reference-transaction pre-auto-gc post-index-change "
         "fsmonitor-watchman pre-push post-rewrite").split()


@dataclass
class World:
    """The host side of every case: files a repository must not read, change or run."""

    root: Path
    ran: Path
    """Every planted command appends here: it must never exist."""
    evil: Path
    outside: Path
    secret: Path
    host_repo: Path
    host_config: Path
    template: Path
    """A clean git work tree (two commits on main) each git case starts from."""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV)


def _evil_config(evil: Path) -> str:
    return (f'[core]\n\tfsmonitor = {evil}\n\tpager = {evil} pager\n\tsshCommand = {evil} ssh\n'
            f'[filter "x"]\n\tclean = {evil} clean\n\tsmudge = {evil} smudge\n\tprocess = {evil} process\n'
            f'[diff "x"]\n\ttextconv = {evil} textconv\n[uploadpack]\n\tpackObjectsHook = {evil}\n')


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("world")
    ran, evil, outside = root / "ran", root / "evil.sh", root / "outside"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> "{ran}"\ncat\n')
    evil.chmod(0o755)
    (outside / "dir" / "pkg").mkdir(parents=True)
    (outside / "workflows").mkdir()
    secret = outside / "secret.txt"
    secret.write_text(f"{MARKER}\n{MARKER}==1.0\n")
    for name, text in {
        "pyproject.toml": f'[project]\nname = "{MARKER}"\ndependencies = ["{MARKER}"]\n',
        "setup.cfg": f"[metadata]\nname = {MARKER}\n[options]\ninstall_requires = {MARKER}\n",
        "setup.py": f"setup(name='{MARKER}', install_requires=['{MARKER}'])\n",
        "requirements.txt": f"{MARKER}==1.0\n", "requirements-dev.txt": f"{MARKER}\n",
        "tox.ini": f"[testenv]\ndeps = {MARKER}\ncommands = pytest {MARKER}\n",
        "pytest.ini": f"[pytest]\naddopts = -p {MARKER}\ntestpaths = {MARKER}\n",
        "noxfile.py": f"import nox\n@nox.session\ndef tests(s):\n    s.install('{MARKER}')\n",
        "package.json": json.dumps({"name": MARKER, "scripts": {"test": f"jest {MARKER}"},
                                    "devDependencies": {"jest": MARKER}, "engines": {"node": MARKER}}),
        "go.mod": f"module {MARKER}\ngo {MARKER}\nrequire example.com/{MARKER} v1.0.0\n",
        "Cargo.toml": f'[package]\nname = "{MARKER}"\n[dependencies]\n{MARKER} = "1"\n',
        "pom.xml": f"<project><artifactId>{MARKER}</artifactId></project>",
        "ci.yml": f"jobs:\n  t:\n    steps:\n      - run: pytest {MARKER}\n",
        "docker-compose.yml": f"services:\n  db:\n    image: postgres:{MARKER}\n",
        "Makefile": f"test:\n\tpytest {MARKER}\n", "justfile": f"test:\n    pytest {MARKER}\n",
        ".nvmrc": f"{MARKER}\n", "rust-toolchain": f"{MARKER}\n",
        "README.md": f"```\n$ pip install {MARKER}\n```\n",
        "Pipfile.lock": json.dumps({"default": {MARKER: {"version": "==1"}}}),
        "poetry.lock": f'[[package]]\nname = "{MARKER}"\nversion = "1"\n',
        "test_a.py": f"import {MARKER}\n", "test_x.py": f"import {MARKER}\n",
        "__init__.py": f"import {MARKER}\n",
        "main.go": f'package main\nimport "C"\n// #include <{MARKER}.h>\n',
        "lib.rs": f"#[test]\nfn {MARKER}() {{}}\n",
        "pkg/__init__.py": f"import {MARKER}\n"}.items():
        (outside / "dir" / name).write_text(text)
    (outside / "workflows" / "ci.yml").write_text(
        f"jobs:\n  t:\n    services:\n      db:\n        image: {MARKER}\n    steps:\n"
        f"      - run: pip install {MARKER} && pytest {MARKER}\n")
    host_config = outside / "host.config"
    host_config.write_text(_evil_config(evil) + f"[user]\n\tname = {MARKER}\n")
    host_repo = outside / "hostrepo"
    host_repo.mkdir()
    _git(host_repo, "init", "-q", "-b", "main")
    (host_repo / "pyproject.toml").write_text(f'[project]\nname = "{MARKER}"\nversion = "1"\n')
    (host_repo / "test_host.py").write_text(f"def test_{MARKER}():\n    pass\n")
    (host_repo / ".gitattributes").write_text("* filter=x diff=x\n")
    _git(host_repo, "add", "-A")
    _git(host_repo, "commit", "-qm", MARKER)
    with (host_repo / ".git" / "config").open("a") as config:
        config.write(_evil_config(evil))
    _plant_hooks(host_repo / ".git", evil)
    template = root / "template"
    template.mkdir()
    _git(template, "init", "-q", "-b", "main")
    (template / "pyproject.toml").write_text('[project]\nname = "tpl"\nversion = "0.1"\n')
    (template / "tests").mkdir()
    (template / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    _git(template, "add", "-A")
    _git(template, "commit", "-qm", "one")
    (template / "mod.py").write_text("X = 1\n")
    _git(template, "add", "-A")
    _git(template, "commit", "-qm", "two")
    return World(root, ran, evil, outside, secret, host_repo, host_config, template)


def _plant_hooks(git_dir: Path, evil: Path) -> None:
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\n{evil} hook-{hook}\n")
        (hooks / hook).chmod(0o755)


# -- writing into the case's repository, never through a link ---------------------------------------------

def _writable(repo: Path, rel: str) -> Path | None:
    """`repo/rel` when no folder on the way is a link or a non-folder (made as needed), else None."""
    path = repo / rel
    folder = repo
    for part in Path(rel).parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return None
        folder.mkdir(exist_ok=True)
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    return path


def _put(repo: Path, rel: str, data: bytes | str) -> str:
    path = _writable(repo, rel)
    if path is None:
        return f"(skipped {rel})"
    path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return f"{rel}: {len(data)} bytes"


def _link(repo: Path, rel: str, target: str | Path) -> str:
    path = _writable(repo, rel)
    if path is None:
        return f"(skipped {rel})"
    path.symlink_to(target)
    return f"{rel} -> {target}"


# -- random content ----------------------------------------------------------------------------------------

def _leaf(rng: random.Random) -> object:
    return rng.choice([lambda: rng.choice(WORDS), lambda: rng.choice(ODD), lambda: rng.randint(-5, 10**30),
                       lambda: rng.random() * 1e6, lambda: rng.random() < 0.5, lambda: []])()


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        return _leaf(rng)
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(WORDS + ODD[:6]): _value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def _toml_doc(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(0, 6)):
        key, value = rng.choice(WORDS), _value(rng)
        if isinstance(value, dict) and rng.random() < 0.7:
            lines.append(f"[{json.dumps(key)}]")
            lines += [f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()]
        else:
            lines.insert(0, f"{json.dumps(key)} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _lines(rng: random.Random) -> str:
    """Line-oriented garbage in the shape of go.mod, requirements, INI, Makefiles and scripts."""
    templates = ["module {w}", "go {v}", "toolchain go{v}", "require (", ")", "require {w}/{w} v{v}", "[{w}]",
                 "[testenv:{w}]", "{w} = {o}", "  {o}", "-r {o}", "-e {o}", "{w}=={v}", "test:\n\t{o}",
                 "import {w}", "from {w} import {w}", "setup({w}={o!r})", "    - run: {o}", "{w}: [{o}]",
                 "distributionUrl={o}", "#include <{w}.h>", "```\n$ {o}\n```", "{o}"]
    out = []
    for _ in range(rng.randint(0, 12)):
        out.append(rng.choice(templates).format(w=rng.choice(WORDS), o=rng.choice(ODD),
                                                v=rng.choice(["1.21", "0", "x", "99999999999", ""])))
    return "\n".join(out) + rng.choice(["\n", ""])


def _pom(rng: random.Random) -> str:
    tags = ("project modules module dependencies dependency groupId artifactId properties build plugins "
            "plugin maven.compiler.release configuration release parent repositories repository url version "
            "packaging").split()

    def element(depth: int) -> str:
        tag = rng.choice(tags)
        inner = rng.choice(ODD + WORDS[:5]) if depth > 3 or rng.random() < 0.4 else "".join(
            element(depth + 1) for _ in range(rng.randint(0, 3)))
        return f"<{tag}>{inner.replace('<', '').replace('&', '')}</{tag}>"

    laughs = ('<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
              '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>')
    external = '<!DOCTYPE p [<!ENTITY s SYSTEM "file://{secret}">]>'
    head = rng.choice(["", '<?xml version="1.0"?>', external, laughs])
    body = f"<project>{element(1)}{rng.choice(['', '&s;', '&d;'])}</project>"
    return head + body


def _content(rng: random.Random, rel: str, world: World) -> bytes | str:
    kind = rng.choice("bytes empty deep structured structured structured lines truncated bom long".split())
    if kind == "bytes":
        return rng.randbytes(rng.randint(1, 400))
    if kind == "empty":
        return ""
    if kind == "deep":
        opener = rng.choice(["[", "{", "a = [", "- ", "<a>", "(", '{"a":', "-", "not ", "()", "a."])
        return opener * rng.randint(100, 20000)
    if kind == "long":
        return rng.choice(WORDS) * 50_000 + "\n"
    if rel.endswith(".json") or rel == "Pipfile.lock":
        data = _value(rng) if rng.random() < 0.3 else {rng.choice(WORDS): _value(rng) for _ in range(5)}
        text = json.dumps(data)
    elif rel.endswith((".toml", ".lock")):
        text = _toml_doc(rng)
    elif rel.endswith((".yml", ".yaml")):
        odd = "a: &x [*x]\nb: !!python/object:os.system x"  # a list containing itself; a constructor refused
        text = yaml.safe_dump(_value(rng)) if rng.random() < 0.8 else odd
    elif rel.endswith(".xml"):
        text = _pom(rng).replace("{secret}", str(world.secret))
    else:
        text = _lines(rng)
    if kind == "truncated" and text:
        text = text[: rng.randint(0, len(text))] + rng.choice(["", "\x00", "\ud800", "\"", "[[", "\xff"])
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass") + b"\xff\xfe"
    return text


# -- mutations: each plants one hostile thing and says what --------------------------------------------------

def _regular(path: Path) -> bool:
    return stat.S_ISREG(os.lstat(path).st_mode)


def _git_dir(repo: Path) -> Path | None:
    git_dir = repo / ".git"
    return git_dir if git_dir.is_dir() and not git_dir.is_symlink() else None


def m_manifest(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice(MANIFESTS)
    return _put(repo, rel, _content(rng, rel, world))


def m_link_out(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice(MANIFESTS + DIRS)
    same = world.outside / "dir" / Path(rel).name  # a host file of the same kind, the marker in it
    target = rng.choice([world.secret, world.outside / "dir", world.outside / "workflows", world.host_repo,
                         world.host_repo / ".git"] + [same] * (4 if same.exists() else 0))
    if rng.random() < 0.5:  # relative: it leaves the tree from wherever the tree is copied
        target = Path(os.path.relpath(target, (repo / rel).parent))
    return _link(repo, rel, target)


def m_link_odd(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice(MANIFESTS + DIRS)
    choice = rng.choice(["loop", "self", "dangling", "inside", "up"])
    if choice == "loop":
        _link(repo, "loop-b", "loop-a")
        return _link(repo, rel, os.path.relpath(repo / "loop-b", (repo / rel).parent)) + " (loop)"
    target = {"self": Path(rel).name, "dangling": "/nonexistent/" + rel, "inside": "pyproject.toml",
              "up": "../" * rng.randint(1, 8)}[choice]
    return _link(repo, rel, target)


def m_special(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice([*MANIFESTS, "x.py", "tests/conftest.py", "src/m.go", "a.java", ".git/HEAD",
                      ".git/config"])
    path = _writable(repo, rel)
    if path is None:
        return f"(skipped {rel})"
    if rng.random() < 0.6:
        os.mkfifo(path)
        return f"{rel}: FIFO"
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    except OSError:  # a path too long for a socket address
        return f"(skipped socket {rel})"
    return f"{rel}: socket"


def m_huge(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice(MANIFESTS + ["big.py", "tests/test_big.py", "x.go"])
    path = _writable(repo, rel)
    if path is None:
        return f"(skipped {rel})"
    path.write_text("[project]\n")
    os.truncate(path, HUGE)
    return f"{rel}: sparse {HUGE} bytes"


def m_odd_names(rng: random.Random, world: World, repo: Path) -> str:
    name = rng.choice(["-rf.py", "a\nb.py", "ü ñ.toml", "\\x.py", "requirements\x01.txt", " .py", "--help"])
    return _put(repo, name, _lines(rng))


def m_head(rng: random.Random, world: World, repo: Path) -> str:
    if (git_dir := _git_dir(repo)) is None:
        return "(no .git for HEAD)"
    if rng.random() < 0.2:
        (git_dir / "HEAD").unlink(missing_ok=True)
        return ".git/HEAD removed"
    return _put(repo, ".git/HEAD", rng.choice([rng.randbytes(20), b"ref: refs/heads/nope\n",
                                                 b"ref: ../../../outside\n", b"0" * 40 + b"\n", b""]))


def m_objects(rng: random.Random, world: World, repo: Path) -> str:
    if (git_dir := _git_dir(repo)) is None:
        return "(no .git for objects)"
    choice = rng.choice(["remove", "file", "garbage"])
    if choice == "remove":
        shutil.rmtree(git_dir / "objects", ignore_errors=True)
        return ".git/objects removed"
    if choice == "file":
        return _put(repo, ".git/objects", b"not a folder")
    return _put(repo, f".git/objects/{rng.randbytes(1).hex()}/{rng.randbytes(19).hex()}", rng.randbytes(60))


def m_refs(rng: random.Random, world: World, repo: Path) -> str:
    rel = rng.choice([".git/refs/heads/main", ".git/packed-refs", ".git/refs/tags/v1", ".git/refs/heads/x/y"])
    sha = rng.randbytes(20).hex().encode() + b"\n"
    return _put(repo, rel, rng.choice([rng.randbytes(30), sha, b"garbage\n", b"ref: refs/heads/main\n"]))


def m_commondir(rng: random.Random, world: World, repo: Path) -> str:
    target = world.host_repo / ".git"
    text = str(target) if rng.random() < 0.5 else os.path.relpath(target, repo / ".git")
    return _put(repo, ".git/commondir", text + "\n")


def m_gitfile(rng: random.Random, world: World, repo: Path) -> str:
    where = rng.choice([str(world.host_repo / ".git"), os.path.relpath(world.host_repo / ".git", repo),
                        "/nonexistent", str(world.secret), ""])
    return _put(repo, ".git", f"gitdir: {where}\n" if rng.random() < 0.9 else rng.randbytes(40))


def m_alternates(rng: random.Random, world: World, repo: Path) -> str:
    return _put(repo, ".git/objects/info/alternates", f"{world.host_repo / '.git' / 'objects'}\n")


def m_config(rng: random.Random, world: World, repo: Path) -> str:
    git_dir = _git_dir(repo)
    if git_dir is None or (os.path.lexists(git_dir / "config") and not _regular(git_dir / "config")):
        return "(no .git/config)"
    extra = rng.choice([f"[include]\n\tpath = {world.host_config}\n", f"[include]\n\tleak = {world.secret}\n",
                        f"[include]\n\tpath = {world.secret}\n",
                        f'[includeIf "gitdir:/"]\n\tpath = {world.host_config}\n', _evil_config(world.evil),
                        f"[core]\n\thooksPath = {world.host_repo / '.git' / 'hooks'}\n",
                        "[core]\n\tworktree = /\n", "[extensions]\n\tworktreeConfig = true\n", "[bad\n",
                        rng.randbytes(50).decode("latin-1")])
    with (git_dir / "config").open("a", encoding="utf-8", errors="surrogateescape") as config:
        config.write(extra)
    if rng.random() < 0.5:
        _put(repo, ".gitattributes", "* filter=x diff=x\n")
    return f".git/config += {extra[:40]!r}"


def m_git_links(rng: random.Random, world: World, repo: Path) -> str:
    choice = rng.choice([".git", ".git/config", ".git/objects", ".git/refs", ".git/hooks", ".git/index"])
    if choice != ".git" and _git_dir(repo) is None:
        return f"(no .git for {choice})"
    host_git = world.host_repo / ".git"
    target = {".git": host_git, ".git/config": world.host_config,
              ".git/objects": host_git / "objects", ".git/refs": host_git / "refs",
              ".git/hooks": host_git / "hooks", ".git/index": world.secret}[choice]
    return _link(repo, choice, target)


def m_hooks(rng: random.Random, world: World, repo: Path) -> str:
    if _git_dir(repo) is None:
        return "(no .git for hooks)"
    for hook in HOOKS:
        if (path := _writable(repo, f".git/hooks/{hook}")) is None:
            return "(skipped .git/hooks)"
        path.write_text(f"#!/bin/sh\n{world.evil} hook-{hook}\n")
        path.chmod(0o755)
    return ".git/hooks planted"


def m_worktree(rng: random.Random, world: World, repo: Path) -> str:
    _put(repo, ".git/worktrees/w/gitdir", f"{world.host_repo}/.git\n")
    return _put(repo, ".git/worktrees/w/commondir", f"{world.host_repo / '.git'}\n")


MUTATIONS = [m_manifest, m_manifest, m_manifest, m_manifest, m_link_out, m_link_out, m_link_odd, m_special,
             m_special, m_huge, m_odd_names, m_head, m_objects, m_refs, m_commondir, m_gitfile, m_alternates,
             m_config, m_config, m_git_links, m_hooks, m_worktree]


def build_case(rng: random.Random, world: World, repo: Path) -> list[str]:
    """A random hostile repository at `repo`, and what was planted in it."""
    if rng.random() < 0.7:
        shutil.copytree(world.template, repo, symlinks=True)
        done = ["git work tree"]
    else:
        repo.mkdir(parents=True)
        done = ["plain directory"]
    for _ in range(rng.randint(1, 7)):
        mutation = rng.choice(MUTATIONS)
        done.append(f"{mutation.__name__}: {mutation(rng, world, repo)}")
    return done


# -- what must hold ----------------------------------------------------------------------------------------

def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under `root` (links not followed): its lstat and its bytes or link target."""
    found: dict[str, tuple[object, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [".", *dirs, *files]:
            path = Path(folder, name)
            info = os.lstat(path)
            entry: tuple[object, ...] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ino)
            if stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.blake2b()
                with path.open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
                entry += (digest.hexdigest(),)
            found[os.path.normpath(path.relative_to(root))] = entry
    return found


def _changed(before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _stages(source: str, commit: str | None, out: Path, repo: Path, with_plan: bool) -> list[str]:
    """Run the stages as the CLI would; the texts they produced (records, facts, plans, errors)."""
    texts = []
    try:
        record = check_out(source, commit, out)
        texts.append(record.model_dump_json())
    except AutoinstallError as e:
        texts.append(str(e))
        out = None  # type: ignore[assignment]
    for tree in [t for t in (out, repo) if t is not None]:
        facts = survey(tree)
        texts.append(facts.model_dump_json())
        try:
            texts.append(propose(tree, BuildOptions(), facts)[1].model_dump_json())
        except AutoinstallError as e:
            texts.append(str(e))
    if with_plan:
        try:
            texts.append(propose_plan(source, commit=commit).model_dump_json())
        except AutoinstallError as e:
            texts.append(str(e))
    return texts


@pytest.mark.timeout(30)
@pytest.mark.parametrize("seed", [s if s < FAST_CASES else pytest.param(s, marks=pytest.mark.slow)
                                  for s in range(CASES)])
def test_hostile_tree(seed: int, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    repo, work = tmp_path / "src" / "repo", tmp_path / "work"
    planted = build_case(rng, world, repo)
    (work / "tmp").mkdir(parents=True)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # a command run relative to it would leave something here
    monkeypatch.setattr(tempfile, "tempdir", str(work / "tmp"))  # propose_plan's scratch checkout goes here
    monkeypatch.setenv("AUTOINSTALL_HOME", str(work / "home"))
    git_dir = repo / ".git"
    as_git_dir = rng.random() < 0.15 and git_dir.is_dir() and not git_dir.is_symlink()
    source = str(git_dir) if as_git_dir else str(repo)
    commit = rng.choice([None] * 6 + ["HEAD", "main", "HEAD~1", "master", "0" * 40,
                                      f"--upload-pack={world.evil}", "-c", "refs/../../x", "HEAD:../../"])
    case = f"seed {seed}: check_out({source!r}, {commit!r}) of " + "; ".join(planted)
    world_before, source_before = snapshot(world.root), snapshot(repo)

    try:
        texts = _stages(source, commit, work / "out", repo, with_plan=seed % 5 == 0)
    except Exception as e:  # anything but AutoinstallError is a traceback the user would see
        raise AssertionError(f"{type(e).__name__} escaped: {e}\n{case}") from e

    assert not world.ran.exists(), f"a planted command ran: {world.ran.read_text()}\n{case}"
    leaked = [t for t in texts if MARKER in t]
    assert not leaked, f"the host secret reached the output: {leaked[0][:2000]}\n{case}"
    assert not _changed(world_before, snapshot(world.root)), f"host files changed\n{case}"
    changed = _changed(source_before, snapshot(repo))
    assert not changed, f"the source changed: {changed[:10]}\n{case}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "src", "work"], f"written outside\n{case}"
    assert not any((tmp_path / "cwd").iterdir()), f"written in the current directory\n{case}"


@pytest.mark.slow
def test_the_fuzzer_plants_every_kind_of_hostile_input(world: World, tmp_path: Path) -> None:
    """The seeds cover what the fuzz test promises (a guard against a generator that stopped planting)."""
    seen: set[str] = set()
    for seed in range(CASES):
        planted = build_case(random.Random(seed), world, tmp_path / str(seed))
        seen.update(p.split(":")[0] for p in planted if "(skipped" not in p and "(no " not in p)
        seen.update(k for p in planted for k in ("FIFO", "socket", "sparse", "(loop)", "/nonexistent")
                    if k in p)
        shutil.rmtree(tmp_path / str(seed))
    assert {m.__name__ for m in MUTATIONS} <= seen
    assert {"FIFO", "socket", "sparse", "(loop)", "/nonexistent"} <= seen
