"""One line per request on `rag serve`'s stderr: when, who, what, the status, and how long it took.

    2026-12-02T03:58:11Z 127.0.0.1 POST /api/ask 200 231 ms
    2026-12-02T03:58:12Z 127.0.0.1 POST /api/ask/stream 200 240 ms 3.1 KB

The time is until the last byte of the response was handed to the server (a streamed answer's whole length, not
its first event). The path is logged without its query string: `/api/search?q=…` carries a user's question, and
an access log is no place for it. Uvicorn's own access log says none of the time and logs the query.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from typing import TextIO

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class AccessLog:
    """ASGI middleware writing one line per HTTP request to `stream` once its response is complete."""

    def __init__(self, app: ASGIApp, stream: TextIO | None = None) -> None:
        self.app, self.stream = app, stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0
        sent = 0

        async def record(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            # status 0: the client left (or the app failed) before a response began
            self.write(scope, status, (time.perf_counter() - started) * 1000, sent)

    def write(self, scope: Scope, status: int, ms: float, sent: int) -> None:
        client = scope.get("client")
        who = client[0] if client else "-"
        when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        size = f" {sent / 1024:.1f} KB" if sent >= 1024 else ""
        line = f"{when} {who} {scope['method']} {scope['path']} {status or '-'} {ms:.0f} ms{size}"
        print(line, file=self.stream or sys.stderr, flush=True)
