"""The no-LLM backend: for each well-matching paper, quote the sentence(s) that best answer the question.

Deterministic, offline, and its citations are right by construction: code, not a model, attaches `[ID]`.
Which papers and sentences is `evidence.py`'s decision; this backend only writes them as an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..evidence import Selector, quote
from .base import Generation

if TYPE_CHECKING:
    from ..config import Settings
    from ..embedding import Embedder
    from ..query import Query
    from ..retrieval import Source


class ExtractiveBackend:
    name = "extractive"
    streams = False

    def __init__(self, embedder: Embedder, settings: Settings) -> None:
        self.selector = Selector(embedder, settings)

    def generate(
        self, query: Query | str, sources: list[Source], on_text: Callable[[str], None] | None = None
    ) -> Generation:
        kept, wants_list = self.selector.select(query, sources)
        if not kept:
            return Generation(text="", abstained=True)
        lines = [
            f"- {quote(source, ranked, wants_list, first=index == 0)} [{source.id}]"
            for index, (source, ranked) in enumerate(kept)
        ]
        count = len(lines)
        if wants_list:
            lead = f"{count} paper matches:" if count == 1 else f"{count} papers match:"
        else:  # a question about a detail: what the papers say, not a list of matches
            lead = f"{count} paper says:" if count == 1 else f"{count} papers say:"
        return Generation(text=lead + "\n" + "\n".join(lines))
