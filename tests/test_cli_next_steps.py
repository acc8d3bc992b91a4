"""What a researcher does after an answer, through the CLI: papers like one, counts over the store, export."""

from __future__ import annotations

import csv
import io
import json

import bibtexparser
import pytest
from typer.testing import CliRunner

from rag.cli import app

runner = CliRunner()

MULTI_VIEW = {"000-02", "002-05", "002-06", "004-05"}  # evals/questions.jsonl q002
UNLEARNING = {"001-02", "001-15", "001-18"}  # q001
CONFORMAL = {"002-02", "004-09"}  # the conformal prediction question's papers, 2026 and 2025


@pytest.fixture()
def use_seed_store(seed_store_dir, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))


def test_similar_lists_the_papers_on_the_paper_s_topic_with_links_and_shared_sentences(use_seed_store):
    result = runner.invoke(app, ["similar", "[000-02]", "-k", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Papers like [000-02] Multi-view clustering")
    ranked = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert {line.split("[")[1].split("]")[0] for line in ranked} == MULTI_VIEW - {"000-02"}
    assert all("https://openreview.net/forum?id=" in line for line in ranked)
    assert "shared: clustering" in result.stdout and "this: " in result.stdout and "that: " in result.stdout


def test_similar_to_a_draft_from_a_file_or_stdin(use_seed_store, tmp_path):
    draft = "We make a trained language model forget specific training data without retraining it from scratch."
    path = tmp_path / "draft.txt"
    path.write_text(draft)
    from_file = json.loads(runner.invoke(app, ["similar", "--file", str(path), "--json", "-k", "3"]).stdout)
    from_stdin = json.loads(runner.invoke(app, ["similar", "--file", "-", "--json", "-k", "3"], input=draft).stdout)
    assert from_file == from_stdin and from_file["of"] is None
    assert len({p["id"] for p in from_file["papers"]} & UNLEARNING) >= 2


def test_trend_counts_by_year_with_the_year_s_share_and_bars(use_seed_store):
    result = runner.invoke(app, ["trend", "conformal", "prediction"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.splitlines()[0] == "2 papers on \u201cconformal prediction\u201d (95 candidates judged)"
    year_lines = [line.strip() for line in out.split("by year")[1].split("\n\n")[0].splitlines() if line.strip()]
    assert [line.split()[0] for line in year_lines] == ["2025", "2026"]
    assert "█" in year_lines[0] and " 1 " in year_lines[0] + " " and "of 19" in year_lines[0]
    assert "by decision" in out and "Most relevant:" in out
    payload = json.loads(runner.invoke(app, ["trend", "conformal prediction", "--json"]).stdout)
    assert set(payload["members"]) == CONFORMAL and payload["complete"]
    assert {(y["year"], y["papers"], y["of"]) for y in payload["by_year"]} == {(2025, 1, 19), (2026, 1, 76)}


def test_a_decision_filter_changes_what_is_counted_and_listed(use_seed_store):
    spotlight = json.loads(
        runner.invoke(app, ["trend", "multi-view clustering", "--status", "spotlight", "--json"]).stdout
    )
    assert spotlight["members"] == ["004-05"]
    similar = json.loads(runner.invoke(app, ["similar", "000-02", "--status", "spotlight", "--json"]).stdout)
    assert similar["papers"] and all(p["status"] == "spotlight" for p in similar["papers"])


def test_ask_as_bibtex_prints_only_the_cited_papers_entries(use_seed_store):
    asked = json.loads(runner.invoke(app, ["ask", "which papers study unlearning?", "--json"]).stdout)
    result = runner.invoke(app, ["ask", "which papers study unlearning?", "--format", "bibtex"])
    assert result.exit_code == 0, result.output
    entries = bibtexparser.loads(result.stdout).entries
    assert [e["note"].split(";")[0] for e in entries] == [f"id {c}" for c in asked["citations"]]
    assert all(e["url"].startswith("https://openreview.net/forum?id=") for e in entries)
    assert "papers match" not in result.stdout  # the answer's text is not in the file


def test_search_similar_and_trend_export_csv_and_markdown(use_seed_store):
    rows = list(
        csv.DictReader(io.StringIO(runner.invoke(app, ["search", "clustering", "-k", "3", "--format", "csv"]).stdout))
    )
    assert len(rows) == 3 and all(r["url"] and r["status"] for r in rows)
    markdown = runner.invoke(app, ["trend", "machine unlearning", "--format", "markdown"]).stdout
    assert {line.split("`")[1] for line in markdown.splitlines()} == UNLEARNING
    similar = runner.invoke(app, ["similar", "001-02", "-k", "2", "--format", "markdown"]).stdout
    assert len(similar.splitlines()) == 2 and "](https://openreview.net/forum?id=" in similar


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["similar"], "error: give a paper id, or a text with --text or --file"),
        (["similar", "999-99"], "error: no paper '999-99' in the store"),
        (["similar", "--text", "graph nets"], "error: the text is too short to compare"),
        (["similar", "--file", "/nonexistent/draft.txt"], "error: cannot read /nonexistent/draft.txt"),
        (["search", "clustering", "--format", "ris"], "error: unknown format 'ris': use one of bibtex, markdown, csv"),
        (["trend", "unlearning", "--json", "--format", "csv"], "error: give --json or --format, not both"),
        (["trend", "unlearning", "--area", "nowhere"], "error: no papers of area 'nowhere' in the store"),
    ],
)
def test_bad_requests_are_one_line_errors(use_seed_store, args, message):
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and result.stdout == ""
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
