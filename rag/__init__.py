"""Question answering over research-paper abstracts, with citations to the papers that say it.

`from rag import Papers` is the Python API (rag/api.py); it loads on first use, so `import rag` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["Answer", "Event", "NotFoundError", "Paper", "Papers", "Query", "RagError", "Source", "__version__"]

if TYPE_CHECKING:
    from .api import Papers
    from .corpus import Paper
    from .errors import NotFoundError, RagError
    from .query import Query
    from .types import Answer, Event, Source

_HOMES = {
    "Papers": "api",
    "Event": "types",
    "Answer": "types",
    "Paper": "corpus",
    "Query": "query",
    "Source": "types",
    "NotFoundError": "errors",
    "RagError": "errors",
}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rag' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{home}", __name__), name)
