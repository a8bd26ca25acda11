"""The `go` test runner (`go test -json` events -> per-test results), Go's cache env, and base images with
extra Debian packages threaded through the factories. Fast: no Docker, no Go."""
from __future__ import annotations

import subprocess
from pathlib import Path

from envs import baseimage
from envs.base import ExecResult
from envs.docker.container import DockerSandboxConfig, container_env
from envs.docker.factory import DockerFactory
from envs.docker.trust import IMAGE_SETUP
from envs.fake import FakeSandbox
from envs.spec import Deselection
from envs.testrun import abilities, collect_count, count, go_test_command, parse_go_test_json, run_tests

EVENTS = (Path(__file__).parent / "data" / "go_test_events.jsonl").read_text()
"""Captured from `go test -json -count=1 ./...` (go1.26) on a module with a passing test, a test whose
subtests pass and fail, a skipped test, a package that does not compile and one without tests."""


def test_go_events_become_per_test_results_with_subtests_skips_and_build_failures() -> None:
    results = parse_go_test_json(EVENTS)
    assert [(r.test_id, r.outcome) for r in results] == [
        ("example.com/gj/a::TestOK", "passed"),
        ("example.com/gj/a::TestSub", "failed"),
        ("example.com/gj/a::TestSub/one_two", "passed"),
        ("example.com/gj/a::TestSub/bad", "failed"),
        ("example.com/gj/a::TestSkip", "skipped"),
        ("example.com/gj/b", "error"),
    ]
    by_id = {r.test_id: r for r in results}
    assert by_id["example.com/gj/a::TestSub/bad"].message.startswith("a_test.go:8: boom\n        second line")
    assert "needs a GPU" in by_id["example.com/gj/a::TestSkip"].message
    assert "undefined: undefinedThing" in by_id["example.com/gj/b"].message
    assert by_id["example.com/gj/a::TestOK"].message == ""


def test_a_test_that_never_ends_and_a_package_that_dies_are_errors() -> None:
    events = "\n".join([
        '{"Action":"run","Package":"m/p","Test":"TestHang"}',
        '{"Action":"output","Package":"m/p","Test":"TestHang","Output":"panic: test timed out after 1s\\n"}',
        '{"Action":"output","Package":"m/q","Output":"panic: init failed\\n"}',
        '{"Action":"fail","Package":"m/q","Elapsed":0.1}',
        "not json at all", "{broken",
    ])
    results = parse_go_test_json(events)
    assert [(r.test_id, r.outcome) for r in results] == [("m/p::TestHang", "error"), ("m/q", "error")]
    assert "timed out" in results[0].message and "init failed" in results[1].message


def test_go_command_gets_json_and_the_deselections() -> None:
    command = "go test -json -count=1 -vet=off ./..."
    assert go_test_command(command, []) == command
    assert go_test_command("cd sub && go test ./...", []) == "cd sub && go test -json ./..."
    deselected = [Deselection(test="m/p::TestA/sub", reason="r"), Deselection(test="m/p::TestB", reason="r"),
                  Deselection(test="m/db", reason="r")]
    assert go_test_command(command, deselected) == (
        "go test -skip='^(TestA|TestB)$' -json -count=1 -vet=off $(go list ./... | grep -vxF -e m/db)")


def test_run_tests_with_the_go_runner_reads_stdout_events() -> None:
    failing = ExecResult(exit_code=1, stdout=EVENTS, stderr="exit status 1")
    box = FakeSandbox(rules=[("go test", failing)]).start()
    run = run_tests(box, "go test -json ./...", "go", [], 60)
    assert run.counts == count(run.results) == {"passed": 2, "failed": 2, "error": 1, "skipped": 1}
    assert run.collection_ok and "FAIL\texample.com/gj/b [build failed]" in run.output_tail
    nothing = FakeSandbox(rules=[("go test", ExecResult(exit_code=1, stderr="go: no Go files"))]).start()
    assert not run_tests(nothing, "go test -json ./...", "go", [], 60).collection_ok


