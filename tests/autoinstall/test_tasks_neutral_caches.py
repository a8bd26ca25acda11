"""A runner's neutral caches (RunnerAbilities.neutral_caches) in the validation containers' exactness check: left
out of the changed files and of the listing, of nothing else; asked once per run; never for a validation that
changed a file those caches are not keyed by. Go's: the build cache and telemetry, with no test result kept."""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoinstall.tasks import containers
from autoinstall.tasks.containers import Containers, neutral_caches, unchanged
from autoinstall.tasks.workspace import Suite
from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.testrun import abilities
from envs.testrun.go_runner import NO_RESULT_CACHE, content_keyed
from envs.testrun.go_runner import neutral_caches as go_caches
from tests.autoinstall.test_tasks_throughput import CacheWritingFactory

GO = Suite(command="go test -json -count=1 -vet=off ./...", runner="go", env={"GOTOOLCHAIN": "local"})


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalSandbox]:
    """A checkout under git in a scratch "filesystem" the check walks instead of / and /tmp, beside a build
    cache holding one entry and a folder of other files."""
    root = tmp_path / "fs"
    root.mkdir()
    monkeypatch.setattr(containers, "ROOTS", str(root))
    with LocalSandbox(root=root) as sandbox:
        sandbox.write_file("a.go", b"package a\n")
        assert sandbox.exec("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x",
                            timeout=60).ok
        outside = Path(sandbox.workdir).parent
        (outside / "cache" / "go-build" / "00").mkdir(parents=True)
        (outside / "cache" / "go-build" / "00" / "old-d").write_text("entry")
        (outside / "etc").mkdir()
        (outside / "etc" / "conf").write_text("kept")
        yield sandbox


def after(box: LocalSandbox, tmp_path: Path, change: str, neutral: tuple[str, ...]) -> bool:
    """A lease's shape on the scratch filesystem: listed and marked, `change` run, then checked."""
    listing = box.exec(containers._listing(neutral), timeout=60).stdout
    state = containers._state(box)
    mark = tmp_path / f"mark-{time.monotonic_ns()}"  # outside the walk, as the harness's scratch is
    mark.touch()
    time.sleep(0.05)  # past the file system's clock tick: a change made now is newer
    assert box.exec(change, timeout=60).ok
    return unchanged(box, str(mark), listing, ["a.go"], state, neutral)


@pytest.mark.parametrize(("change", "reused"), [
    ("echo x > ../cache/go-build/00/new-d", True),              # an entry the go command added
    ("echo y > ../cache/go-build/00/old-d", True),              # an entry rewritten (same paths)
    ("rm ../cache/go-build/00/old-d", True),                    # trimmed
    ("mkdir ../cache/go-build/01 && echo x > ../cache/go-build/01/a", True),
    ("printf 'package a\\n' > a.go", True),                     # the candidate's file, given back
    ("echo x > ../etc/conf", False),                             # a file elsewhere
    ("echo x > ../cache/other", False),                          # beside the cache, not in it
    ("mkdir ../cache/go-build-2 && echo x > ../cache/go-build-2/a", False),  # a folder sharing its prefix
    ("echo x > b.go", False),                                    # the workspace: git's status sees it
    ("mkdir -p .cache && echo x > .cache/a", False),
])
def test_the_check_leaves_out_the_neutral_cache_and_nothing_else(box: LocalSandbox, tmp_path: Path, change: str,
                                                                  reused: bool) -> None:
    cache = str(Path(box.workdir).parent / "cache" / "go-build")
    assert after(box, tmp_path, change, (cache,)) is reused, change


def test_without_a_neutral_cache_a_write_to_the_build_cache_is_a_change(box: LocalSandbox, tmp_path: Path) -> None:
    assert not after(box, tmp_path, "echo x > ../cache/go-build/00/new-d", ())
    assert after(box, tmp_path, "true", ())


class GoFactory(CacheWritingFactory):
    """Fake validation containers of a Go suite: `go env` names the caches, and every container comes back with
    the same paths and nothing changed outside them."""

    def __init__(self, caches: str = "/root/.cache/go-build\n/root/.config/go/telemetry\n") -> None:
        super().__init__(changed="")
        self.caches = caches
        self.asked: list[tuple[str, dict[str, str]]] = []

    def answer(self, box: FakeSandbox, command: str, env: dict[str, str]) -> ExecResult | None:
        if "go env" in command:
            self.asked.append((command, env))
            return ExecResult(exit_code=0, stdout=self.caches)
        return super().answer(box, command, env)

    def walks(self) -> list[str]:
        return [c for box in self.boxes for c in box.commands() if "md5sum" in c]


