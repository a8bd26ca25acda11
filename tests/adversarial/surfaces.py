"""The adversarial suite's parts, shared with bench/reward_integrity.py: one task per language made from the
fixture repositories the way users make them (build, `tasks make`), and the three surfaces that grade an
agent's work, each played as that surface's own client plays it:

- the runtime: `Environment.reset(task)`, the script through the terminal tool, `reward()`;
- Harbor: the task exported with `--format harbor --tasks --start-image prebuilt` (the gold patch's copy
  without it: built from environment/), the script as solution/solve.sh, `harbor run` with the oracle agent
  over a dataset of such copies;
- SWE-bench: the task's row from `--format swebench --tasks`, the script's `git diff` in a start-state
  container as the prediction, swebench's own `run_evaluation`.

A play is ("gold" | "nop" | a cheat's name, its script); every surface returns play -> reward (1.0 / 0.0).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.tasks import MakeOptions, TaskStore, make_tasks
from envs.catalog import Catalog
from envs.export import ExportManifest, ExportOptions, run_export
from envs.runtime import Environment, RuntimeSpec
from envs.task import Task
from tests.adversarial import cheats

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
FIXTURES = {"python": "tasks_mutable", "go": "go_module", "rust": "rust_crate", "java": "java_maven",
            "node": "node_package"}
GOLD, NOP = "gold", "nop"
GOLD_IN_CONTAINER = "/tmp/autoinstall-cheat-gold.patch"
HARBOR_ENV = {"HARBOR_TELEMETRY": "0"}
"""Set for every `harbor` the tests run: at a job's end Harbor's telemetry imports litellm, which fetches its
price list (and retries where nothing answers): 11 s and 7 CPU seconds of every run."""


@dataclass
class LanguageTask:
    language: str
    catalog: Catalog
    task: Task

    @property
    def src(self) -> str:
        """The product file the gold patch changes."""
        first = next(ln for ln in self.task.gold_patch.splitlines() if ln.startswith("+++ "))
        return first[4:].split("/", 1)[1]

    def script(self, body: str, gold_path: str) -> str:
        """A play's bash: the prelude's variables for the first failing test that is a function (a doc test is
        a block of SRC's documentation, not a test file's function), then the play."""
        fail = next((t for t in self.task.FAIL_TO_PASS if "-doc::" not in t), self.task.FAIL_TO_PASS[0])
        return cheats.prelude(self.language, fail, self.src, gold_path) + body

    def plays(self, *, harbor: bool = False, diff: bool = False) -> dict[str, str]:
        """gold, nop and every cheat of the language (those a surface plays), by name -> script body."""
        found = {GOLD: 'git apply --whitespace=nowarn "$GOLD"\n', NOP: "true\n"}
        found.update({c.name: c.script for c in cheats.for_language(self.language, harbor=harbor, diff=diff)})
        return found


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)


def make_language_task(language: str, root: Path) -> LanguageTask:
    """Build the language's fixture repository into a verified environment and make one mutation task of it
    (AUTOINSTALL_HOME is the caller's: its caches make the builds fast)."""
    repo = root / "repo"
    shutil.copytree(REPOS / FIXTURES[language], repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first version")
    spec = build_environment(str(repo), BuildOptions(out_dir=root / "env"))
    assert spec.status == "verified", spec.failure
    catalog = Catalog(root / "catalog")
    env_id = catalog.upsert_spec(spec, root / "env").id
    report = make_tasks(env_id, docker_factory(), catalog=catalog, store=TaskStore(root / "tasks"),
                        options=MakeOptions(max_tasks=1, kinds=("mutation",)))
    assert report.tasks, (report.candidates, report.dropped)
    assert report.tasks[0].grading is not None
    return LanguageTask(language, catalog, report.tasks[0])


def export(lt: LanguageTask, options: ExportOptions, work: Path) -> ExportManifest:
    """`run_export` of the language's task: the export reads tasks from $AUTOINSTALL_HOME/tasks, so it runs
    with a home of its own under `work` holding this task (the user's home and its task store are untouched)."""
    home = work / f"home-{lt.language}"
    (home / "tasks").mkdir(parents=True, exist_ok=True)
    (home / "tasks" / f"{lt.task.env_id}.jsonl").write_text(lt.task.model_dump_json() + "\n")
    before = os.environ.get("AUTOINSTALL_HOME")
    os.environ["AUTOINSTALL_HOME"] = str(home)
    try:
        return run_export(lt.catalog, options)
    finally:
        if before is None:
            os.environ.pop("AUTOINSTALL_HOME", None)
        else:
            os.environ["AUTOINSTALL_HOME"] = before


# --- the runtime ---------------------------------------------------------------------------------------------

def runtime_rewards(lt: LanguageTask, plays: dict[str, str], naive: dict[str, float] | None = None,
                    timings: dict[str, list[float]] | None = None, control: set[str] | None = None,
                    environments: int = 2) -> dict[str, float]:
    """Each play as tool calls in a fresh episode of the task, then `reward()`, the plays shared out among
    `environments` Environments of the task that run side by side (as a trainer's rollouts do; each resets in
    place between its plays). With `naive` (where the runner selects tests by id in the agent's container),
    also what scoring the same tests in the agent's own container would have paid, play -> value: the control
    that shows a cheat works where nothing stops it. With `timings`, appends each grading's seconds to
    timings["grade_s"] and, after the gold patch, one plain run of the task's test command in the agent's
    container to timings["run_s"]. With `control`, the control scores only the plays it names."""
    rewards: dict[str, float] = {}
    selected = [*lt.task.FAIL_TO_PASS, *lt.task.PASS_TO_PASS]

    def play_all(names: list[str]) -> None:
        with Environment(RuntimeSpec.from_task(lt.task)) as env:
            for name in names:
                env.reset(lt.task)
                gold = f"cat > {GOLD_IN_CONTAINER} <<'GOLD_EOF'\n{lt.task.gold_patch}\nGOLD_EOF\n"
                obs = env.step("terminal", {"command": gold + lt.script(plays[name], GOLD_IN_CONTAINER),
                                            "timeout_s": 300})
                assert not obs.is_error or name not in (GOLD, NOP), obs.output
                reward = env.reward()
                rewards[name] = reward.value
                if timings is not None:
                    timings.setdefault("grade_s", []).append(reward.grade_s)
                    if name == GOLD:
                        started = time.monotonic()
                        env.step("terminal", {"command": lt.task.test_command, "timeout_s": 1800})
                        timings.setdefault("run_s", []).append(time.monotonic() - started)
                if naive is not None and (control is None or name in control):
                    try:
                        naive[name] = 1.0 if env.reward(tests=selected).value == 1.0 else 0.0
                    except ValueError:  # the runner selects no test by id in the agent's container
                        pass

    names = list(plays)
    shares = [names[i::environments] for i in range(max(1, min(environments, len(names))))]
    with ThreadPoolExecutor(len(shares)) as pool:
        for done in [pool.submit(play_all, share) for share in shares]:
            done.result()
    return {name: rewards[name] for name in names}


# --- Harbor --------------------------------------------------------------------------------------------------

def harbor_rewards(harbor: str, lts: list[LanguageTask], work: Path, *, every_cheat: bool = False,
                   concurrency: int = 4, dispose: Callable[[list[str]], None] | None = None,
                   ) -> dict[tuple[str, str], float]:
    """One `harbor run` of the oracle over a dataset holding, for every task and play (the cheats marked for
    Harbor, or all of them), a copy of the exported task whose solve.sh is the play: (language, play) -> the
    verifier's reward. Exported with a prebuilt start image (no build in each trial's two environments), but
    for the gold patch's copy, which Harbor builds from environment/ as a task exported without one is built.
    The start images go to `dispose` at the end (see `swebench_resolved`). `concurrency` trials run side by
    side: a trial mostly waits on the engine (two environments started and removed, some 30 docker commands)."""
    dataset = work / "dataset"
    dataset.mkdir(parents=True)
    names: dict[str, tuple[str, str]] = {}
    images: list[str] = []
    for lt in lts:
        out = work / f"export-{lt.language}"
        manifest = export(lt, ExportOptions(out=out, format="harbor", tasks=True, verifier_network="public",
                                            start_image="prebuilt"), work)
        images += [a.image for a in manifest.images if a.context]
        exported = out / lt.task.instance_id
        for i, (play, body) in enumerate(lt.plays(harbor=not every_cheat).items()):
            name = f"{lt.language}-{i:02d}"
            shutil.copytree(exported, dataset / name)
            solve = dataset / name / "solution" / "solve.sh"
            solve.write_text(f"#!/bin/bash\ncd {shlex.quote(lt.task.grading.workdir)}\n"  # type: ignore[union-attr]
                             + lt.script(body, "/solution/gold.patch"))
            if play == GOLD:
                toml = dataset / name / "task.toml"
                lines = toml.read_text().splitlines(keepends=True)
                toml.write_text("".join(ln for ln in lines if not ln.startswith("docker_image = ")))
                assert len(lines) == len(toml.read_text().splitlines()) + 1, "no docker_image in the export"
            names[name] = (lt.language, play)
    try:
        done = subprocess.run([harbor, "run", "-p", str(dataset), "-a", "oracle", "-e", "docker", "-o",
                               str(work / "jobs"), "--job-name", "cheats", "-q", "-n", str(concurrency)],
                              capture_output=True, text=True, timeout=3600, check=False,
                              env={**os.environ, **HARBOR_ENV})
    finally:
        (dispose or _remove_now)(images)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rewards: dict[tuple[str, str], float] = {}
    for trial in (work / "jobs" / "cheats").iterdir():
        result_file = trial / "result.json"
        if not result_file.is_file():
            continue
        result = json.loads(result_file.read_text())
        task_name = trial.name.split("__")[0]  # the copy's folder (every copy keeps the task's own name)
        assert result["exception_info"] is None, (task_name, result["exception_info"])
        rewards[names[task_name]] = float(result["verifier_result"]["rewards"]["reward"])
    assert len(rewards) == len(names), sorted(set(names.values()) - set(rewards))
    return rewards


def _remove_now(images: list[str]) -> None:
    from envs.docker import remove_image  # local: the engine only for a run that evaluates

    for image in images:
        remove_image(image)


# --- SWE-bench -----------------------------------------------------------------------------------------------

def predicted_patch(image: str, lt: LanguageTask, body: str) -> str:
    """The `git diff` a play leaves in a container of the task's start image (what an agent submits)."""
    script = lt.script(body, GOLD_IN_CONTAINER) + "git add -A >/dev/null 2>&1; git diff --cached --binary HEAD"
    gold = shlex.quote(lt.task.gold_patch)
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "bash", "-c",
                           f"printf '%s' {gold} > {GOLD_IN_CONTAINER}; ( {script} ) 2>/dev/null | "
                           "sed -n '/^diff --git/,$p'"],
                          capture_output=True, text=True, timeout=600, check=False)
    return done.stdout


