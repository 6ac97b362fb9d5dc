"""Both HTML reports fit a 1280 px window: the page is never wider than the viewport (a long
header line once made the run report 2,013 px wide and hid agent, model and judge)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.optimize.conftest import Models, make_project, two_phrase_rows
from tests.optimize.conftest import models as models  # the fixture

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH = 1280


def page_width(page: Path) -> int:
    """document.scrollWidth of `page` in headless Chromium with a 1280 px window."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    probe = (
        "<script>document.body.setAttribute('data-width',"
        "document.documentElement.scrollWidth)</script></body>"
    )
    measured = page.with_name(page.stem + "-probe.html")
    measured.write_text(html.replace("</body>", probe), encoding="utf-8")
    out = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={page.parent / 'chrome-profile'}", f"--window-size={WIDTH},900",
         "--virtual-time-budget=2000", "--dump-dom", measured.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = re.search(r'data-width="(\d+)"', out.stdout)
    assert found, out.stderr[-2000:]
    return int(found.group(1))


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it)"),
]


def test_run_report_fits_1280_px(project: Path) -> None:
    long_name = "support-agent-offline-suite-with-a-long-descriptive-name-for-the-nightly-ci-job"
    result = CliRunner().invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--prompts", "What is 2+2?",
         "--expected", "4", "--evaluator", "ExactMatch", "--agent-model", "mock:echo",
         "--name", long_name, "--output", "r.html"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert page_width(project / "r.html") <= WIDTH


def test_optimize_report_fits_1280_px(tmp_path: Path, models: Models) -> None:
    project = make_project(
        tmp_path, two_phrase_rows("train", 6), validation=two_phrase_rows("val", 6),
        test=two_phrase_rows("test", 3),
    )  # fmt: skip
    result = CliRunner().invoke(
        app, ["-C", str(project), "--no-prompt", "optimize", "--max-candidates", "1"]
    )
    assert result.exit_code == 0, result.output
    report = next((project / ".agentopt" / "optimize").glob("*/report.html"))
    assert page_width(report) <= WIDTH
