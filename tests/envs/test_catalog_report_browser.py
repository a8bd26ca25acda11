"""The catalog report in a real browser: `autoinstall catalog report` on a catalog of 16 environments, opened
in Debian's headless chromium, renders (a full-page screenshot that is not blank), logs no error, loads nothing
but itself, runs no stranger's script, and its table sorts and filters. A page with errors of each kind shows
that the same check catches them."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from autoinstall.commands.catalog import catalog_app
from tests.envs.chromium import chromium_executable, visit
from tests.envs.report_catalog import fill

pytestmark = pytest.mark.slow
SECTIONS = ["status", "failures", "times", "suites", "tasks", "environments"]
SUITE_COLUMN = 6
"""The suite's column in the environments table (0-based)."""
PROBES = {
    "sections": "Array.from(document.querySelectorAll('main > section')).map(s => s.id)",
    "rows": "document.querySelectorAll('#environments tbody tr').length",
    "charts": "Array.from(document.querySelectorAll('section > svg')).map(s => s.getBoundingClientRect().height)",
    "ready": "document.body.dataset.ready",
    "scripts": "document.scripts.length",
    "images": "document.images.length",
    "hostile": "Array.from(document.querySelectorAll('td.repo')).some(td => td.textContent.includes('onerror'))",
    "sorted": f"""(() => {{
        const th = document.querySelectorAll('#environments th')[{SUITE_COLUMN}];
        th.click(); th.click();
        return Array.from(document.querySelectorAll('#environments tbody tr'))
            .map(tr => parseFloat(tr.cells[{SUITE_COLUMN}].dataset.v));
    }})()""",
    "filtered": """(() => {
        const box = document.getElementById('filter');
        box.value = 'partial';
        box.dispatchEvent(new Event('input'));
        const shown = Array.from(document.querySelectorAll('#environments tbody tr')).filter(tr => !tr.hidden);
        return [document.getElementById('shown').textContent, shown.map(tr => tr.dataset.status)];
    })()""",
}


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_executable()


def test_the_report_renders_in_chromium(chromium: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    catalog = fill(tmp_path / "catalog", tmp_path / "home")
    app = typer.Typer()
    app.add_typer(catalog_app, name="catalog")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["catalog", "report", "--out", str(out), "--catalog", str(catalog.root)])
    assert result.exit_code == 0, result.output

    seen = visit(out.as_uri(), PROBES)
    assert seen.errors == []
    assert seen.requests == [out.as_uri()]
    values = seen.values
    assert values["sections"] == SECTIONS and values["rows"] == 16 and values["ready"] == "1"
    assert len(values["charts"]) == 5 and all(h > 100 for h in values["charts"])
    assert values["scripts"] == 1 and values["images"] == 0 and values["hostile"] is True
    assert values["sorted"] == sorted(values["sorted"], reverse=True) and values["sorted"][0] == 7200
    assert values["filtered"] == ["2", ["partial", "partial"]]

    (tmp_path / "report.png").write_bytes(seen.png)
    image = Image.open(io.BytesIO(seen.png)).convert("RGB")
    width, height = image.size
    assert width == 1280 and 2000 < height < 8000
    colours = image.getcolors(width * height) or []
    not_white = sum(n for n, rgb in colours if sum(rgb) < 720) / (width * height)
    assert len(colours) > 50 and 0.03 < not_white < 0.9  # text and coloured charts, on white


def test_the_check_catches_errors_requests_and_scripts(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><p>x</p><img src="http://192.0.2.1/a.png">'
                    '<script>console.error("deliberate"); alert("ran"); undefinedFunction();</script></body></html>')
    seen = visit(page.as_uri())
    kinds = sorted(e.split(":", 1)[0] for e in seen.errors)
    assert {"console", "dialog", "exception"} <= set(kinds), seen.errors
    assert "http://192.0.2.1/a.png" in seen.requests
