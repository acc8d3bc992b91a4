"""Answer backends: given a question and retrieved sources, return the answer text (or stream it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InputError
from .base import Backend, Generation

if TYPE_CHECKING:
    from ..config import Settings
    from ..embedding import Embedder
    from ..policy import Policy

BACKENDS = ("extractive", "openai", "local")

__all__ = ["BACKENDS", "Backend", "Generation", "get_backend"]


def get_backend(name: str, settings: Settings, embedder: Embedder, policy: Policy) -> Backend:
    """The backend called `name`, configured from `settings`, choosing evidence under `policy`."""
    if name == "extractive":
        from .extractive import ExtractiveBackend

        return ExtractiveBackend(embedder, policy)
    if name == "openai":
        from .openai_compatible import OpenAICompatibleBackend

        return OpenAICompatibleBackend(settings, policy.quoted_papers)
    if name == "local":
        from .local import LocalBackend

        return LocalBackend(embedder, settings, policy)
    raise InputError(f"unknown backend {name!r} (choose from: {', '.join(BACKENDS)})")
