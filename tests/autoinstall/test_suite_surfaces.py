"""Issue 9 on the command line: the suite's counts on every surface a user reads (the final summary of `run`,
`catalog list`, `catalog show` and their --json), and the threshold and cap as shares, with a clear error for
anything else (`--max-deselected 150`, `--threshold 2`)."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import typer
from pydantic import ValidationError
from rich.console import Console
from typer.testing import CliRunner

from autoinstall.commands.batch import batch_cmd
from autoinstall.commands.catalog import catalog_app
from autoinstall.commands.progress import print_summary
from autoinstall.commands.run import run_cmd
from autoinstall.options import BuildOptions
from envs.spec import Collection, Deselection, EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from tests.autoinstall.test_commands import capture


def app() -> typer.Typer:
    cli = typer.Typer()
    cli.command("run")(run_cmd)
    cli.command("batch")(batch_cmd)
    cli.add_typer(catalog_app, name="catalog")
    return cli


def plain(text: str) -> str:
    """Output without the error panel's frame and line breaks."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.fixture
def seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[BuildOptions]:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    return capture(monkeypatch)


@pytest.mark.parametrize(("args", "message"), [
    (["--max-deselected", "150"], "'--max-deselected': 150 is not a share of the suite between 0 and 1: "
                                  "--max-deselected 0.05 lets 5% of the suite be deselected"),
    (["--max-deselected", "5"], "5 is not a share of the suite between 0 and 1: --max-deselected 0.05 lets 5% of "
                                "the suite be deselected; 5% is written 0.05"),
    (["--max-deselected", "-0.1"], "-0.1 is not a share of the suite between 0 and 1"),
    (["--threshold", "2"], "2 is not a pass rate between 0 and 1: --threshold 0.9 needs 90% of the tests that ran "
                           "to pass; 2% is written 0.02"),
])
def test_a_share_out_of_range_is_refused_before_any_build(args: list[str], message: str, seen: list[BuildOptions],
                                                          tmp_path: Path) -> None:
    (tmp_path / "repos.txt").write_text("fake://two\n")
    for command in (["run", "fake://one"], ["batch", str(tmp_path / "repos.txt")]):
        done = CliRunner().invoke(app(), [*command, *args])
        assert done.exit_code == 2, done.output
        assert message in plain(done.output)
    assert seen == []
    with pytest.raises(ValidationError):  # the library's boundary refuses them too
        BuildOptions(max_deselected=1.5)
    with pytest.raises(ValidationError):
        BuildOptions(threshold=2)


def test_shares_in_range_reach_the_build_of_run_and_batch(seen: list[BuildOptions], tmp_path: Path) -> None:
    done = CliRunner().invoke(app(), ["run", "fake://one", "--max-deselected", "0.2", "--threshold", "0.5"])
    assert done.exit_code == 0, done.output
    (tmp_path / "repos.txt").write_text("fake://two\n")
    done = CliRunner().invoke(app(), ["batch", str(tmp_path / "repos.txt"), "--json", "--max-deselected", "0",
                                      "--threshold", "1"])
    assert done.exit_code == 0, done.output
    assert [(o.max_deselected, o.threshold) for o in seen] == [(0.2, 0.5), (0.0, 1.0)]


def test_run_summary_and_catalog_show_every_count(seen: list[BuildOptions], tmp_path: Path) -> None:
    done = CliRunner().invoke(app(), ["run", "fake://one"])
    assert done.exit_code == 0, done.output
    assert "tests: 3 passed, 0 failed, 0 errors, 1 skipped; flaky: 0; pass rate 1.00 (threshold 0.90)" in done.output
    assert "suite: 6 collected by its default configuration, 5 selected, 1 deselected in 0 entries (cap 5%)" \
        in done.output
    listed = CliRunner().invoke(app(), ["catalog", "list"])
    (row,) = [line.split() for line in listed.output.splitlines() if "fake" not in line and "one" in line]
    header = next(line.split() for line in listed.output.splitlines() if line.startswith("id"))
    assert dict(zip(header, row, strict=False))["suite/selected"] == "6/5"
    assert dict(zip(header, row, strict=False))["p/f/e/s/flaky"] == "3/0/0/1/0"
    (record,) = json.loads(CliRunner().invoke(app(), ["catalog", "list", "--json"]).output)
    assert (record["tests_collected"], record["tests_selected"], record["tests_deselected"]) == (6, 5, 1)
    assert (record["threshold"], record["max_deselected"]) == (0.9, 0.05)
    shown = json.loads(CliRunner().invoke(app(), ["catalog", "show", record["id"], "--json"]).output)
    assert shown["record"]["tests_selected"] == 5 and shown["spec"]["verification"]["collection"]["default"] == 6
    text = CliRunner().invoke(app(), ["catalog", "show", record["id"]]).output
    assert "5 selected, 1 deselected" in text and "threshold 0.90" in text


def test_the_summary_of_a_suite_no_runner_could_count_says_so() -> None:
    results = [TestResult(test_id=f"t.T.test_{i}", outcome="passed") for i in range(4)]
    run = TestRun(exit_code=0, results=results, counts={"passed": 4})
    spec = EnvSpec(status="verified", source=SourceRecord(repo="r", name="r"), model="embedded",
                   plan=Plan(test_command="python run.py", test_runner="custom"),
                   deselected=[Deselection(test="t.T.test_9", reason="hangs: 60 s")],
                   verification=Verification(verified=True, runs=[run, run], threshold=0.8, max_deselected=0.1,
                                             counts={"passed": 3, "failed": 0, "error": 0, "skipped": 0,
                                                     "flaky": 1}, flaky=["t.T.test_3"]))
    buffer = io.StringIO()
    print_summary(Console(file=buffer, width=200), spec)
    text = buffer.getvalue()
    assert "tests in every run: 3 passed, 0 failed, 0 errors, 0 skipped; flaky: 1; pass rate 0.75 (threshold " \
           "0.80)" in text
    assert "suite: not counted (the custom runner cannot list its tests); 1 deselection entries (cap 10%)" in text
    spec.verification.collection = Collection(default=40, command=40, selected=39)  # type: ignore[union-attr]
    buffer = io.StringIO()
    print_summary(Console(file=buffer, width=200), spec)
    assert "suite: 40 collected by its default configuration, 39 selected, 1 deselected in 1 entries (cap 10%)" \
        in buffer.getvalue()
