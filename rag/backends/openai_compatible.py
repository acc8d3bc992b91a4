"""Answers from any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through the one
client of `rag.llm` (its retries, errors and circuit breaker). Citations it writes are checked afterwards (and
while streaming) by `rag.citations`."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from ..llm import LLM, BadReply, StreamBroken, usage_of
from ..prompts import load_prompt, render
from ..query import Query
from ..text import split_sentences
from ..types import Source, Verdict
from .base import Generation

if TYPE_CHECKING:
    from ..config import Settings

ABSTAIN_MARKER = "INSUFFICIENT_EVIDENCE"


def format_sources(sources: list[Source], template: str, brief: frozenset[str] = frozenset()) -> str:
    """Each abstract fenced as data in its own <source> element; markup inside it is neutralised. A paper in
    `brief` (a list's member named, not quoted) gives only its first sentence: a list of 20 members would otherwise
    send 20 abstracts, past a 2,048-token server's context (Ollama's default)."""

    def clean(text: str) -> str:
        return text.replace("<", "‹").replace(">", "›").replace('"', "'")

    return "\n".join(
        render(
            template,
            id=clean(s.id),  # ingest's id rule leaves nothing to neutralise; a store written otherwise is not trusted
            year=str(s.year or ""),
            title=clean(s.title or ""),
            abstract=clean(_first_sentence(s.abstract or s.snippet) if s.id in brief else s.abstract or s.snippet),
        ).strip()
        for s in sources
    )


def _first_sentence(text: str) -> str:
    sentences = split_sentences(text)
    return sentences[0] if sentences else text


class OpenAICompatibleBackend:
    name = "openai"
    streams = True

    def __init__(self, settings: Settings, quoted_papers: int = 5) -> None:
        self.settings = settings
        self.llm = LLM(settings)
        self.quoted_papers = quoted_papers  # `Policy.quoted_papers`: a list's members after these are sent brief

    def messages(self, question: str, sources: list[Source], brief: frozenset[str] = frozenset()) -> list[dict]:
        override = self.settings.prompts_dir
        user = render(
            load_prompt("answer_user.md", override),
            sources=format_sources(sources, load_prompt("source.md", override), brief),
            question=question,
        )
        return [
            {"role": "system", "content": load_prompt("answer_system.md", override).strip()},
            {"role": "user", "content": user},
        ]

    def generate(
        self, query: Query, sources: list[Source], verdict: Verdict, stream: bool = True
    ) -> Generator[str, None, Generation]:
        request = {
            "model": self.settings.llm_model,
            "messages": self.messages(query.text, sources, verdict.listed_only(self.quoted_papers)),
            "temperature": 0,
            "max_tokens": self.settings.llm_max_tokens,
        }
        llm = self.llm
        client = llm.client()
        if stream:
            text, usage = yield from llm.call_stream(lambda: self._stream(client, request))
        else:
            text, usage = llm.call(lambda: llm.reply(client, request))
        abstained = text.strip().startswith(ABSTAIN_MARKER)
        return Generation(text="" if abstained else text, usage=usage, abstained=abstained)

    # -- one streamed try ------------------------------------------------------------------------

    def _stream(self, client, request: dict) -> Generator[str, None, tuple[str, dict | None]]:
        """One streamed try: the answer's pieces as they come; returns the whole text and the token usage."""
        pieces: list[str] = []
        usage = None
        finished = False
        shown = False
        chunks = 0
        held: str | None = ""  # the abstention marker must not be streamed to the user
        response = None
        try:
            response = client.chat.completions.create(**request, stream=True)
            for chunk in response:
                chunks += 1
                usage = usage_of(getattr(chunk, "usage", None)) or usage
                choices = getattr(chunk, "choices", None)
                if not isinstance(choices, list) or not choices:
                    continue
                finished = finished or bool(getattr(choices[0], "finish_reason", None))
                delta = getattr(getattr(choices[0], "delta", None), "content", None)
                if not delta or not isinstance(delta, str):
                    continue
                pieces.append(delta)
                if held is not None:
                    held += delta
                    if ABSTAIN_MARKER.startswith(held.strip()) or held.strip().startswith(ABSTAIN_MARKER):
                        continue
                    delta, held = held, None
                shown = True
                yield delta
            if not chunks:  # a 200 that is not an event stream at all (a proxy's page, plain JSON)
                kind = getattr(response, "response", None)
                kind = kind.headers.get("content-type", "no content type") if kind is not None else "nothing"
                raise BadReply(f"returned no answer stream (got {kind.split(';')[0]})")
            if not finished:
                # Every OpenAI-compatible server ends a complete answer with a finish_reason; a connection
                # closed without one (and without an error) is an answer cut short, not a short answer.
                raise BadReply("ended before the model finished", stream=True)
        except Exception as exc:
            failure = self.llm.failure(exc, stream=True)
            if failure is None:
                raise
            if shown:
                raise StreamBroken(failure) from None
            raise
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()  # a reader who left (the generator closed) ends the upstream stream too
        if held and not held.strip().startswith(ABSTAIN_MARKER):
            yield held
        return "".join(pieces), usage
