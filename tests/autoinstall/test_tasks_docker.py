"""End to end on Docker: a small fixture repository with history -> verified environment -> validated
history, mutation and combined tasks, whose FAIL_TO_PASS / PASS_TO_PASS (and, combined, each part's fix
alone) are checked again in a fresh container; the combined task's reward pays the gold patch only."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.tasks import MakeOptions, MakeReport, TaskStore, make_tasks
from autoinstall.tasks.workspace import Suite, apply_patch, outcomes
from envs.catalog import Catalog
from envs.spec import EnvSpec
from envs.task import Task
from tests.builds import Builds

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "tasks_mutable"
BUGGY_CLAMP = "    if value > high:\n        return high\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


def repo_with_history(dest: Path) -> Path:
    """The fixture as a git repository whose last commit fixed `clamp` (the history task to mirror)."""
    shutil.copytree(FIXTURE, dest)
    source = dest / "ranges" / "__init__.py"
    fixed = source.read_text()
    source.write_text(fixed.replace(BUGGY_CLAMP, ""))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "ranges: first version")
    source.write_text(fixed)
    git(dest, "commit", "-q", "-am", "clamp: values above the range were returned unchanged")
    return dest


def check_in_fresh_container(task: Task, suite: Suite) -> None:
    with docker_factory().sandbox(task.image, network=False) as sandbox:
        assert apply_patch(sandbox, task.bug_patch)
        seen = outcomes(suite.run(sandbox, timeout_s=300))
        assert all(seen[t] in ("failed", "error") for t in task.FAIL_TO_PASS), seen
        assert all(seen[t] == "passed" for t in task.PASS_TO_PASS), seen
        for part in task.parts:  # each part's fix alone leaves some of the task's tests failing
            assert apply_patch(sandbox, part.gold_patch)
            seen = outcomes(suite.run(sandbox, timeout_s=300))
            assert any(seen[t] in ("failed", "error") for t in task.FAIL_TO_PASS), (part.files, seen)
            assert apply_patch(sandbox, part.gold_patch, reverse=True)
        assert apply_patch(sandbox, task.gold_patch)
        seen = outcomes(suite.run(sandbox, timeout_s=300))
        assert all(seen[t] == "passed" for t in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]), seen


@dataclass
class Made:
    spec: EnvSpec
    catalog_root: Path
    report: MakeReport
    store_root: Path
    images: list[str]
    """The tasks' images, removed when the run ends (tests/builds.py `remove_images`)."""

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.catalog_root)

    @property
    def store(self) -> TaskStore:
        return TaskStore(self.store_root)


def make(work: Path) -> Made:
    """The fixture with history, built, and four tasks made of it (a history, mutations, a combined)."""
    repo = repo_with_history(work / "repo")
    spec = build_environment(str(repo), BuildOptions(out_dir=work / "env"))
    assert spec.status == "verified", spec.failure
    catalog = Catalog(work / "catalog")
    env_id = catalog.upsert_spec(spec, work / "env").id
    store = TaskStore(work / "tasks")
    report = make_tasks(env_id, docker_factory(), catalog=catalog, store=store,
                        options=MakeOptions(max_tasks=4, max_history=1, combined_every=1))
    return Made(spec, catalog.root, report, store.root, [t.image for t in report.tasks])


@pytest.fixture(scope="module")
def made(builds: Builds) -> Made:
    """Made once per run, whichever worker asks first (tests/builds.py), so this module's tests run side by
    side on the run's workers."""
    return builds.made("tasks-with-history", make)


