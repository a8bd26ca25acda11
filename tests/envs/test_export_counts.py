"""Every surface counts the suite the same way (issue 9): `SuiteCounts` from a spec, the catalog record, and the
metadata of each export format (Harbor task.toml, SWE-bench rows, verl rows, JSON lines, the manifest)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from envs.catalog import Catalog, SuiteCounts, record_from_spec
from envs.export import Entry, ExportOptions, read_manifest, run_export
from envs.runtime import RuntimeSpec
from envs.spec import (
    Collection,
    Deselection,
    EnvSpec,
    Failure,
    Plan,
    SourceRecord,
    StubRecord,
    TestResult,
    TestRun,
    Verification,
)
from tests.envs.conftest import parquet

IDS = ["t.py::a", "t.py::b", "t.py::c", "t.py::d[x-1]"]


def gutted_spec(status: str = "partial") -> EnvSpec:
    """A suite of 120 by its default configuration; 117 selected, combined over two runs."""
    results = [TestResult(test_id=t, outcome=o) for t, o in zip(IDS, ("passed", "passed", "failed", "skipped"),
                                                                   strict=True)]
    run = TestRun(exit_code=1, results=results, counts={"passed": 2, "failed": 1, "skipped": 1})
    verification = Verification(
        verified=True, runs=[run, run], flaky=["t.py::b"], threshold=0.8, max_deselected=0.02,
        collection=Collection(default=120, command=120, selected=117),
        counts={"passed": 110, "failed": 2, "error": 1, "skipped": 3, "flaky": 1})
    return EnvSpec(status=status, source=SourceRecord(repo="https://example.org/g.git", name="g", commit="c" * 40),
                   model="embedded", image="autoinstall-env/g:cccccccccccc", plan=Plan(test_command="python -m pytest"),
                   test_command="python -m pytest", verification=verification,
                   deselected=[Deselection(test="t.py::e[a::b]", reason="hangs: 60 s"),
                               Deselection(test="tests/test_db.py", reason="service")],
                   stubs=[StubRecord(distribution="gone-dist", import_name="gone_dist", reason="not on the index")],
                   failure=Failure(failure_class="deselection_cap", message="3 of 120 tests (2%) are deselected")
                   if status == "partial" else None)


EXPECTED = {"status": "partial", "collected": 120, "selected": 117, "deselected": 3, "deselections": 2,
            "passed": 110, "failed": 2, "errors": 1, "skipped": 3, "flaky": 1, "stubs": 1, "threshold": 0.8,
            "max_deselected": 0.02}


def test_suite_counts_are_tests_not_entries_with_the_threshold_and_cap() -> None:
    assert SuiteCounts.from_spec(gutted_spec()).metadata() == EXPECTED
    # a runner that cannot list its suite: no collected/selected/deselected, never a zero that looks counted
    spec = gutted_spec("verified")
    assert spec.verification is not None
    spec.verification.collection = None
    assert not {"collected", "selected", "deselected"} & set(SuiteCounts.from_spec(spec).metadata())
    # a record written before runs were combined: the last run's outcomes, its flaky tests apart
    spec.verification.counts = {}
    old = SuiteCounts.from_spec(spec)
    assert (old.passed, old.failed, old.skipped, old.flaky) == (1, 1, 1, 1)
    bare = SuiteCounts.from_spec(spec.model_copy(update={"verification": None}))
    assert (bare.status, bare.passed, bare.threshold, bare.deselections) == ("verified", 0, None, 2)


def test_the_catalog_record_carries_every_count(tmp_path: Path) -> None:
    record = record_from_spec(gutted_spec(), tmp_path)
    assert (record.tests_collected, record.tests_selected, record.tests_deselected) == (120, 117, 3)
    assert (record.tests_passed, record.tests_failed, record.tests_errors, record.tests_skipped,
            record.tests_flaky) == (110, 3, 1, 3, 1)
    assert (record.stubs, record.threshold, record.max_deselected) == (1, 0.8, 0.02)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    catalog = Catalog(tmp_path / "catalog")
    (tmp_path / "env").mkdir()
    catalog.upsert_spec(gutted_spec(), tmp_path / "env")
    return catalog


def _export(catalog: Catalog, out: Path, fmt: str) -> str:
    manifest = run_export(catalog, ExportOptions(out=out, format=fmt, include_partial=True))  # type: ignore[arg-type]
    assert read_manifest(out).verification == manifest.verification
    (env_id,) = manifest.ids
    assert manifest.verification[env_id] == EXPECTED
    return env_id


def test_harbor_swebench_and_jsonl_metadata_carry_the_counts(catalog: Catalog, tmp_path: Path) -> None:
    env_id = _export(catalog, tmp_path / "harbor", "harbor")
    config = tomllib.loads((tmp_path / "harbor" / f"g-{env_id}-template" / "task.toml").read_text())
    assert config["metadata"]["verification"] == EXPECTED
    _export(catalog, tmp_path / "swe", "swebench")
    (row,) = [json.loads(line) for line in (tmp_path / "swe" / "swebench.jsonl").read_text().splitlines()]
    assert row["verification"] == EXPECTED
    _export(catalog, tmp_path / "jsonl", "jsonl")
    (line,) = [json.loads(line) for line in (tmp_path / "jsonl" / "envs.jsonl").read_text().splitlines()]
    assert line["counts"] == EXPECTED and line["verification"]["collection"]["selected"] == 117


def test_verl_rows_carry_the_counts(catalog: Catalog, tmp_path: Path) -> None:
    pq = parquet()
    _export(catalog, tmp_path / "verl", "verl")
    (row,) = pq.read_table(tmp_path / "verl" / "verl.parquet").to_pylist()
    assert row["extra_info"]["verification"] == EXPECTED


def test_reward_sets_take_only_tests_that_passed_in_every_run(tmp_path: Path) -> None:
    spec = gutted_spec("verified")
    assert spec.verification is not None
    first, last = spec.verification.runs
    late = TestResult(test_id="t.py::late", outcome="passed")  # missing from the first run: it did not pass there
    spec.verification.runs = [first, last.model_copy(update={"results": [*last.results, late]})]
    entry = Entry(record_from_spec(spec, tmp_path), spec)
    assert entry.pass_to_pass == ["t.py::a"]  # t.py::b is flaky, c failed, d skipped
    # the runtime's default reward tests are the same set (envs/runtime/spec.py)
    assert RuntimeSpec.from_env_spec(spec).tests == ["t.py::a"]
