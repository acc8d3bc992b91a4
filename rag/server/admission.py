"""A bound on the questions `rag serve` takes at once: past it, a 503 with `Retry-After` instead of a queue.

Every answer is CPU work on the same cores (about 0.2 s extractive on 2 cores, seconds with an LLM behind it), so
requests beyond what the machine answers in a few seconds only wait, each making the others' wait longer, until
clients time out having cost the server their whole answer anyway. Past `limit` questions in flight (answering or
waiting for a thread), a new one is refused at once and told to come back. Health checks, the page and paper
lookups are never refused.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .protocol import error_body

# The routes that answer or search: each runs retrieval (and maybe an LLM) on the shared cores.
ANSWERING = frozenset({"/api/ask", "/api/ask/stream", "/api/search", "/v1/chat/completions"})
RETRY_AFTER_SECONDS = 1


class Admission:
    """ASGI middleware counting the answering requests in flight, a streamed answer until its last byte.

    The counter lives on the event loop's thread (every ASGI call starts there), so it needs no lock.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in ANSWERING:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            await self.refuse(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the server is busy: {self.limit} questions are being answered; retry in a moment"
        response = JSONResponse(
            error_body(scope["path"], 503, message),
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
        await response(scope, receive, send)