def validations(pool: Containers, *files: list[str]) -> None:
    for changed in files:
        with pool.lease(changed) as (_box, restored):
            restored()


def test_go_validations_reuse_a_container_whose_only_changes_are_its_caches() -> None:
    factory = GoFactory()
    pool = Containers(factory, "image", GO)  # type: ignore[arg-type]
    validations(pool, ["a.go"], ["sub/b.go", "go.mod"], ["a.go"])
    pool.close()
    assert (pool.started, pool.reused, pool.unchecked) == (1, 2, 0)
    assert factory.asked == [("cd /workspace && go env GOCACHE GOTELEMETRYDIR", {"GOTOOLCHAIN": "local"})]
    walks = factory.walks()
    assert walks and all("-path '/root/.cache/go-build' -o -path '/root/.config/go/telemetry'" in w for w in walks)


def test_a_validation_that_changed_a_file_the_cache_does_not_hash_gives_no_container_back() -> None:
    """A C header cgo includes from another folder is not in the build cache's keys: the container that compiled
    against its bug state is stopped unwalked, and the next validation starts a fresh one."""
    factory = GoFactory()
    pool = Containers(factory, "image", GO)  # type: ignore[arg-type]
    validations(pool, ["a.go"], ["include/x.h", "a.go"], ["a.go"])
    pool.close()
    assert (pool.started, pool.reused, pool.unchecked) == (2, 1, 1)
    assert [sum("md5sum" in c for c in box.commands()) for box in factory.boxes] == [2, 2]  # none for the .h
    assert len(factory.asked) == 1


@pytest.mark.parametrize("suite", [
    Suite(command="python -m pytest", runner="pytest"),
    Suite(command="GOFLAGS=-mod=mod go test -json ./...", runner="go"),  # its own GOFLAGS: results may be cached
    Suite(command="go test -json -fuzz=FuzzX -fuzztime=5s ./a", runner="go"),  # the fuzz corpus is in GOCACHE
])
def test_no_cache_is_neutral_where_the_runner_cannot_say_so(suite: Suite) -> None:
    factory = GoFactory()
    pool = Containers(factory, "image", suite)  # type: ignore[arg-type]
    validations(pool, ["a.go"])
    pool.close()
    assert factory.asked == []
    assert "go-build" not in factory.walks()[0]


def test_only_plain_absolute_folders_outside_the_workspace_and_the_scratch_are_neutral() -> None:
    said = "\n".join(["/", "/workspace", "/workspace/.cache", "/root/.cache/*", "relative", "/root/../etc",
                      "/var/tmp/autoinstall-tmp", "/root/a b", "/root/'x", "", "/root/.cache/go-build"])
    box = FakeSandbox(rules=[("go env", ExecResult(exit_code=0, stdout=said))]).start()
    assert neutral_caches(box, GO) == ("/root/.cache/go-build",)
    failing = FakeSandbox(rules=[("go env", ExecResult(exit_code=1, stdout="/root/.cache/go-build"))]).start()
    assert neutral_caches(failing, GO) == ()
    assert neutral_caches(box, None) == ()


def test_go_names_its_caches_and_the_files_they_are_keyed_by() -> None:
    go = abilities("go")
    assert go.neutral_caches is go_caches and go.content_keyed is content_keyed
    assert go_caches("go test -json -count=1 ./...") == "go env GOCACHE GOTELEMETRYDIR"
    assert [content_keyed(p) for p in ["a.go", "x/y_test.go", "go.mod", "sub/go.sum", "go.work"]] == [True] * 5
    assert not any(content_keyed(p) for p in ["x/a.h", "x/a.c", "notgo.mod", "data.json", "lib.a", "a.s"])
    assert all(abilities(r).neutral_caches is None for r in ["pytest", "cargo", "maven", "unittest"])
    assert all(abilities(r).reset_caches is None for r in ["pytest", "cargo", "maven", "unittest", "go"])


