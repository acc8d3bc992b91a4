"""The one OpenAI-compatible client (OpenAI, vLLM, Ollama, llama.cpp server), shared by the openai backend,
chat's follow-up rewrite, the eval's judge and the embeddings endpoint: how the `openai` SDK client is built,
our retry policy, SDK failures as one-line `LLMError`s, API-key redaction, and a circuit breaker that stops
every later question from paying the retries of an endpoint that just failed.

The `openai` SDK (and httpx) are imported inside functions: `import rag` must stay light.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from .errors import LLMError

if TYPE_CHECKING:
    from .config import Settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"

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

# Statuses that say "this request", not "this endpoint": a prompt too long for the model's context (400, 413),
# a parameter the server rejects for this request (422). The next question sends a different request, so
# these do not open the circuit breaker. Every other failure does, 4xx included: a wrong key (401, 403) or
# an unknown model or path (404) fails every question the same way until the user fixes the configuration,
# so each turn would only pay a round trip to be told so again.
REQUEST_STATUSES = frozenset({400, 413, 422})

T = TypeVar("T")


def openai_client(base_url: str | None, api_key: str | None, timeout: float, max_retries: int = 0):
    """An `openai.OpenAI` client. `max_retries=0` (our policy above, see `LLM.call`) unless a caller keeps the
    SDK's; local servers (vLLM, Ollama, llama.cpp) need no key, but the SDK insists on one."""
    from openai import OpenAI

    return OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=max_retries)


def redact(message: str, key: str | None) -> str:
    """`message` with the API key replaced, should it ever appear in one."""
    return message.replace(key, "***") if key and len(key) >= 6 else message


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


@dataclass
class Failure:
    """What went wrong with one try, in words for the user, and whether trying again may help."""

    message: str
    retry: bool = False
    retry_after: float | None = None  # seconds the server asked for (429 Retry-After)
    opens: bool = True  # whether it opens the circuit breaker (see REQUEST_STATUSES)


class StreamBroken(Exception):
    """A stream failed after its text had reached the user: never retried (it would print twice)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class BadReply(Exception):
    """A reply that arrived but is not a usable answer."""

    def __init__(self, message: str, stream: bool = False) -> None:
        super().__init__(message)
        self.stream = stream


class _GaveUp(Exception):
    """The retries are spent (or trying again would not help): `failure` after `tries` tries."""

    def __init__(self, failure: Failure, tries: int) -> None:
        super().__init__(failure.message)
        self.failure, self.tries = failure, tries


# -- the circuit breaker ---------------------------------------------------------------------------------


class Breaker:
    """One endpoint's circuit breaker. Closed: calls go through. A failed call (its retries spent) opens it:
    for `cooldown` seconds every call fails at once with a message saying so, and the caller falls back (the
    extractive answer). After the cooldown it is half-open: the next call is let through for one try (others
    still fail at once meanwhile); its success closes the breaker, its failure opens it for another cooldown."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.cause: str | None = None  # why it opened, for the message; None while closed
        self.opened_at = 0.0
        self.probing = False  # the half-open try is under way

    def admit(self, cooldown: float) -> bool:
        """Let a call through: True when it is the half-open try (one try only); `LLMError` while open."""
        with self._lock:
            if self.cause is None:
                return False
            waited = self._clock() - self.opened_at
            if waited >= cooldown and not self.probing:
                self.probing = True
                return True
            ago = "just now" if waited < 1 else f"{waited:.0f}s ago"
            if self.probing:
                raise LLMError(f"{self.cause}, {ago}; the endpoint is being tried again")
            raise LLMError(f"{self.cause}, {ago}; the endpoint is tried again in {math.ceil(cooldown - waited)}s")

    def succeeded(self) -> None:
        with self._lock:
            self.cause, self.probing = None, False

    def failed(self, cause: str) -> None:
        with self._lock:
            self.cause, self.opened_at, self.probing = cause, self._clock(), False

    def abandoned(self) -> None:
        """The half-open try ended without a verdict (Ctrl-C, a reader that left, a bug of ours): the next call
        tries instead."""
        with self._lock:
            self.probing = False