NOTHING = ("diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n"
           "@@ -0,0 +1 @@\n+nothing fixed\n")
"""The no-change play's prediction (swebench refuses an empty patch): a note, no change to the code."""


def swebench_resolved(python: str, lts: list[LanguageTask], work: Path, *, every_cheat: bool = False,
                      workers: int = 4, dispose: Callable[[list[str]], None] | None = None,
                      ) -> dict[tuple[str, str], float]:
    """swebench's `run_evaluation` over copies of each task's row, one per play (the cheats marked for Harbor,
    or every one a diff can hold): (language, play) -> 1.0 when the instance is resolved; `workers` instances
    (and cheats' diffs, each made in a start-state container) at a time. The exported images
    go to `dispose` at the end (default: removed at once; a run whose tasks other tests grade at the same
    time defers it: tests/builds.py `remove_at_end`)."""
    rows, predictions, names, images = [], [], {}, []
    for lt in lts:
        out = work / f"export-{lt.language}"
        manifest = export(lt, ExportOptions(out=out, format="swebench", tasks=True), work)
        images += [a.image for a in manifest.images]
        (row,) = [r for ln in (out / "swebench.jsonl").read_text().splitlines()
                  if (r := json.loads(ln))["instance_id"] == lt.task.instance_id]
        plays = lt.plays(harbor=not every_cheat, diff=True)
        cheating = [play for play in plays if play not in (GOLD, NOP)]
        with ThreadPoolExecutor(workers) as pool:  # each in a container of its own
            diffs = dict(zip(cheating, pool.map(lambda play: predicted_patch(row["image"], lt, plays[play]),
                                                cheating), strict=True))
        for i, play in enumerate(plays):
            iid = f"{row['instance_id']}__play{i:02d}"
            patch = row["patch"] if play == GOLD else NOTHING if play == NOP else diffs[play]
            assert patch.strip(), f"the cheat {play!r} changed nothing in the {lt.language} task"
            rows.append({**row, "instance_id": iid})
            predictions.append({"instance_id": iid, "model_patch": patch, "model_name_or_path": "cheats"})
            names[iid] = (lt.language, play)
    (work / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    try:
        done = subprocess.run([python, "-m", "swebench.harness.run_evaluation", "-d", str(work / "rows.jsonl"),
                               "-p", str(work / "preds.jsonl"), "-id", "cheats", "--max_workers", str(workers),
                               "--report_dir", str(work / "reports")],
                              cwd=work, capture_output=True, text=True, timeout=3600, check=False)
    finally:
        (dispose or _remove_now)(images)
    resolved: dict[tuple[str, str], float] = {}
    for iid, key in names.items():
        report = work / "logs" / "run_evaluation" / "cheats" / "cheats" / iid / "report.json"
        assert report.is_file(), (iid, done.stdout[-2000:], done.stderr[-2000:])
        resolved[key] = 1.0 if json.loads(report.read_text())[iid]["resolved"] else 0.0
    return resolved
