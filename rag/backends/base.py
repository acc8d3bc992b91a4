"""The one interface every answer backend implements: text pieces yielded as they come, then a `Generation`."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Protocol

from ..query import Query
from ..types import Source, Verdict


@dataclass
class Generation:
    """What a backend produced: raw text (citations not yet checked), token usage if known, and for an answer
    quoting abstracts, which of each paper's sentences it quoted."""

    text: str
    usage: dict | None = None
    abstained: bool = False
    quoted: dict[str, list[int]] = field(default_factory=dict)


class Backend(Protocol):
    name: str
    streams: bool  # whether the pieces it yields are the answer as it is written (else one piece at the end)

    def generate(
        self, query: Query, sources: list[Source], verdict: Verdict, stream: bool = True
    ) -> Generator[str, None, Generation]:
        """Answer `query` from `sources` (the judge's `verdict` says on which evidence): yield text pieces, return
        the whole `Generation`. `stream=False`: the caller wants the answer whole (an LLM is asked for it whole)."""
        ...
