"""A local and a Docker sandbox holding a small polyglot workspace, each with one ToolSession (over the
direct channel's socket in Docker)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from envs.base import Sandbox
from tools import ToolSession

FILES: dict[str, str] = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "import os\n\nLIMIT = 10\n\n\nclass Greeter:\n    greeting = 'hello'\n\n"
        "    def greet(self, name):\n        return f'{self.greeting} {name}'\n\n\n"
        "def helper(x):\n    value = x + 1  # needle\n    return value  # needle\n"
    ),
    "pkg/bad.py": "def f():\n    return undefined_thing + 1\n",
    "pkg/script.sh": "#!/bin/sh\necho one\n",
    "web/app.js": "function render(a) {\n  return a + 1;\n}\nconst LIMIT = 3;\n",
    "web/types.ts": "export interface Shape { w: number }\nexport class Box {}\n",
    "go/main.go": "package main\n\ntype Server struct{}\n\nfunc Serve() {}\n",
    "rs/lib.rs": "pub struct Parser;\npub enum Token { A }\npub fn parse() {}\n",
    "jv/Registry.java": (
        "package jv;\npublic class Registry {\n    static final int MAX_SIZE = 8;\n"
        "    public Registry() {}\n\n    public void register(String name) {}\n\n"
        "    interface Listener {}\n    record Entry(String name) {}\n}\n"
    ),
    "node_modules/dep/index.js": "// needle\nfunction render() {}\n",
    "README.md": "# demo\nneedle in the readme\n",
}


def _populate(sb: Sandbox) -> None:
    for path, text in FILES.items():
        sb.write_file(path, text.encode())
    sb.write_file("data.bin", bytes(range(256)) * 4 + b"needle")
    r = sb.exec("ln -s / rootlink && ln -s /etc/passwd passwdlink && ln -s pkg/core.py corelink "
                "&& chmod 755 pkg/script.sh")
    assert r.ok, r.output


def _sandbox(request: pytest.FixtureRequest, kind: str) -> Sandbox:
    if kind == "local":
        from envs.local import LocalSandbox

        return LocalSandbox()
    from envs.docker import DockerSandbox

    return DockerSandbox(image=request.getfixturevalue("base_image"), channel=True)


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A started sandbox (local or Docker) with the fixture workspace in it."""
    with _sandbox(request, request.param) as sb:
        _populate(sb)
        yield sb


@pytest.fixture(scope="module")
def session(sandbox: Sandbox) -> Iterator[ToolSession]:
    with ToolSession(sandbox) as s:
        yield s
