"""The one interface every answer backend implements."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..query import Query
    from ..retrieval import Source


@dataclass
class Generation:
    """What a backend produced: raw text (citations not yet checked) and token usage if known."""

    text: str
    usage: dict | None = None
    abstained: bool = False


class Backend(Protocol):
    name: str
    streams: bool

    def generate(self, query: Query, sources: list[Source], on_text: Callable[[str], None] | None = None) -> Generation:
        """Answer `query` from `sources`; a streaming backend also calls `on_text` with each piece."""
        ...
