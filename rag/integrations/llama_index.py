"""`PaperRetriever`: the papers as a llama-index retriever, for llama-index query engines, agents and pipelines.

    from llama_index.core.query_engine import RetrieverQueryEngine
    from rag.integrations.llama_index import PaperRetriever

    retriever = PaperRetriever(Papers(store="~/papers"), k=5)
    engine = RetrieverQueryEngine.from_args(retriever, llm=my_llm)   # pass an llm: the default is OpenAI's
    response = engine.query("which papers study unlearning?")

Retrieval is `Papers.search`: the hybrid (dense + keyword) retriever, reranked, one node per paper, best first.
A node's text is what an LLM needs to answer and cite: "[id] title (venue)" and the full abstract; the id, title,
year, venue, score and matched snippet are in its metadata (the `rag search --json` fields), kept out of the
text an LLM or an embedding model sees, which already names the paper.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ..config import check_k
from ..types import Source
from ..wire import source_json

if TYPE_CHECKING:
    from ..api import Papers


class PaperRetriever(BaseRetriever):
    """The top `k` papers for a query from `papers` (default: the per-user store), optionally restricted to a
    year, venue, primary area and decision (`status`, as `rag ask --status`); a node's score is the reranker's
    relevance, or the cosine score when reranking is off."""

    def __init__(
        self,
        papers: Papers | None = None,
        k: int = 5,
        year: int | None = None,
        venue: str | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> None:
        check_k(k)
        if papers is None:
            from ..api import Papers

            papers = Papers()  # constructing is instant; the store opens on the first query
        super().__init__()
        self.papers = papers
        self.k = k
        self.year = year
        self.venue = venue
        self.area = area
        self.status = status

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        sources = self.papers.search(
            query_bundle.query_str, k=self.k, year=self.year, venue=self.venue, area=self.area, status=self.status
        )
        return [to_node(source) for source in sources]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # The search is blocking (ONNX, Chroma): off the event loop, so async engines keep running meanwhile.
        return await asyncio.to_thread(self._retrieve, query_bundle)


def to_node(source: Source) -> NodeWithScore:
    """One retrieved paper as a llama-index node with its score."""
    # id, title, year, venue, url, area, status, score, relevance (when set), snippet
    metadata: dict[str, Any] = source_json(source)
    heading = " ".join(part for part in (f"[{source.id}]", source.title, _where(source)) if part)
    # The full abstract answers more than the one matched chunk; some paths carry only the snippet.
    node = TextNode(
        id_=source.id,
        text=f"{heading}\n{source.abstract or source.snippet}",
        metadata=metadata,
        # The heading already names the paper; the rest (scores, the snippet repeating the abstract) is noise to an
        # LLM and would skew an embedding.
        excluded_llm_metadata_keys=list(metadata),
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=source.closeness)


def _where(source: Source) -> str:
    """The venue in brackets, e.g. "(ICLR 2026)", else the year: so an LLM can tell a 2025 paper from a 2026 one."""
    if source.venue:
        return f"({source.venue})"
    return f"({source.year})" if source.year else ""
