"""The `openai` backend against a real OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import json
import socket

import pytest
from typer.testing import CliRunner

from rag.cli import app
from rag.config import Settings
from rag.llm import BREAKERS

from .helpers import run_events
from .llm_server import ScriptedLLM

runner = CliRunner()
KEY = "sk-test-DO-NOT-LEAK-4242"
QUESTION = "which papers study unlearning?"


@pytest.fixture(autouse=True)
def closed_breakers():
    """Each test starts with every endpoint's circuit breaker closed (they are process-wide)."""
    BREAKERS.clear()
    yield
    BREAKERS.clear()


@pytest.fixture()
def llm():
    with ScriptedLLM(slow_seconds=3.0) as server:
        yield server


@pytest.fixture()
def configure(llm, seed_store_dir, monkeypatch):
    """Point the CLI at the scripted server; the scenario is the model name."""

    def use(model: str) -> None:
        monkeypatch.setenv("RAG_STORE", str(seed_store_dir))
        monkeypatch.setenv("RAG_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("RAG_LLM_MODEL", model)
        monkeypatch.setenv("RAG_LLM_TIMEOUT", "1")
        monkeypatch.setenv("RAG_LLM_RETRIES", "0")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)

    return use


def test_configured_endpoint_answers_with_checked_citations(configure, llm):
    configure("normal")
    result = runner.invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    sent_ids = llm.source_ids(llm.requests[0])
    assert payload["backend"] == "openai" and not payload["abstained"]
    assert payload["citations"] == sent_ids[:2]
    assert [s["id"] for s in payload["sources"]] == sent_ids
    assert payload["usage"]["total_tokens"] == 120
    request = llm.requests[0]
    assert request["_path"] == "/v1/chat/completions" and request["_auth"] == f"Bearer {KEY}"
    assert request["messages"][0]["content"].startswith("You answer questions about research papers")
    assert "Question: which papers study unlearning?" in request["messages"][1]["content"]
    assert KEY not in result.output


def test_answer_streams_to_the_terminal(configure, llm, seed_store):
    configure("stream")
    result = runner.invoke(app, ["ask", QUESTION])
    assert result.exit_code == 0, result.output
    assert llm.requests[-1]["stream"] is True
    first_id = llm.source_ids(llm.requests[-1])[0]
    assert result.stdout.startswith(f"The most relevant paper studies this directly [{first_id}].")
    assert "\nSources:\n" in result.stdout

    store, embedder = seed_store
    events = run_events(QUESTION, store, embedder, Settings.from_env(), "openai", stream=True)
    pieces = [event.text for event in events if event.type == "text"]
    answer = events[-1].answer
    assert len(pieces) > 3 and "".join(pieces).strip() == answer.answer


def test_citation_of_a_paper_not_retrieved_is_removed_and_reported(configure):
    configure("bad-cite")
    payload = json.loads(runner.invoke(app, ["ask", QUESTION, "--json"]).stdout)
    assert payload["dropped_citations"] == ["999-99"]
    assert "999-99" not in payload["answer"] and "999-99" not in payload["citations"]
    assert payload["answer"].endswith("Another paper agrees.")

    shown = runner.invoke(app, ["ask", QUESTION])  # streamed: the bad id never reaches the screen
    assert shown.exit_code == 0 and "999-99" not in shown.stdout
    assert "removed 1 citation(s) to papers that were not retrieved: 999-99" in shown.stderr


def test_model_saying_the_abstracts_do_not_answer_is_an_abstention(configure):
    configure("abstain")
    payload = json.loads(runner.invoke(app, ["ask", QUESTION, "--json"]).stdout)
    assert payload["abstained"] is True and payload["citations"] == []
    assert "INSUFFICIENT_EVIDENCE" not in payload["answer"]
    shown = runner.invoke(app, ["ask", QUESTION])
    assert "INSUFFICIENT_EVIDENCE" not in shown.stdout and "don't answer this" in shown.stdout


FALLBACK = "; showing the extractive answer instead"


def test_server_error_falls_back_to_the_extractive_answer_with_one_warning(configure, llm):
    configure("error500")
    result = runner.invoke(app, ["ask", QUESTION])
    assert result.exit_code == 0
    assert result.stderr == f"warning: the LLM endpoint at {llm.url} answered HTTP 500 (internal failure){FALLBACK}\n"
    assert result.stdout.startswith("3 papers match:\n") and "\nSources:\n" in result.stdout
    assert KEY not in result.output


def test_timeout_is_reported_within_the_configured_limit(configure, llm):
    configure("slow")
    llm.slow_seconds = 12.0  # far beyond the 1 s timeout, so a loaded machine cannot blur the two
    result = runner.invoke(app, ["ask", QUESTION, "--json"])
    # The server saw one request and the client hang up on it: it gave up at its timeout, never got the reply.
    assert (llm.answer_requests("slow"), llm.hung_up("slow"), llm.answered("slow")) == (1, 1, 0)
    assert result.exit_code == 0
    assert result.stderr == f"warning: the LLM endpoint at {llm.url} did not answer within 1s{FALLBACK}\n"
    payload = json.loads(result.stdout)
    assert payload["backend"] == "extractive" and payload["warnings"] == [result.stderr[len("warning: ") : -1]]


def test_unreachable_endpoint_is_a_one_line_warning(configure, monkeypatch):
    configure("normal")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("RAG_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    result = runner.invoke(app, ["ask", QUESTION])
    assert result.exit_code == 0
    assert result.stderr.startswith(f"warning: cannot reach the LLM endpoint at http://127.0.0.1:{port}/v1")
    assert result.stderr.count("\n") == 1 and KEY not in result.output


def test_openai_compatible_embeddings_by_configuration(llm, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("RAG_EMBED_BACKEND", "openai")
    monkeypatch.setenv("RAG_EMBED_BASE_URL", llm.url)
    monkeypatch.setenv("RAG_EMBED_MODEL", "bow-64")
    papers = tmp_path / "p.jsonl"
    papers.write_text(
        '{"id": "q1", "abstract": "Quantum error correction with surface codes."}\n'
        '{"id": "r1", "abstract": "Reinforcement learning for robot locomotion."}\n'
    )
    assert runner.invoke(app, ["ingest", str(papers)]).exit_code == 0
    assert any(r["_path"] == "/v1/embeddings" for r in llm.requests)
    found = json.loads(runner.invoke(app, ["search", "robot locomotion", "--json"]).stdout)
    assert found["results"][0]["id"] == "r1"

    from rag.store import Store

    meta = Store(Settings.from_env()).collection().metadata
    assert (meta["embedding_model"], meta["embedding_dim"]) == ("openai:bow-64", 64)
    monkeypatch.delenv("RAG_EMBED_BACKEND")  # back to the packaged model: the store must refuse it
    result = runner.invoke(app, ["search", "robot", "--json"])
    assert result.exit_code == 1 and "was built with embedding model 'openai:bow-64'" in result.stderr
