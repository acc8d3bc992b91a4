"""Answers from any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via the
`openai` SDK. Citations it writes are checked afterwards (and while streaming) by `rag.citations`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..errors import LLMError
from ..prompts import load_prompt, render
from .base import Generation

if TYPE_CHECKING:
    from ..config import Settings
    from ..retrieval import Source

ABSTAIN_MARKER = "INSUFFICIENT_EVIDENCE"


def format_sources(sources: list[Source], template: str) -> str:
    """Each abstract fenced as data in its own <source> element; markup inside it is neutralised."""

    def clean(text: str) -> str:
        return text.replace("<", "‹").replace(">", "›").replace('"', "'")

    return "\n".join(
        render(
            template,
            id=s.id,
            year=str(s.year or ""),
            title=clean(s.title or ""),
            abstract=clean(s.abstract or s.snippet),
        ).strip()
        for s in sources
    )


class OpenAICompatibleBackend:
    name = "openai"
    streams = True

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.base_url = settings.llm_base_url or "https://api.openai.com/v1"

    def _client(self):
        from openai import OpenAI

        return OpenAI(
            base_url=self.base_url,
            # Local servers (vLLM, Ollama, llama.cpp) need no key, but the SDK insists on one.
            api_key=self.settings.llm_api_key or "not-needed",
            timeout=self.settings.llm_timeout,
            max_retries=self.settings.llm_max_retries,
        )

    def messages(self, question: str, sources: list[Source]) -> list[dict]:
        override = self.settings.prompts_dir
        user = render(
            load_prompt("answer_user.md", override),
            sources=format_sources(sources, load_prompt("source.md", override)),
            question=question,
        )
        return [
            {"role": "system", "content": load_prompt("answer_system.md", override).strip()},
            {"role": "user", "content": user},
        ]

    def generate(
        self, question: str, sources: list[Source], on_text: Callable[[str], None] | None = None
    ) -> Generation:
        request = {
            "model": self.settings.llm_model,
            "messages": self.messages(question, sources),
            "temperature": 0,
            "max_tokens": self.settings.llm_max_tokens,
        }
        with self._errors():
            client = self._client()
            if on_text is None:
                response = client.chat.completions.create(**request)
                if not response.choices:
                    raise LLMError(f"the LLM endpoint at {self.base_url} returned no choices")
                text = response.choices[0].message.content or ""
                usage = response.usage.model_dump() if response.usage else None
            else:
                text, usage = self._stream(client, request, on_text)
        abstained = text.strip().startswith(ABSTAIN_MARKER)
        return Generation(text="" if abstained else text, usage=usage, abstained=abstained)

    def complete(self, messages: list[dict], max_tokens: int) -> str:
        """One short, unstreamed reply (e.g. rewriting a chat follow-up), with the same one-line errors."""
        with self._errors():
            response = self._client().chat.completions.create(
                model=self.settings.llm_model, messages=messages, temperature=0, max_tokens=max_tokens
            )
            if not response.choices:
                raise LLMError(f"the LLM endpoint at {self.base_url} returned no choices")
            return response.choices[0].message.content or ""

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """SDK failures → `LLMError` with one line for the user (never the request, which may carry the key)."""
        import openai

        try:
            yield
        except openai.APITimeoutError:
            raise LLMError(
                f"the LLM endpoint at {self.base_url} did not answer within {self.settings.llm_timeout:g}s"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__.__class__.__name__ if exc.__cause__ else "connection error"
            raise LLMError(f"cannot reach the LLM endpoint at {self.base_url} ({cause})") from None
        except openai.APIStatusError as exc:
            reason = f"HTTP {exc.status_code} ({_status_message(exc)})"
            raise LLMError(f"the LLM endpoint at {self.base_url} answered {reason}") from None
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM endpoint at {self.base_url} failed ({exc.__class__.__name__})") from None

    def _stream(self, client, request: dict, on_text: Callable[[str], None]) -> tuple[str, dict | None]:
        pieces: list[str] = []
        usage = None
        held = ""  # the abstention marker must not be streamed to the user
        for chunk in client.chat.completions.create(**request, stream=True):
            if getattr(chunk, "usage", None):
                usage = chunk.usage.model_dump()
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta.content or ""
            if not delta:
                continue
            pieces.append(delta)
            if held is not None:
                held += delta
                if ABSTAIN_MARKER.startswith(held.strip()) or held.strip().startswith(ABSTAIN_MARKER):
                    continue
                delta, held = held, None
            on_text(delta)
        if held and not held.strip().startswith(ABSTAIN_MARKER):
            on_text(held)
        return "".join(pieces), usage


def _status_message(exc) -> str:
    """A short reason from an error response, never the request (which could carry the key)."""
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else str(error)
    message = (message or getattr(exc, "message", "") or "no detail").strip().splitlines()[0]
    return message[:160]