@pytest.mark.parametrize(("before", "after"), [(None, "-count=1"), ("-mod=vendor", "-mod=vendor -count=1")])
def test_every_go_command_of_a_run_keeps_no_test_result(before: str | None, after: str) -> None:
    """The runner's export reaches every `go` of the command's shell (a script's too), after its GOFLAGS."""
    env = {"PATH": "/usr/bin:/bin", **({"GOFLAGS": before} if before else {})}
    shown = subprocess.run(["bash", "-c", f'{NO_RESULT_CACHE} && bash -c \'echo "$GOFLAGS"\''], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert shown == after
    box = FakeSandbox(rules=[("go test", ExecResult(exit_code=0, stdout=""))]).start()
    abilities("go").run(box, "go test -json ./...", [], 60, None)
    assert box.commands()[-1].startswith(NO_RESULT_CACHE + " && go test -json")


def test_node_names_npm_s_logs_as_neutral_and_vitest_s_results_as_put_back(tmp_path: Path) -> None:
    """npm says where its cache is (the logs under it unless logs-dir is set); vitest's results cache is in the
    folder the command runs in; npm's logs go stale by no file of the checkout."""
    node = abilities("node")
    npm = tmp_path / "npm"
    npm.write_text('#!/bin/sh\ncase "$3" in cache) echo /root/.npm;; logs-dir) echo "${LOGS:-null}";; esac\n')
    npm.chmod(0o755)
    command = node.neutral_caches("npm test") if node.neutral_caches else ""
    for logs, said in [(None, "/root/.npm/_logs"), ("/var/log/npm", "/var/log/npm")]:
        env = {"PATH": f"{tmp_path}:/usr/bin:/bin", **({"LOGS": logs} if logs else {})}
        shown = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, check=True)
        assert shown.stdout.split() == [said, "/root/.npm/_update-notifier-last-checked"]
    assert node.content_keyed("src/a.h") and node.content_keyed("package.json")
    reset = node.reset_caches("npm test -- --reporter=verbose") if node.reset_caches else ""
    shown = subprocess.run(["bash", "-c", f"cd {tmp_path} && {reset}"], capture_output=True, text=True, check=True)
    assert shown.stdout.split() == [f"{tmp_path}/node_modules/.vite/vitest", f"{tmp_path}/node_modules/.vitest"]
    assert "$PWD/packages/a/node_modules" in (node.reset_caches or str)("cd packages/a && npm test")


def test_what_the_walk_leaves_out_is_what_a_listed_change_leaves_out() -> None:
    left_out = containers._left_out(("/root/.npm/_logs",))
    assert [left_out(p) for p in ["/proc/1", "/var/tmp/autoinstall-lease-1", "/var/tmp/autoinstall", "/tmp/a",
                                  "/root/.npm/_logs", "/root/.npm/_logs/x.log", "/etc/hosts"]] == [True] * 7
    assert not any(left_out(p) for p in ["/root/.npm", "/root/.npm/_logs2", "/var/tmp/.autoinstall-resolv.conf",
                                         "/tmpfile", "/workspace/proc", "/var/tmp/x"])


def test_a_reset_cache_is_put_back_and_left_out_while_a_change_beside_it_is_seen(box: LocalSandbox,
                                                                                  tmp_path: Path) -> None:
    """A cache a run rewrote (or made, or removed) is put back as it was kept; what is beside it is a change."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(containers, "SCRATCH", str(tmp_path / "scratch"))
    try:
        results = Path(box.workdir) / "node_modules" / ".vite" / "vitest"
        results.mkdir(parents=True)
        (results / "results.json").write_text("image")
        assert box.exec("git add -A && git -c user.name=t -c user.email=t@t commit -qm cache", timeout=60).ok
        absent = str(Path(box.workdir) / "node_modules" / ".vitest")
        reset = (str(results), absent)
        assert box.exec(containers._save(reset).removeprefix(" && "), timeout=60).ok
        for change, reused in [("echo run > node_modules/.vite/vitest/results.json", True),
                               ("rm -r node_modules/.vite/vitest", True),
                               ("mkdir -p node_modules/.vitest && echo x > node_modules/.vitest/r", True),
                               ("echo x > node_modules/.vite/other", False)]:
            listing = box.exec(containers._listing(reset), timeout=60).stdout
            state = containers._state(box)
            mark = tmp_path / f"mark-{time.monotonic_ns()}"
            mark.touch()
            time.sleep(0.05)
            assert box.exec(change, timeout=60).ok
            assert unchanged(box, str(mark), listing, ["a.go"], state, (), reset) is reused, change
            assert (results / "results.json").read_text() == "image" and not Path(absent).exists()
    finally:
        monkeypatch.undo()
