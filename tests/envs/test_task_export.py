"""`export --tasks` without Docker: the task store, and what each format writes for a task (Harbor task files,
SWE-bench row keys and eval script, verl rows, tools and reward function, JSON lines), no host path anywhere,
verification counts in every format's metadata. The real clients run them in test_task_clients.py."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.commands.export import export_cmd
from envs.catalog import Catalog
from envs.export import ExportError, ExportOptions, read_manifest, run_export
from envs.export.common import repo_name
from envs.export.swebench_tasks import END, START, eval_script, row
from envs.export.tasks import TaskEntry, read_tasks, select_tasks
from envs.export.verl_tasks import AGENT_LOOP, REWARD_FILE, RUN_TESTS
from envs.spec import SourceRecord
from envs.task import StatementCheck, Statements, Task, TaskFilter
from tests.envs.conftest import parquet
from tests.envs.task_env import F2P, P2P, STATEMENT, store

IMAGE = "autoinstall-env/calc:abababababab"
COUNTS = {"status": "verified", "deselections": 1, "passed": 2, "failed": 0, "errors": 0, "skipped": 0, "flaky": 0,
          "stubs": 0, "threshold": 0.9, "max_deselected": 0.05}  # the suite was not counted: no collected/selected


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(tmp_path / "catalog")


@pytest.fixture
def stored(home: Path, catalog: Catalog, tmp_path: Path) -> tuple[str, Task]:
    return store(home, catalog, IMAGE, tmp_path / "envs" / "calc")


def export(catalog: Catalog, out: Path, fmt: str, **options: object) -> Path:
    manifest = run_export(catalog, ExportOptions(out=out, format=fmt, tasks=True, **options))  # type: ignore[arg-type]
    assert read_manifest(out) == manifest and manifest.tasks == ["example-org__calc-mutation-0001"]
    assert list(manifest.verification.values()) == [COUNTS]
    return out


def no_host_paths(out: Path, tmp_path: Path) -> None:
    for f in out.rglob("*"):
        if f.is_file() and f.suffix != ".parquet":
            assert str(tmp_path) not in f.read_text(), f


def test_the_store_reads_tasks_and_says_how_to_make_them(home: Path, catalog: Catalog, stored: tuple[str, Task],
                                                         tmp_path: Path) -> None:
    env_id, task = stored
    assert read_tasks(env_id) == [task] and read_tasks("nope") == []
    from envs.export.common import select_entries

    entries = select_entries(catalog, ExportOptions(out=tmp_path, format="jsonl"))
    assert [te.task for te in select_tasks(entries)] == [task]
    (home / "tasks" / f"{env_id}.jsonl").write_text(task.model_dump_json() + "\n{\"instance_id\": 1}\n")
    with pytest.raises(ExportError, match=f"{env_id}.jsonl:2 is not a task.*autoinstall tasks {env_id}"):
        read_tasks(env_id)
    (home / "tasks" / f"{env_id}.jsonl").unlink()
    with pytest.raises(ExportError, match="No tasks to export.*autoinstall tasks ENV_ID"):
        export(catalog, tmp_path / "out", "harbor")
    assert not (tmp_path / "out").exists()


def test_harbor_task_has_a_goal_the_bug_and_the_gold_patch(catalog: Catalog, stored: tuple[str, Task],
                                                            tmp_path: Path) -> None:
    _, task = stored
    out = export(catalog, tmp_path / "out", "harbor")
    root = out / "example-org__calc-mutation-0001"
    instruction = (root / "instruction.md").read_text()
    assert STATEMENT in instruction and "example-org/calc" in instruction and "test_sub" not in instruction
    config = tomllib.loads((root / "task.toml").read_text())
    assert config["agent"]["user"] == "agent" and config["verifier"]["network_mode"] == "no-network"
    (artifact,) = config["artifacts"]  # the agent's workdir, without dependencies, build output or .git
    assert config["verifier"]["environment_mode"] == "separate" and artifact["source"] == "/workspace"
    assert {".git", "node_modules", "__pycache__"} <= set(artifact["exclude"])
    assert config["environment"]["cpus"] > 0 and config["environment"]["memory_mb"] > 0
    assert "docker_image" not in config["environment"]  # Harbor builds the bug state from environment/
    assert config["metadata"]["verification"] == COUNTS and config["metadata"]["fail_to_pass"] == 1
    dockerfile = (root / "environment" / "Dockerfile").read_text()
    assert f"FROM {IMAGE}" in dockerfile and "git apply" in dockerfile and "useradd -M -d /root -s /bin/bash agent" in dockerfile
    assert "cp -a /workspace /opt/autoinstall/task/start" in dockerfile  # the pristine start the grader compares with
    assert "ENV PYTHONDONTWRITEBYTECODE=1" in dockerfile  # the agent's runs leave no .pyc the verifier would take
    assert (root / "environment" / "bug.patch").read_text() == task.bug_patch
    assert (root / "solution" / "gold.patch").read_text() == task.gold_patch
    assert "git apply" in (root / "solution" / "solve.sh").read_text()
    policy = json.loads((root / "environment" / "grader" / "policy.json").read_text())
    assert policy["selected"] == [*F2P, *P2P] and "**/conftest.py" in policy["protected"]
    assert "--ignore=tests/test_gone.py" in policy["command"] and policy["parser"] == "junit"
    assert (root / "environment" / "grader" / "autoinstall_grader" / "grade.py").is_file()
    test_sh = (root / "tests" / "test.sh").read_text()
    assert "/opt/autoinstall/grader/grade --agent /workspace --in-place --out /logs/verifier" in test_sh
    assert sorted(p.name for p in (root / "tests").iterdir()) == ["test.sh"]  # nothing the grading reads is here
    no_host_paths(out, tmp_path)
    public = export(catalog, tmp_path / "out2", "harbor", verifier_network="public", agent_user=None)
    config = tomllib.loads((public / "example-org__calc-mutation-0001" / "task.toml").read_text())
    assert config["verifier"]["network_mode"] == "public" and "user" not in config["agent"]


def test_a_prebuilt_harbor_export_builds_the_start_image_and_names_it(
        catalog: Catalog, stored: tuple[str, Task], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import envs.docker

    built: list[tuple[str, str]] = []
    monkeypatch.setattr(envs.docker, "build_image", lambda context, tag, **_: built.append(
        ((context / "Dockerfile").read_text(), tag)))
    monkeypatch.setattr(envs.docker, "image_labels", lambda tag: {"built": "1"} if any(
        t == tag for _, t in built) else None)
    out = export(catalog, tmp_path / "out", "harbor", start_image="prebuilt")
    root = out / "example-org__calc-mutation-0001"
    ((dockerfile, tag),) = built  # the start image, from the same context environment/ holds
    assert dockerfile == (root / "environment" / "Dockerfile").read_text() and tag.startswith("autoinstall-task/")
    assert tomllib.loads((root / "task.toml").read_text())["environment"]["docker_image"] == tag
    manifest = read_manifest(out)
    assert [(a.image, a.context) for a in manifest.images] == [
        (IMAGE, None), (tag, "harbor-images/example-org__calc-mutation-0001")]
    no_host_paths(out, tmp_path)
    export(catalog, tmp_path / "again", "harbor", start_image="prebuilt")
    assert len(built) == 1  # the engine has it under its tag, which names everything it is built from


def test_swebench_row_has_the_harness_keys(catalog: Catalog, stored: tuple[str, Task], tmp_path: Path) -> None:
    from envs.export.common import select_entries

    (entry,) = select_entries(catalog, ExportOptions(out=tmp_path, format="swebench"))
    te = TaskEntry(entry, stored[1])
    data = row(te, "autoinstall-task/x:1").model_dump()
    keys = {"instance_id", "image", "repo", "version", "FAIL_TO_PASS", "PASS_TO_PASS", "log_parser", "eval_type",
            "eval_script", "patch", "test_patch", "problem_statement", "base_commit", "created_at"}
    assert keys <= set(data) and data["repo"] == "example-org/calc" and data["patch"] == stored[1].gold_patch
    assert data["log_parser"] == "parse_log_pytest_v2" and data["eval_type"] == "pass_and_fail"
    assert data["verification"] == COUNTS
    script = eval_script(te)
    assert script.index(START) < script.index("/opt/autoinstall/grader/grade --agent /testbed") < script.index(END)
    assert "--source patch" in script and "--swebench" in script and "cd /testbed" in script
    old = TaskEntry(entry, stored[1].model_copy(update={"grading": None}))  # a task made before grading
    from envs.export.swebench_tasks import check_runners

    with pytest.raises(ExportError, match="no grading record.*autoinstall tasks make"):
        check_runners([old])


def test_verl_rows_name_the_tool_agent_loop_and_ship_the_reward(catalog: Catalog, stored: tuple[str, Task],
                                                                tmp_path: Path) -> None:
    pq = parquet()
    import yaml

    out = export(catalog, tmp_path / "out", "verl")
    (data,) = pq.read_table(out / "verl.parquet").to_pylist()
    assert data["agent_name"] == AGENT_LOOP and data["extra_info"]["verification"] == COUNTS
    assert STATEMENT in data["prompt"][1]["content"] and RUN_TESTS in data["prompt"][1]["content"]
    create = data["extra_info"]["tools_kwargs"][RUN_TESTS]["create_kwargs"]
    assert Task.model_validate_json(create["task"]) == stored[1] and create["deselected"] == ["tests/test_gone.py"]
    tools = yaml.safe_load((out / "tools.yaml").read_text())["tools"]
    assert RUN_TESTS in [t["config"]["tool"] for t in tools]
    score = [sys.executable, "-c", "import json, sys; sys.path.insert(0, sys.argv[1]); import autoinstall_reward as r;"
             "print(json.dumps([r.compute_score('autoinstall_task', '', '{}', {'tool_rewards': x})['score']"
             " for x in ([], [0.0], [0.0, 1.0], [1.0, 0.0])]))", str(out)]
    assert json.loads(subprocess.run(score, check=True, capture_output=True, text=True).stdout) == [0.0, 0.0, 1.0, 0.0]
    assert (out / REWARD_FILE).is_file()


def test_jsonl_and_the_cli(catalog: Catalog, stored: tuple[str, Task], tmp_path: Path) -> None:
    out = export(catalog, tmp_path / "out", "jsonl")
    (line,) = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert line.pop("verification") == COUNTS and Task.model_validate(line) == stored[1]
    app = typer.Typer()
    app.command("export")(export_cmd)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "cli"), "--format", "harbor", "--tasks",
                                      "--catalog", str(catalog.root), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tasks"] == ["example-org__calc-mutation-0001"]


def test_the_export_selects_tasks_by_kind_difficulty_and_statement_style(
        home: Path, catalog: Catalog, stored: tuple[str, Task], tmp_path: Path) -> None:
    env_id, task = stored
    styled = task.model_copy(update={
        "instance_id": "example-org__calc-combined-0002", "kind": "combined", "difficulty": "hard",
        "problem_statements": Statements(tests=STATEMENT, issue="sub() is off: sub(5, 3) gives 8.", terse="sub broke"),
        "statement_checks": [StatementCheck(style=s, passed=True) for s in ("tests", "issue", "terse")]})
    (home / "tasks" / f"{env_id}.jsonl").write_text(task.model_dump_json() + "\n" + styled.model_dump_json() + "\n")
    chosen = TaskFilter(kinds=["combined"], difficulties=["hard"], statement="issue")
    manifest = run_export(catalog, ExportOptions(out=tmp_path / "h", format="harbor", tasks=True,
                                                 task_filter=chosen))
    assert manifest.tasks == [styled.instance_id]
    folder = tmp_path / "h" / "example-org__calc-combined-0002"
    assert "sub() is off: sub(5, 3) gives 8." in (folder / "instruction.md").read_text()
    assert STATEMENT not in (folder / "instruction.md").read_text()
    config = tomllib.loads((folder / "task.toml").read_text())
    assert config["metadata"]["task_kind"] == "combined" and config["metadata"]["difficulty"] == "hard"
    with pytest.raises(ExportError, match="None of the 2 stored tasks matches .*difficulties"):
        run_export(catalog, ExportOptions(out=tmp_path / "none", format="jsonl", tasks=True,
                                          task_filter=TaskFilter(difficulties=["easy"])))
    app = typer.Typer()
    app.command("export")(export_cmd)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "cli"), "--format", "jsonl", "--tasks",
                                      "--kind", "combined", "--statement", "terse", "--catalog", str(catalog.root)])
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in (tmp_path / "cli" / "tasks.jsonl").read_text().splitlines()]
    assert (line["kind"], line["problem_statement"]) == ("combined", "sub broke")
    refused = CliRunner().invoke(app, ["export", "--out", str(tmp_path / "x"), "--format", "jsonl", "--kind",
                                       "combined", "--catalog", str(catalog.root)])
    assert refused.exit_code == 2 and "add --tasks" in refused.output


@pytest.mark.parametrize(("repo", "name"), [
    ("https://github.com/pallets/flask.git", "pallets/flask"), ("git@github.com:a/b.git", "a/b"),
    ("/work/.mirror/psf+requests/repo", "psf/requests"), ("/home/me/src/calc", "calc"),
    ("https://example.org/calc.git", "https://example.org/calc.git")])
def test_repo_is_owner_name_or_url_never_a_path(repo: str, name: str) -> None:
    assert repo_name(SourceRecord(repo=repo, name="calc")) == name
