"""`rag.integrations.llama_index.PaperRetriever` on the seed store, alone and inside a llama-index query engine
whose LLM is scripted (offline: no default OpenAI LLM or embedding is ever built)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from pydantic import PrivateAttr

from rag import Papers
from rag.errors import InputError
from rag.integrations.llama_index import PaperRetriever

UNLEARNING = {"001-02", "001-18"}  # PURGE and SAM-for-unlearning (seeds/001_*.txt)
CITED = re.compile(r"\[(\d{3}-\d{2})\]")


class CitingLLM(CustomLLM):
    """A scripted LLM: records each prompt and answers by citing every [id] the prompt showed it."""

    _prompts: list[str] = PrivateAttr(default_factory=list)

    @property
    def prompts(self) -> list[str]:
        return self._prompts

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=8192, num_output=256, model_name="citing-llm")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._prompts.append(prompt)
        ids = list(dict.fromkeys(CITED.findall(prompt)))
        return CompletionResponse(text="Papers that study this: " + " ".join(f"[{i}]" for i in ids))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted, **kwargs)


@pytest.fixture()
def papers(seed_store_dir) -> Papers:
    return Papers(store=seed_store_dir)


def test_retrieves_scored_paper_nodes_with_their_metadata(papers):
    found = PaperRetriever(papers, k=5).retrieve("machine unlearning")
    assert len(found) == 5 and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in found)
    ids = [n.node.node_id for n in found]
    assert set(ids[:2]) == UNLEARNING  # the two unlearning papers, first
    assert [n.score for n in found] == sorted((n.score for n in found), reverse=True)

    top = found[0].node
    assert set(top.metadata) >= {"id", "title", "year", "venue", "score", "snippet"}
    assert top.metadata["id"] == top.node_id and top.metadata["venue"] == "ICLR 2026"
    paper = papers.get(top.node_id)
    # What an LLM sees: the cited id, the venue, and the full abstract; no scores, no repeated snippet.
    assert top.get_content(MetadataMode.LLM) == f"[{paper.id}] (ICLR 2026)\n{paper.abstract}"
    assert top.metadata["snippet"] in paper.abstract


def test_async_retrieval_gives_the_same_papers(papers):
    retriever = PaperRetriever(papers, k=3)
    found = asyncio.run(retriever.aretrieve("machine unlearning"))
    assert [n.node.node_id for n in found] == [n.node.node_id for n in retriever.retrieve("machine unlearning")]


def test_applies_year_venue_and_status_and_checks_k(papers):
    found = PaperRetriever(papers, k=3, year=2025).retrieve("clustering")
    assert found and all(n.node.metadata["year"] == 2025 for n in found)
    spotlight = PaperRetriever(papers, k=3, status="spotlight").retrieve("clustering")
    assert {n.node.node_id for n in spotlight} == {"004-03", "004-05", "004-19"}
    assert all(n.node.metadata["url"].startswith("https://openreview.net/forum?id=") for n in spotlight)
    with pytest.raises(InputError, match="k must be between 1 and 100"):
        PaperRetriever(papers, k=0)


def test_a_query_engine_answers_from_the_retrieved_abstracts(papers):
    retriever = PaperRetriever(papers, k=4)
    llm = CitingLLM()
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)

    response = engine.query("which papers study machine unlearning?")

    expected = [n.node.node_id for n in retriever.retrieve("which papers study machine unlearning?")]
    assert [n.node.node_id for n in response.source_nodes] == expected
    assert len(llm.prompts) == 1  # four abstracts fit one prompt
    prompt = llm.prompts[0]
    for node in response.source_nodes:
        assert papers.get(node.node.node_id).abstract in prompt
        assert f"[{node.node.node_id}]" in prompt
    assert "which papers study machine unlearning?" in prompt
    assert set(CITED.findall(str(response))) == set(expected) >= UNLEARNING
