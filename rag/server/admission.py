"""A bound on the questions `rag serve` takes at once: past it, a 503 with `Retry-After` instead of a queue.

Every answer is CPU work on the same cores, so requests beyond what the machine answers within a client's patience
only wait, each making the others' wait longer, until clients time out having cost the server their whole answer
anyway. A new question is refused at once when the questions ahead of it would keep it waiting past
`RAG_SERVE_MAX_WAIT` seconds at the measured rate (work.py), or when `RAG_SERVE_MAX_PENDING` are already in flight
(answering or waiting for a worker). Health checks, the page, paper lookups, exports and CORS preflights are never
refused.
"""

from __future__ import annotations

import math

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .protocol import error_body
from .work import Ticket, Work, current_ticket

# The routes that answer, search or compare: each runs retrieval (and maybe an LLM, or the reranker over a topic's
# candidates: /api/trend) on the shared cores.
ANSWERING = frozenset(
    {"/api/ask", "/api/ask/stream", "/api/search", "/api/similar", "/api/trend", "/v1/chat/completions"}
)
RETRY_AFTER_SECONDS = 1


class Admission:
    """ASGI middleware counting the answering requests in flight, a streamed answer until its last byte, and
    feeding each one's worker time to `work`'s moving average.

    The counter lives on the event loop's thread (every ASGI call starts there), so it needs no lock.
    """

    def __init__(self, app: ASGIApp, work: Work, limit: int) -> None:
        self.app, self.work, self.limit = app, work, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in ANSWERING or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        work = self.work
        if work.in_flight >= self.limit:
            await self.refuse(scope, receive, send, f"{self.limit} questions are being answered", RETRY_AFTER_SECONDS)
            return
        wait = work.expected_wait()
        if wait > work.max_wait:
            retry = max(RETRY_AFTER_SECONDS, math.ceil(wait - work.max_wait))
            reason = f"a new question would wait about {wait:.0f} s behind {work.in_flight} others"
            await self.refuse(scope, receive, send, reason, retry)
            return
        ticket = Ticket()
        token = current_ticket.set(ticket)
        work.in_flight += 1
        try:
            await self.app(scope, receive, send)
            work.record(ticket)
        finally:
            work.in_flight -= 1
            current_ticket.reset(token)

    async def refuse(self, scope: Scope, receive: Receive, send: Send, reason: str, retry: int) -> None:
        message = f"the server is busy: {reason}; retry in a moment"
        headers = {"Retry-After": str(retry)}
        response = JSONResponse(error_body(scope["path"], 503, message), status_code=503, headers=headers)
        await response(scope, receive, send)
