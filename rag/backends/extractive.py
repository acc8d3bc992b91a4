"""The no-LLM backend: for each well-matching paper, quote the sentence(s) that best answer the question.

Deterministic, offline, and its citations are right by construction: code, not a model, attaches `[ID]`.
Which papers and sentences is `evidence.py`'s decision; this backend only writes them as an answer.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from ..evidence import Selector
from ..policy import Policy
from ..query import Query
from ..types import Source, Verdict
from .base import Generation

if TYPE_CHECKING:
    from ..embedding import Embedder


class ExtractiveBackend:
    name = "extractive"
    streams = False

    def __init__(self, embedder: Embedder, policy: Policy) -> None:
        self.selector = Selector(embedder, policy)

    def generate(
        self, query: Query, sources: list[Source], verdict: Verdict, stream: bool = True
    ) -> Generator[str, None, Generation]:
        kept, wants_list = self.selector.select(query, sources, verdict)
        if not kept:
            return Generation(text="", abstained=True)
        lines, quoted = [], {}
        for index, (source, ranked) in enumerate(kept):
            if source.id in verdict.beyond or (
                verdict.members is not None and index >= self.selector.policy.quoted_papers
            ):
                lines.append(f"- {source.label} [{source.id}]")  # a list's further members: title and id
                continue
            quote = self.selector.quote(source, ranked, wants_list, first=index == 0)
            lines.append(f"- {quote.text} [{source.id}]")
            quoted[source.id] = list(quote.sentences)
        count = len(lines)
        if wants_list:
            lead = f"{count} paper matches:" if count == 1 else f"{count} papers match:"
            # Every candidate read matched, the last too (and its sentences speak to the question): the list is cut.
            if verdict.more_may_match and kept[-1][0].id == verdict.beyond[-1]:
                lead = f"{count} papers match, and more may: the last paper read matched too (a larger -k reads more):"
        else:  # a question about a detail: what the papers say, not a list of matches
            lead = f"{count} paper says:" if count == 1 else f"{count} papers say:"
        text = lead + "\n" + "\n".join(lines)
        yield text
        return Generation(text=text, quoted=quoted)
