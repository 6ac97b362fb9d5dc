"""`--output PATH`: the format from the extension, atomic writes, redaction, clear errors."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from agentopt.core.errors import ConfigError
from agentopt.reports import (
    RunHeader,
    RunResults,
    check_output_paths,
    load_results,
    parse_results,
    render_run_list,
    render_summary,
    write_outputs,
)


def test_every_format_by_extension(tmp_path: Path, mixed: RunResults) -> None:
    names = ["r.json", "r.html", "junit.XML", "r.csv", "summary.md"]
    written = write_outputs(mixed, [tmp_path / "out" / n for n in names])
    assert [w.format for w in written] == [".json", ".html", ".xml", ".csv", ".md"]
    assert load_results(tmp_path / "out" / "r.json").summary.tasks == 9
    assert (tmp_path / "out" / "r.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    ET.parse(tmp_path / "out" / "junit.XML")
    with open(tmp_path / "out" / "r.csv", encoding="utf-8", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 9
    assert (tmp_path / "out" / "summary.md").read_text("utf-8").startswith("### agentopt eval")
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_unknown_extension_names_the_flag_and_the_formats(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        check_output_paths([tmp_path / "ok.html", tmp_path / "report.pdf", tmp_path / "noext"])
    text = str(err.value)
    assert "--output" in text and "report.pdf" in text and "'.pdf'" in text and "noext" in text
    assert ".json, .html, .xml, .csv, .md" in text
    assert len(err.value.problems) == 2
    assert not (tmp_path / "ok.html").exists()


def test_nothing_is_written_when_one_path_is_bad(tmp_path: Path, mixed: RunResults) -> None:
    with pytest.raises(ConfigError):
        write_outputs(mixed, [tmp_path / "a.html", tmp_path / "b.docx"], flag="--out-file")
    assert not (tmp_path / "a.html").exists()


def test_json_of_an_m365_run_is_the_filled_document(tmp_path: Path, mixed: RunResults) -> None:
    document = {"schemaVersion": "1.2.0", "items": [{"prompt": "Refunds?"}]}
    write_outputs(
        mixed,
        [tmp_path / "evals.out.json"],
        m365_document=document,
        agent_name="Support",
        cli_version="0.1.0",
    )
    filled = json.loads((tmp_path / "evals.out.json").read_text("utf-8"))
    assert filled["items"][0]["response"] == "Refunds are accepted within 30 days."
    assert filled["metadata"]["agentName"] == "Support"
    assert "run" not in filled


def test_overwriting_the_dataset_keeps_a_backup(tmp_path: Path, mixed: RunResults) -> None:
    dataset = tmp_path / "evals.json"
    original = {"schemaVersion": "1.2.0", "items": [{"prompt": "Refunds?"}]}
    dataset.write_text(json.dumps(original), encoding="utf-8")
    mixed.run.dataset.source = str(dataset)
    [out] = write_outputs(mixed, [dataset], m365_document=original)
    assert out.backup is not None and json.loads(out.backup.read_text("utf-8")) == original
    assert "response" in json.loads(dataset.read_text("utf-8"))["items"][0]


def test_secrets_are_redacted_in_every_output(
    tmp_path: Path, mixed: RunResults, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-secret-0042")
    mixed.tasks[0].response = "Your key acme-secret-0042 works."
    mixed.tasks[0].tool_calls[0].arguments = {"token": "acme-secret-0042"}
    paths = [tmp_path / n for n in ("r.json", "r.html", "r.xml", "r.csv", "r.md")]
    write_outputs(mixed, paths)
    m365 = tmp_path / "m.json"
    write_outputs(
        mixed, [m365], m365_document={"schemaVersion": "1.0.0", "items": [{"prompt": "q"}]}
    )
    for path in [*paths, m365]:
        assert "acme-secret-0042" not in path.read_text("utf-8"), path.name
    assert "Your key *** works." in (tmp_path / "r.json").read_text("utf-8")


def test_a_minimal_results_file_renders_everywhere(tmp_path: Path) -> None:
    """An older or interrupted results.json with almost nothing in it still renders."""
    results = parse_results({"run": {"id": "20261129-221500-a1b2c3", "status": "interrupted"}})
    paths = [tmp_path / n for n in ("r.json", "r.html", "r.xml", "r.csv", "r.md")]
    write_outputs(results, paths)
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "0"
    console = Console(width=80, record=True, file=io.StringIO())
    render_summary(results, console)
    render_run_list([RunHeader.from_results(results)], console)
    text = console.export_text()
    assert "interrupted — partial results" in text
    assert "Score —" in text