def test_a_selection_runs_the_named_top_level_tests_in_their_packages_only(tmp_path: Path) -> None:
    """The selecting command as bash runs it (a `go` that prints its arguments): one -run regex of the
    top-level names (subtests run whole), `./...` narrowed to the selected packages, the rest kept."""
    ids = tmp_path / "select.txt"
    ids.write_text("example.com/m/a::TestOne\nexample.com/m/a::TestSub/case_1\nexample.com/m/b::TestTwo\n")
    command = abilities("go").select.command("go test -json -count=1 ./... -vet=off", str(ids), "/unused")  # type: ignore[union-attr]
    shown = subprocess.run(["bash", "-c", f"go() {{ printf '%s\\n' \"$@\"; }}; {command}"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert shown == ["test", "-run", "^(TestOne|TestSub|TestTwo)$", "-json", "-count=1", "example.com/m/a",
                     "example.com/m/b", "-vet=off"]
    assert "./..." not in abilities("go").select.command("go test .", str(ids), "/unused")  # type: ignore[union-attr]


def test_go_modules_live_under_cache_and_reach_the_image_with_the_build_cache() -> None:
    layered = container_env(DockerSandboxConfig(image="x", cache_dir=Path("/tmp/c"), ca_bundle=None))
    assert "GOCACHE" not in layered and "GOMODCACHE" not in layered  # the image's own build cache
    assert layered["GOPROXY"].startswith("file:///cache/go/mod/cache/download,https://proxy.golang.org")
    shared = container_env(DockerSandboxConfig(image="x", cache_dir=Path("/tmp/c"), ca_bundle=None,
                                               cache_mode="shared"))
    assert shared["GOMODCACHE"] == "/cache/go/mod" and "GOPROXY" not in shared
    assert "GOCACHE" not in container_env(DockerSandboxConfig(image="x", ca_bundle=None))


def test_an_ecosystems_packages_are_a_layer_on_the_plain_base_image(tmp_path: Path) -> None:
    """What every image shares (interpreter, headers, compilers, uv) is built once; golang-go goes on top."""
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    plain = baseimage._recipes("3.13", "http://a/debian", ca, registry=False)[0][0]
    tag, dockerfile = baseimage.packages_recipe(plain, "3.13", ("golang-go",))
    assert tag.startswith("autoinstall-base:py3.13-golang-go-") and f"\nFROM {plain}\n" in dockerfile
    assert "apt-get install -y --no-install-recommends golang-go " in dockerfile and IMAGE_SETUP in dockerfile
    assert baseimage.packages_recipe(plain, "3.13", ("golang-go", "golang-go")) == (tag, dockerfile)
    other = baseimage._recipes("3.13", "http://b/debian", ca, registry=False)[0][0]
    assert baseimage.packages_recipe(other, "3.13", ("golang-go",))[0] != tag  # another plain image under it


def test_packages_reach_the_base_images_callable() -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    def images(*, python: str, log: object = None, packages: tuple[str, ...] = ()) -> str:
        seen.append((python, packages))
        return "tag"

    assert DockerFactory(base_images=images).base_image("3.13", packages=("golang-go",)) == "tag"
    assert DockerFactory(base_images=images).base_image("3.11") == "tag"
    assert seen == [("3.13", ("golang-go",)), ("3.11", ())]


def test_go_collection_counts_listed_tests_less_the_deselected() -> None:
    listed = "\n".join(
        f'{{"Action":"output","Package":"m/{pkg}","Output":"{name}\\n"}}'
        for pkg, name in [("a", "TestA"), ("a", "TestB"), ("a", "ExampleA"), ("db", "TestQuery"),
                          ("b", "TestB")])
    listed += '\n{"Action":"output","Package":"m/a","Output":"ok  \\tm/a\\t0.01s\\n"}'
    box = FakeSandbox(rules=[("go test -list", listed)]).start()
    command = "go test -json -count=1 -vet=off ./..."
    assert collect_count(box, command, [], 60, runner="go") == (5, "")
    assert box.commands()[-1] == "go test -list '^(Test|Example|Fuzz)' -json -count=1 -vet=off ./..."
    deselected = [Deselection(test="m/a::TestB/sub", reason="r"), Deselection(test="m/db", reason="r")]
    assert collect_count(box, command, deselected, 60, runner="go") == (2, "")
    failing = ExecResult(exit_code=1, stderr="go: cannot find main module")
    broken = FakeSandbox(rules=[("go test -list", failing)])
    count_, note = collect_count(broken.start(), command, [], 60, runner="go")
    assert count_ is None and "cannot find main module" in note


def test_debians_go_in_a_real_sandbox_gives_per_test_results(docker_engine: None, tmp_path: Path) -> None:
    """The base image with golang-go (trixie: Go 1.24), and its `go test -json` read by the go runner."""
    from envs.baseimage import ensure_base_image  # builds images: only where Docker answers
    from envs.docker import DockerSandbox
    from tests.envs.conftest import RUN_LABEL

    image = ensure_base_image(python="3.13", packages=("golang-go",))
    module = tmp_path / "m"
    for name, text in {"go.mod": "module m\n\ngo 1.22\n",
                       "a/a_test.go": 'package a\n\nimport "testing"\n\nfunc TestOK(t *testing.T) {}\n'
                                      'func TestSub(t *testing.T) { t.Run("x y", func(t *testing.T) {}) }\n'
                                      'func TestSkip(t *testing.T) { t.Skip("later") }\n',
                       "b/b.go": "package b\n\nvar V = undefinedThing\n",
                       "b/b_test.go": "package b\n"}.items():
        (module / name).parent.mkdir(parents=True, exist_ok=True)
        (module / name).write_text(text)
    with DockerSandbox(image=image, labels=RUN_LABEL) as box:
        box.put(module, box.workdir)
        assert box.exec("go version").stdout.startswith("go version go1.24")
        run = run_tests(box, "go test -json -count=1 -vet=off ./...", "go", [], 300)
        assert collect_count(box, "go test -json -count=1 -vet=off ./...", [], 300, runner="go") == (3, "")
    assert sorted((r.test_id, r.outcome) for r in run.results) == [
        ("m/a::TestOK", "passed"), ("m/a::TestSkip", "skipped"), ("m/a::TestSub", "passed"),
        ("m/a::TestSub/x_y", "passed"), ("m/b", "error")]
    assert run.collection_ok and run.exit_code == 1
    assert "undefined: undefinedThing" in next(r.message for r in run.results if r.test_id == "m/b")
