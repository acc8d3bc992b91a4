"""Answers from any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via the
`openai` SDK. Citations it writes are checked afterwards (and while streaming) by `rag.citations`."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ..errors import LLMError
from ..prompts import load_prompt, render
from .base import Generation

if TYPE_CHECKING:
    from ..config import Settings
    from ..query import Query
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


# Retries. The SDK's own `max_retries` is turned off and this small policy used instead, because the SDK also
# retries a request that *timed out* (measured with openai 2.x against tests/llm_server.py: timeout 1 s and one
# retry sent a hung server two requests, so the default 60 s would keep a user waiting 120 s), and it sleeps
# for any Retry-After up to 120 s (a Retry-After of 5 s was waited out despite a 1 s timeout). Here:
# connection errors, 408/409/429 and 5xx are retried with exponential backoff (429 after its Retry-After when
# that is at most RETRY_AFTER_CAP); a timeout is never retried; a stream is never retried once text from it
# was shown; and no retry starts that would end past RAG_LLM_TIMEOUT seconds from the first try, so the whole
# call is bounded by about twice the timeout.
RETRY_AFTER_CAP = 30.0
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 4.0
RETRY_STATUSES = frozenset({408, 409, 429})

T = TypeVar("T")


@dataclass
class _Failure:
    """What went wrong with one try, in words for the user, and whether trying again may help."""

    message: str
    retry: bool = False
    retry_after: float | None = None  # seconds the server asked for (429 Retry-After)


class _StreamBroken(Exception):
    """A stream failed after its text had reached the user: never retried (it would print twice)."""

    def __init__(self, failure: _Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class OpenAICompatibleBackend:
    name = "openai"
    streams = True

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.base_url = settings.llm_base_url or "https://api.openai.com/v1"
        self.where = safe_url(self.base_url)  # what messages show: never credentials or a query string

    def _client(self):
        from openai import OpenAI

        return OpenAI(
            base_url=self.base_url,
            # Local servers (vLLM, Ollama, llama.cpp) need no key, but the SDK insists on one.
            api_key=self.settings.llm_api_key or "not-needed",
            timeout=self.settings.llm_timeout,
            max_retries=0,  # see RETRY_AFTER_CAP: our policy, not the SDK's
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

    def generate(self, query: Query, sources: list[Source], on_text: Callable[[str], None] | None = None) -> Generation:
        request = {
            "model": self.settings.llm_model,
            "messages": self.messages(query.text, sources),
            "temperature": 0,
            "max_tokens": self.settings.llm_max_tokens,
        }
        client = self._client()
        if on_text is None:
            text, usage = self._call(lambda: self._reply(client, request))
        else:
            text, usage = self._call(lambda: self._stream(client, request, on_text))
        abstained = text.strip().startswith(ABSTAIN_MARKER)
        return Generation(text="" if abstained else text, usage=usage, abstained=abstained)

    def complete(self, messages: list[dict], max_tokens: int) -> str:
        """One short, unstreamed reply (a chat follow-up rewritten, a judge's scores), with the same retries."""
        client = self._client()
        request = {"model": self.settings.llm_model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        return self._call(lambda: self._reply(client, request))[0]

    # -- one try ---------------------------------------------------------------------------------

    def _reply(self, client, request: dict) -> tuple[str, dict | None]:
        response = client.chat.completions.create(**request)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            # Not a chat completion at all (a proxy's HTML page, `{}`): the SDK hands such bodies back as is.
            raise _BadReply("returned no answer (the reply is not a chat completion)")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if text is not None and not isinstance(text, str):
            raise _BadReply("returned an answer that is not text")
        usage = getattr(response, "usage", None)
        return text or "", _usage(usage)

    def _stream(self, client, request: dict, on_text: Callable[[str], None]) -> tuple[str, dict | None]:
        pieces: list[str] = []
        usage = None
        finished = False
        shown = False
        chunks = 0
        held: str | None = ""  # the abstention marker must not be streamed to the user

        def show(text: str) -> None:
            nonlocal shown
            shown = True
            on_text(text)

        try:
            response = client.chat.completions.create(**request, stream=True)
            for chunk in response:
                chunks += 1
                usage = _usage(getattr(chunk, "usage", None)) or usage
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
                show(delta)
            if not chunks:  # a 200 that is not an event stream at all (a proxy's page, plain JSON)
                kind = getattr(response, "response", None)
                kind = kind.headers.get("content-type", "no content type") if kind is not None else "nothing"
                raise _BadReply(f"returned no answer stream (got {kind.split(';')[0]})")
            if not finished:
                # Every OpenAI-compatible server ends a complete answer with a finish_reason; a connection
                # closed without one (and without an error) is an answer cut short, not a short answer.
                raise _BadReply("ended before the model finished", stream=True)
        except Exception as exc:
            failure = self._failure(exc, stream=True)
            if failure is None:
                raise
            if shown:
                raise _StreamBroken(failure) from None
            raise
        if held and not held.strip().startswith(ABSTAIN_MARKER):
            show(held)
        return "".join(pieces), usage

    # -- failures and retries --------------------------------------------------------------------

    def _call(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, tried again under the retry policy above; any failure ends as one `LLMError`."""
        started = time.monotonic()
        tries = 1 + max(0, self.settings.llm_max_retries)
        for number in range(1, tries + 1):
            try:
                return attempt()
            except _StreamBroken as exc:
                raise self._error(exc.failure, number) from None
            except Exception as exc:
                failure = self._failure(exc)
                if failure is None:
                    raise  # a bug of ours, not the endpoint's: let it show as one
                wait = self._wait(failure, number)
                left = self.settings.llm_timeout - (time.monotonic() - started)
                if wait is None or number == tries or wait >= left:
                    raise self._error(failure, number) from None
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _wait(failure: _Failure, number: int) -> float | None:
        """Seconds to wait before try `number + 1`, or None when trying again will not help."""
        if not failure.retry:
            return None
        if failure.retry_after is not None:
            return failure.retry_after if failure.retry_after <= RETRY_AFTER_CAP else None
        backoff = min(BACKOFF_FIRST * 2 ** (number - 1), BACKOFF_MAX)
        return backoff * (1 - 0.25 * random.random())  # jitter: many clients do not retry in lockstep

    def _error(self, failure: _Failure, tries: int) -> LLMError:
        message = failure.message + (f" after {tries} tries" if tries > 1 else "")
        return LLMError(redact(message, self.settings.llm_api_key))

    def _failure(self, exc: BaseException, stream: bool = False) -> _Failure | None:
        """An endpoint failure as one line for the user (never the request, which carries the key); None for
        exceptions that are not about the endpoint."""
        import httpx
        import openai

        where = self.where
        if isinstance(exc, _BadReply):
            subject = "the answer stream from" if exc.stream else "the LLM endpoint at"
            return _Failure(f"{subject} {where} {exc}")
        timeout = f"{self.settings.llm_timeout:g}s"
        if isinstance(exc, openai.APITimeoutError):
            return _Failure(f"the LLM endpoint at {where} did not answer within {timeout}")
        if isinstance(exc, httpx.TimeoutException):  # raised while reading a stream that had begun
            return _Failure(f"the answer stream from {where} stalled for more than {timeout}")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__.__class__.__name__ if exc.__cause__ else "connection error"
            return _Failure(f"cannot reach the LLM endpoint at {where} ({cause})", retry=True)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retry_after = _retry_after(exc.response.headers) if status == 429 else None
            reason = f"HTTP {status} ({_status_message(exc)})"
            if retry_after is not None:
                reason += f", retry after {retry_after:g}s"
            retry = status in RETRY_STATUSES or status >= 500
            return _Failure(f"the LLM endpoint at {where} answered {reason}", retry=retry, retry_after=retry_after)
        if isinstance(exc, httpx.HTTPError):  # raised while reading a stream: the connection broke
            return _Failure(f"the answer stream from {where} broke off ({exc.__class__.__name__})", retry=True)
        if isinstance(exc, json.JSONDecodeError):
            if stream:
                return _Failure(f"the answer stream from {where} sent an event that is not JSON")
            return _Failure(f"the LLM endpoint at {where} sent a malformed reply (not JSON)")
        if isinstance(exc, openai.OpenAIError):  # e.g. an error event inside a stream
            detail = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else exc.__class__.__name__
            return _Failure(f"the LLM endpoint at {where} failed ({detail})")
        return None


class _BadReply(Exception):
    """A reply that arrived but is not a usable answer."""

    def __init__(self, message: str, stream: bool = False) -> None:
        super().__init__(message)
        self.stream = stream


def _usage(usage) -> dict | None:
    dump = getattr(usage, "model_dump", None)
    return dump() if callable(dump) else None


def _retry_after(headers) -> float | None:
    """Seconds from `Retry-After` (or OpenAI's `retry-after-ms`); None when absent or unreadable."""
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        if headers.get("retry-after"):
            return max(0.0, float(headers["retry-after"]))
    except ValueError:
        pass  # an HTTP date, or garbage: treat as absent and back off on our own
    return None


def safe_url(url: str) -> str:
    """`url` without user:password@ and without a query string, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "the configured URL"


def redact(message: str, key: str | None) -> str:
    """`message` with the API key replaced, should it ever appear in one."""
    return message.replace(key, "***") if key and len(key) >= 6 else message


def _status_message(exc) -> str:
    """A short reason from an error response, never the request (which could carry the key)."""
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else str(error)
    message = (message or getattr(exc, "message", "") or "no detail").strip().splitlines()[0]
    return message[:160]
