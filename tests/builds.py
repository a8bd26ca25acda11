"""Builds shared by the whole test run: each fixture environment (and each task made of one) is built once per
run, by whichever test asks first, in whichever module and xdist worker; the others wait on its file lock and
read what it left.

Everything lives under the run's directory (the pytest base temp of the controller, which each xdist worker's
own base temp sits in): `builds/<key>/` per build, and `builds/home`, the one AUTOINSTALL_HOME of every shared
build (its caches are the run's: fresh each run, as on a clean clone). A build that raised is not tried again:
each test that asks for it fails with the first one's error. The task images are removed once the run ends
(`remove_images`, called by the controller).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.tasks import MakeOptions, MakeReport, TaskStore, make_tasks
from envs.catalog import Catalog
from envs.spec import EnvSpec
from tests.adversarial.surfaces import FIXTURES

REPOS = Path(__file__).parent / "fixtures" / "repos"
MATCHER_FIXTURE = "node_jest"
"""The fixture tests/adversarial/test_matcher_cheat.py makes its task of (jest's expect and its matchers)."""
DOCTEST_FIXTURE = "python_doctests"
"""The fixture tests/adversarial/test_doc_test_cheat.py makes its Python task of (tests that are all doctests)."""
SELECTING_FIXTURES = ("node_jest", "node_vitest")
"""The fixtures tests/autoinstall/test_tasks_node_select.py makes tasks of (jest's and vitest's selection)."""
TASKED = frozenset(FIXTURES.values()) | {MATCHER_FIXTURE, DOCTEST_FIXTURE, *SELECTING_FIXTURES}
"""Fixtures the run makes tasks of (the cheating agents' languages; the matcher, doc-test and selection tests'):
their `env()` is their task build's environment (a one-commit copy of the same files): one build serves both."""
T = TypeVar("T")


@dataclass
class BuiltEnv:
    """A fixture repository built: its spec, its output folder and the catalog holding it."""

    spec: EnvSpec
    out: Path
    catalog_root: Path
    env_id: str

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.catalog_root)


@dataclass
class BuiltTask:
    """A fixture repository committed as a one-commit git repository (as a user's would be), built, and
    `tasks make` run on it for at most `max_tasks` tasks of `kinds`."""

    env: BuiltEnv
    report: MakeReport
    images: list[str] = field(default_factory=list)


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory of this run that every xdist worker shares (a worker's base temp is inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)


class Builds:
    """The run's shared builds (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root / "builds"
        self.home = self.root / "home"

    def env(self, name: str, **options: Any) -> BuiltEnv:
        """tests/fixtures/repos/NAME built with BuildOptions(**options) (its expected.json's, usually); a TASKED
        fixture without options is its task build's environment."""
        if name in TASKED and not options:
            return self.task(name).env
        key = f"env-{name}" + (f"-{_digest(options)}" if options else "")
        return self._once(key, lambda work: self._build(REPOS / name, work, options))

    def task(self, name: str, *, max_tasks: int = 1, kinds: tuple[str, ...] = ("mutation",)) -> BuiltTask:
        """tests/fixtures/repos/NAME as a one-commit git repository, built, and its tasks made."""
        key = f"task-{name}-{max_tasks}-{'-'.join(kinds)}"

        def make(work: Path) -> BuiltTask:
            repo = work / "repo"
            shutil.copytree(REPOS / name, repo)
            git(repo, "init", "-q", "-b", "main")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "first version")
            env = self._build(repo, work, {})
            with self._home():
                report = make_tasks(env.env_id, docker_factory(), catalog=env.catalog,
                                    store=TaskStore(work / "tasks"),
                                    options=MakeOptions(max_tasks=max_tasks, kinds=kinds))
            return BuiltTask(env, report, [t.image for t in report.tasks])

        return self._once(key, make)

    def made(self, key: str, make: Callable[[Path], T]) -> T:
        """What `make(work)` returns (picklable; its `images`, if any, removed when the run ends), made once per
        run with the run's AUTOINSTALL_HOME, for a module whose tests should not wait on one worker."""

        def in_home(work: Path) -> T:
            with self._home():
                return make(work)

        return self._once(key, in_home)

    def remove_at_end(self, images: list[str]) -> None:
        """Leave `images` for `remove_images`: a task's start image is one per task and machine, so a test on
        another worker may be grading in it (the runtime, Harbor) while this one is done with it."""
        deferred = self.root / "deferred-images"
        deferred.mkdir(parents=True, exist_ok=True)
        (deferred / f"{os.getpid()}-{len(list(deferred.iterdir()))}.json").write_text(json.dumps(images))

    def remove_images(self) -> None:
        """Remove the images of the tasks made this run and those left by `remove_at_end` (once every test is
        done)."""
        from envs.docker import remove_image  # local: only runs that made tasks need the engine here

        for result in self.root.glob("*/result.pickle"):
            for image in getattr(pickle.loads(result.read_bytes()), "images", []):
                remove_image(image)
        for deferred in self.root.glob("deferred-images/*.json"):
            for image in json.loads(deferred.read_text()):
                remove_image(image)

    def _build(self, repo: Path, work: Path, options: dict[str, Any]) -> BuiltEnv:
        with self._home():
            spec = build_environment(str(repo), BuildOptions(out_dir=work / "env", **options))
        catalog = Catalog(work / "catalog")
        env_id = catalog.upsert_spec(spec, work / "env").id
        return BuiltEnv(spec, work / "env", catalog.root, env_id)

    @contextmanager
    def _home(self) -> Iterator[None]:
        """AUTOINSTALL_HOME is the shared home meanwhile. Builds in threads of one process: the caller sets
        it around them all (the environment is the process's), and each build then leaves it as it is."""
        if os.environ.get("AUTOINSTALL_HOME") == str(self.home):
            yield
            return
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("AUTOINSTALL_HOME", str(self.home))
            yield

    def _once(self, key: str, make: Callable[[Path], T]) -> T:
        folder = self.root / key
        folder.mkdir(parents=True, exist_ok=True)
        result, error = folder / "result.pickle", folder / "error.txt"
        with (folder / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # held while the first asker builds; released if its worker dies
            if error.is_file():
                pytest.fail(f"the shared build {key} failed in an earlier test:\n{error.read_text()}",
                            pytrace=False)
            if not result.is_file():
                work = folder / "work"
                shutil.rmtree(work, ignore_errors=True)  # what a worker killed mid-build left
                work.mkdir()
                try:
                    made = make(work)
                except Exception:
                    error.write_text(traceback.format_exc())
                    raise
                result.write_bytes(pickle.dumps(made))
            return pickle.loads(result.read_bytes())


def _digest(options: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:10]
