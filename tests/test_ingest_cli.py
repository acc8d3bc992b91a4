"""`rag ingest` as a user drives it: `--rebuild` re-embeds everything into a fresh collection that replaces the old."""

from __future__ import annotations

import json
from dataclasses import replace

from typer.testing import CliRunner

from rag.cli import app
from rag.config import Settings
from rag.corpus import load_papers
from rag.store import Store

from .helpers import assert_store_exact, expected_chunks, ingest_counts, write_jsonl_gz

runner = CliRunner()


def search_ids(query: str) -> list[str]:
    result = runner.invoke(app, ["search", "--json", query])
    assert result.exit_code == 0, result.output
    return [r["id"] for r in json.loads(result.stdout)["results"]]


def test_rebuild_reembeds_everything_into_a_fresh_collection_and_search_follows_it(tmp_path, monkeypatch, seed_papers):
    store = tmp_path / "store"
    monkeypatch.setenv("RAG_STORE", str(store))
    monkeypatch.setenv("RAG_INGEST_WINDOW", "8")
    old_file = write_jsonl_gz(seed_papers[1:10], tmp_path / "old.jsonl.gz")  # 000-02 … 000-10
    new_file = write_jsonl_gz(seed_papers[0:8], tmp_path / "new.jsonl.gz")  # 000-01 … 000-08: two gone, one new
    new = load_papers([new_file])
    assert runner.invoke(app, ["ingest", str(old_file)]).exit_code == 0
    assert search_ids("what is PHyCLIP?")[0] == "000-10"
    assert "000-01" not in search_ids("what is DiVeQ?")

    rebuilt = runner.invoke(app, ["ingest", "--rebuild", str(new_file)])
    assert rebuilt.exit_code == 0, rebuilt.output
    # Every paper is embedded again, the seven it shares with the old store included.
    assert ingest_counts(rebuilt.stdout) == {
        "added": 8,
        "updated": 0,
        "unchanged": 0,
        "embedded": len(expected_chunks(new)),
    }
    assert rebuilt.stdout.startswith(f"8 papers in {store}: ")
    assert_store_exact(store, new)  # the papers of the old store that the new input lacks are gone
    assert [c.name for c in Store(replace(Settings(), store=store)).client.list_collections()] == ["papers"]
    # The lexical (BM25) half follows the new contents: an exact name finds its paper, a dropped one is gone.
    assert search_ids("what is DiVeQ?")[0] == "000-01"
    assert "000-10" not in search_ids("what is PHyCLIP?")

    again = runner.invoke(app, ["ingest", str(new_file)])
    assert again.exit_code == 0, again.output
    assert ingest_counts(again.stdout) == {"added": 0, "updated": 0, "unchanged": 8, "embedded": 0}