def test_history_mutation_and_combined_tasks_from_a_fixture(made: Made) -> None:
    report, spec = made.report, made.spec
    kinds = [t.kind for t in report.tasks]
    assert sorted(set(kinds)) == ["combined", "history", "mutation"], (kinds, report.dropped)
    assert len(kinds) == 4 and report.containers["reused"] >= 1, report.containers  # left as found: reused
    assert made.store.read(report.tasks[0].env_id) == sorted(report.tasks, key=lambda t: t.instance_id)
    funnel = report.history
    assert (funnel.looked_at, funnel.code, funnel.candidates, funnel.validated) == (2, 1, 1, 1), funnel
    assert funnel.searched == funnel.failing == 1
    history = next(t for t in report.tasks if t.kind == "history")
    assert history.FAIL_TO_PASS == ["tests/test_ranges.py::test_clamp_high"]
    assert "values above the range" in history.problem_statement
    assert BUGGY_CLAMP.strip().splitlines()[0] not in history.problem_statement
    combined = next(t for t in report.tasks if t.kind == "combined")
    assert len(combined.parts) >= 2 and combined.features is not None and combined.features.parts >= 2
    assert sorted(combined.FAIL_TO_PASS) == sorted({t for p in combined.parts for t in p.FAIL_TO_PASS})
    assert len({p.mutation.function if p.mutation else "history" for p in combined.parts}) == len(combined.parts)
    suite = Suite.from_spec(spec)
    assert suite is not None
    for task in report.tasks:
        assert task.validation.valid and task.validation.runs == 2
        assert task.repo == "repo" and task.base_commit == spec.source.commit
        assert set(task.FAIL_TO_PASS).isdisjoint(task.PASS_TO_PASS)
        assert [(c.style, c.passed) for c in task.statement_checks] == [("tests", True), ("issue", True),
                                                                        ("terse", True)]
        assert task.difficulty in ("easy", "medium", "hard") and task.features is not None
        assert not any(t in task.problem_statements.issue for t in task.FAIL_TO_PASS)
        check_in_fresh_container(task, suite)


def test_the_runtime_pays_a_combined_tasks_gold_patch_only(made: Made) -> None:
    """The reward-integrity plays (tests/adversarial) on the combined task, on the runtime surface: the gold
    patch earns 1.0; no change and every Python cheat earn 0.0."""
    from tests.adversarial.surfaces import GOLD, LanguageTask, runtime_rewards

    combined = next(t for t in made.report.tasks if t.kind == "combined")
    lt = LanguageTask("python", made.catalog, combined)
    rewards = runtime_rewards(lt, lt.plays())
    assert rewards.pop(GOLD) == 1.0
    assert len(rewards) > 10 and set(rewards.values()) == {0.0}, rewards



def test_the_runtime_grades_again_after_its_start_image_was_removed(made: Made) -> None:
    """A task's start image this process built and remembers, removed behind its back (a cleanup, an export
    of the same task finishing on another worker): the next grading builds it again instead of failing."""
    from envs.docker import remove_image
    from envs.runtime.docker_backend import start_image
    from tests.adversarial.surfaces import GOLD, LanguageTask, runtime_rewards

    # not the combined task, whose start image the runtime and Harbor tests may be grading in on other workers
    task = next(t for t in made.report.tasks if t.kind != "combined")
    remove_image(start_image(task))  # built now and remembered as built, then gone
    lt = LanguageTask("python", made.catalog, task)
    assert runtime_rewards(lt, {GOLD: lt.plays()[GOLD]}) == {GOLD: 1.0}

@pytest.mark.slow
def test_harbor_pays_a_combined_tasks_gold_patch_only(made: Made, tmp_path: Path) -> None:
    """The same in Harbor (`harbor run`, the oracle agent over copies of the exported task, one per play)."""
    from tests.adversarial.surfaces import GOLD, LanguageTask, harbor_rewards
    from tests.envs.test_harbor import harbor_executable

    combined = next(t for t in made.report.tasks if t.kind == "combined")
    rewards = harbor_rewards(harbor_executable(), [LanguageTask("python", made.catalog, combined)], tmp_path)
    assert rewards.pop(("python", GOLD)) == 1.0
    assert rewards and set(rewards.values()) == {0.0}, rewards