class Breakers:
    """The circuit breakers of one process, one per endpoint (base URL and model): chat turns, eval questions
    and a server's request threads that use the same endpoint share what it last did."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[tuple[str, str], Breaker] = {}

    def get(self, key: tuple[str, str]) -> Breaker:
        with self._lock:
            if key not in self._breakers:
                self._breakers[key] = Breaker(self._clock)
            return self._breakers[key]

    def clear(self) -> None:
        """Forget every endpoint's failures (tests: each starts with closed breakers)."""
        with self._lock:
            self._breakers.clear()


BREAKERS = Breakers()


# -- the client ------------------------------------------------------------------------------------------


class LLM:
    """The configured chat endpoint (`RAG_LLM_*`): client, retries, one-line errors, circuit breaker.

    `breakers=None` leaves the breaker out: the call neither waits on it nor opens it.
    """

    def __init__(self, settings: Settings, breakers: Breakers | None = BREAKERS) -> None:
        self.settings = settings
        self.base_url = settings.llm_base_url or DEFAULT_BASE_URL
        self.where = safe_url(self.base_url)  # what messages show: never credentials or a query string
        cooldown = settings.llm_cooldown
        self.breaker = breakers.get((self.base_url, settings.llm_model)) if breakers and cooldown > 0 else None

    def client(self):
        return openai_client(self.base_url, self.settings.llm_api_key, self.settings.llm_timeout)

    def complete(self, messages: list[dict], max_tokens: int) -> str:
        """One short, unstreamed reply (a chat follow-up rewritten, a judge's scores), with the same retries."""
        client = self.client()
        request = {"model": self.settings.llm_model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        return self.call(lambda: self.reply(client, request))[0]

    def reply(self, client, request: dict) -> tuple[str, dict | None]:
        """One try of an unstreamed chat completion: its text and token usage."""
        response = client.chat.completions.create(**request)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            # Not a chat completion at all (a proxy's HTML page, `{}`): the SDK hands such bodies back as is.
            raise BadReply("returned no answer (the reply is not a chat completion)")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if text is not None and not isinstance(text, str):
            raise BadReply("returned an answer that is not text")
        usage = getattr(response, "usage", None)
        return text or "", usage_of(usage)

    # -- failures and retries --------------------------------------------------------------------

    def call(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, tried again under the retry policy above; any failure ends as one `LLMError`.

        Behind the circuit breaker: while it is open this raises at once, without a request.
        """

        def once() -> Generator[str, None, T]:
            return attempt()
            yield  # a generator that yields nothing: the streamed policy, with nothing streamed

        return drain(self.call_stream(once))

    def call_stream(self, attempt: Callable[[], Generator[str, None, T]]) -> Generator[str, None, T]:
        """The pieces `attempt()` yields, and what it returns, under the same retry policy and breaker as `call`.

        A try that failed before yielding anything is tried again; once a piece was yielded, a failure is final
        (the reader has seen it). Closing this generator closes the try in flight (its HTTP stream).
        """
        tries = 1 + max(0, self.settings.llm_max_retries)
        breaker = self.breaker
        probe = breaker.admit(self.settings.llm_cooldown) if breaker else False
        verdict = False  # whether the endpoint's state is known after this call
        try:
            result = yield from self._retry(attempt, 1 if probe else tries)
            verdict = True
            if breaker:
                breaker.succeeded()
            return result
        except _GaveUp as given:
            verdict = True
            failure = given.failure
            if breaker and failure.opens:
                # The cause without "after N tries": the breaker's message tells the time instead.
                breaker.failed(redact(failure.message, self.settings.llm_api_key))
            elif breaker:
                breaker.succeeded()  # it answered: the endpoint is there, only this request was refused
            raise self.error(failure, given.tries) from None
        finally:
            if probe and not verdict and breaker:
                breaker.abandoned()

    def _retry(self, attempt: Callable[[], Generator[str, None, T]], tries: int) -> Generator[str, None, T]:
        started = time.monotonic()
        for number in range(1, tries + 1):
            try:
                return (yield from attempt())
            except StreamBroken as exc:
                raise _GaveUp(exc.failure, number) from None
            except Exception as exc:
                failure = self.failure(exc)
                if failure is None:
                    raise  # a bug of ours, not the endpoint's: let it show as one
                wait = self.wait(failure, number)
                left = self.settings.llm_timeout - (time.monotonic() - started)
                if wait is None or number == tries or wait >= left:
                    raise _GaveUp(failure, number) from None
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def wait(failure: Failure, number: int) -> float | None:
        """Seconds to wait before try `number + 1`, or None when trying again will not help."""
        if not failure.retry:
            return None
        if failure.retry_after is not None:
            return failure.retry_after if failure.retry_after <= RETRY_AFTER_CAP else None
        backoff = min(BACKOFF_FIRST * 2 ** (number - 1), BACKOFF_MAX)
        return backoff * (1 - 0.25 * random.random())  # jitter: many clients do not retry in lockstep

    def error(self, failure: Failure, tries: int) -> LLMError:
        message = failure.message + (f" after {tries} tries" if tries > 1 else "")
        return LLMError(redact(message, self.settings.llm_api_key))

    def failure(self, exc: BaseException, stream: bool = False) -> Failure | None:
        """An endpoint failure as one line for the user (never the request, which carries the key); None for
        exceptions that are not about the endpoint."""
        import httpx
        import openai

        where = self.where
        if isinstance(exc, BadReply):
            subject = "the answer stream from" if exc.stream else "the LLM endpoint at"
            return Failure(f"{subject} {where} {exc}")
        timeout = f"{self.settings.llm_timeout:g}s"
        if isinstance(exc, openai.APITimeoutError):
            return Failure(f"the LLM endpoint at {where} did not answer within {timeout}")
        if isinstance(exc, httpx.TimeoutException):  # raised while reading a stream that had begun
            return Failure(f"the answer stream from {where} stalled for more than {timeout}")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__.__class__.__name__ if exc.__cause__ else "connection error"
            return Failure(f"cannot reach the LLM endpoint at {where} ({cause})", retry=True)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retry_after = _retry_after(exc.response.headers) if status == 429 else None
            reason = f"HTTP {status} ({_status_message(exc)})"
            if retry_after is not None:
                reason += f", retry after {retry_after:g}s"
            retry = status in RETRY_STATUSES or status >= 500
            return Failure(
                f"the LLM endpoint at {where} answered {reason}",
                retry=retry,
                retry_after=retry_after,
                opens=status not in REQUEST_STATUSES,
            )
        if isinstance(exc, httpx.HTTPError):  # raised while reading a stream: the connection broke
            return Failure(f"the answer stream from {where} broke off ({exc.__class__.__name__})", retry=True)
        if isinstance(exc, json.JSONDecodeError):
            if stream:
                return Failure(f"the answer stream from {where} sent an event that is not JSON")
            return Failure(f"the LLM endpoint at {where} sent a malformed reply (not JSON)")
        if isinstance(exc, openai.OpenAIError):  # e.g. an error event inside a stream
            detail = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else exc.__class__.__name__
            return Failure(f"the LLM endpoint at {where} failed ({detail})")
        return None


def usage_of(usage) -> dict | None:
    """Token usage from a response or stream chunk, as a dict; None when the server sent none."""
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


def _status_message(exc) -> str:
    """A short reason from an error response, never the request (which could carry the key)."""
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else str(error)
    message = (message or getattr(exc, "message", "") or "no detail").strip().splitlines()[0]
    return message[:160]


def drain(pieces: Generator[object, None, T]) -> T:
    """What a generator returns, its pieces left unread (the whole answer of a streaming generator)."""
    while True:
        try:
            next(pieces)
        except StopIteration as done:
            return done.value
