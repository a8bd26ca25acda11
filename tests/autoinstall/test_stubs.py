import subprocess
import sys
import zipfile
from io import BytesIO
from pathlib import Path

from autoinstall.ecosystems.python.pins import constraints_from_freeze
from autoinstall.ecosystems.python.stubs import build_stub_wheel, files_importing, stub_version
from autoinstall.record.dockerfile import render_dockerfile
from envs.spec import Step


def test_stub_version_satisfies_what_the_resolver_asked() -> None:
    out = "and demo==0.1 depends on nonexistent-dep-xyz>=1.5,<2, we can conclude"
    assert stub_version("nonexistent-dep-xyz", out) == "1.5"
    assert stub_version("foo", "depends on foo<1") == "0.1.0"
    assert stub_version("foo", "no constraint mentioned") == "1.0.0"


def test_stub_wheel_installs_and_imports_with_uv(tmp_path: Path) -> None:
    name, data = build_stub_wheel("nonexistent-dep-xyz", "nonexistent_dep_xyz", "1.5")
    assert name == "nonexistent_dep_xyz-1.5-py3-none-any.whl"
    assert "nonexistent_dep_xyz-1.5.dist-info/RECORD" in zipfile.ZipFile(BytesIO(data)).namelist()
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / name).write_bytes(data)
    venv = tmp_path / "venv"
    subprocess.run(["uv", "venv", "-q", str(venv)], check=True)
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "--offline",
                    "--find-links", str(tmp_path / "links"), "nonexistent-dep-xyz>=1.0"], check=True)
    python = str(venv / "bin" / "python")
    imports = "import nonexistent_dep_xyz as m; from nonexistent_dep_xyz import Client; assert m.AUTOINSTALL_STUB"
    subprocess.run([python, "-c", imports], check=True)  # importing works: modules that import it load
    for use in ("Client()", "Client.connect(1)", "bool(Client)", "class X(Client): pass", "Client.level = 3"):
        done = subprocess.run([python, "-c", f"from nonexistent_dep_xyz import Client\n{use}"], capture_output=True,
                              text=True)
        assert done.returncode == 1, use
        assert "AutoinstallStubError: nonexistent-dep-xyz (stubbed by autoinstall" in done.stderr, done.stderr


def test_files_importing_finds_import_and_from_forms() -> None:
    files = {"tests/test_a.py": "import os\nimport dep_x\n", "tests/test_b.py": "from dep_x.sub import y\n",
             "tests/test_c.py": "import dep_xy\n# import dep_x in a comment? no: not at line start\n"}
    assert files_importing(files, "dep_x") == ["tests/test_a.py", "tests/test_b.py"]


def test_constraints_drop_editables_paths_and_the_project() -> None:
    freeze = "-e file:///workspace\nattrs==24.2.0\nDemo_Pkg==0.1\nlocal @ file:///x\npytest==8.3.0\n"
    assert constraints_from_freeze(freeze, "demo-pkg") == "attrs==24.2.0\npytest==8.3.0\n"


def test_dockerfile_replays_steps_in_order_with_env() -> None:
    text = render_dockerfile(base_image="base:1", steps=[Step(command="uv pip install -e '.[test]'", why="a"),
                                                         Step(command='echo "x"', why="b")],
                             env={"B": "2", "A": 'q"uote'}, name="demo", commit="abc", source="/src")
    lines = text.splitlines()
    assert lines[2] == "FROM base:1"
    runs = [ln for ln in lines if ln.startswith("RUN")]
    assert runs == ['RUN ["bash", "-c", "uv pip install -e \'.[test]\'"]', 'RUN ["bash", "-c", "echo \\"x\\""]']
    assert lines.index('ENV A="q\\"uote"') < lines.index('ENV B="2"') < lines.index(runs[0])
    assert sys.version_info >= (3, 11)
