"""`autoinstall catalog report`: what each row holds, stranger's text escaped, a page that loads nothing, the
command. tests/envs/test_catalog_report_browser.py opens the page in chromium."""
from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from autoinstall.commands.catalog import catalog_app
from envs.catalog import Catalog
from envs.report import ReportError, write_report
from envs.report.rows import read_rows
from tests.envs.report_catalog import HOSTILE, fill

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return fill(tmp_path / "catalog", tmp_path / "home")


def test_rows_hold_status_ecosystem_log_and_tasks(catalog: Catalog, tmp_path: Path) -> None:
    rows = {r.record.id: r for r in read_rows(catalog, tmp_path / "home")}
    assert len(rows) == 16
    assert {r.record.status for r in rows.values()} == {"verified", "partial", "failed", "running"}
    assert {r.lead for r in rows.values()} == {"python", "go", "rust", "node", "java", "unknown"}
    nested = next(r for r in rows.values() if r.ecosystem == "python@packages/core")
    assert nested.lead == "python"
    failed = [r for r in rows.values() if r.record.status == "failed" and r.ecosystem != "unknown"]
    assert failed and all(r.log.endswith("logs/002-tests.log") for r in failed)
    assert all(r.log.endswith("/logs") for r in rows.values() if r.record.status == "verified")
    assert {r.log_exists for r in failed} == {True, False}  # one build's logs are gone from disk
    raised = next(r for r in rows.values() if r.record.failure_class == "crash")
    assert raised.failure == "RuntimeError: it broke" and raised.ecosystem == "unknown"
    counted = {r.tasks.total for r in rows.values()}
    assert counted >= {0, 1, 5}
    with_tasks = next(r for r in rows.values() if r.tasks.total == 5)
    assert with_tasks.tasks.by == {"kind": {"history": 2, "mutation": 3}}
    unreadable = [r for r in rows.values() if r.tasks.error]
    assert len(unreadable) == 1 and "is not a task" in unreadable[0].tasks.error


class _Page(HTMLParser):
    """Every tag, and every attribute that makes a browser load or follow something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [(tag, k, v or "") for k, v in attrs if k in ("src", "href", "srcset", "xlink:href")]


@pytest.mark.slow
def test_stranger_text_is_escaped_and_the_page_loads_nothing(catalog: Catalog, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    summary = write_report(catalog, out, tasks_home=tmp_path / "home")
    page = out.read_text()
    assert summary.environments == 16 and summary.tasks == 11 and summary.bytes == len(page.encode())
    assert HOSTILE not in page and "onerror=alert(1)&gt;" in page
    assert "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;" in page
    parsed = _Page()
    parsed.feed(page)
    assert parsed.tags.count("script") == 1 and "img" not in parsed.tags
    assert parsed.tags.count("svg") == 5  # status, failures, times, suites, tasks
    assert "Content-Security-Policy" in page and "<?xml" not in page
    for tag, name, value in parsed.links:  # within the page (the charts' <use> of their glyphs), or a log
        assert value.startswith("#") or (tag, name, value[:8]) == ("a", "href", "file:///"), (tag, name, value)
    logs = [v for _, _, v in parsed.links if v.startswith("file:")]
    assert len(logs) == 16 + 8  # a row per environment, and one per failed or partial build
    assert sum(v.endswith("/logs/002-tests.log") for v in logs) == 2 * 7  # the build that raised has none


def test_an_empty_catalog_and_an_unwritable_file(tmp_path: Path) -> None:
    empty = Catalog(tmp_path / "catalog")
    summary = write_report(empty, tmp_path / "r.html", tasks_home=tmp_path)
    page = (tmp_path / "r.html").read_text()
    assert summary.environments == 0 and "No build failed." in page and "</span> of 0 shown" in page
    with pytest.raises(ReportError, match="pass --out a file in a writable folder"):
        write_report(empty, tmp_path / "no" / "such" / "r.html", tasks_home=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog", "r.html"]  # no temporary file left


@pytest.mark.slow
def test_the_command_writes_the_report(catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    app = typer.Typer()
    app.add_typer(catalog_app, name="catalog")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["catalog", "report", "--out", str(out), "--catalog", str(catalog.root)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stdout and "16 environments" in result.stdout and "11 tasks" in result.stdout
    result = CliRunner().invoke(app, ["catalog", "report", "--out", str(out), "--catalog", str(catalog.root),
                                      "--json"])
    assert json.loads(result.stdout)["statuses"] == {"verified": 7, "failed": 6, "partial": 2, "running": 1}


def test_the_cli_starts_without_matplotlib() -> None:
    code = "import sys, cli; cli.app; print(sorted(m for m in sys.modules if m.startswith(('matplotlib', 'numpy'))))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
