"""What keeps other web sites out of a server that has no token: the `Host` it answers to, the `Origin` it takes
requests from, the JSON it takes bodies as, and the headers its page is sent with.

Without a token a server on 127.0.0.1 is open to every page the user's browser opens. Three doors are shut here:
- DNS rebinding: a page on `evil.example` whose name is made to resolve to 127.0.0.1 reads the replies as its own
  origin. Its requests carry `Host: evil.example`, so only the names the operator serves under are answered
  (loopback names by default; `RAG_SERVE_ALLOWED_HOSTS` adds more, `*` any).
- Cross-site requests: a browser sends `Origin` with every cross-origin request and with same-origin POSTs. A
  request whose `Origin` is neither the server's own nor one of `RAG_SERVE_CORS_ORIGINS` is refused (403), GET
  included: a foreign page must not make the server work for it even if it cannot read the reply.
- Requests without a preflight: a form or a `text/plain` fetch is sent cross-site with no preflight. Every body
  this API takes is JSON, so a POST with a body must say `Content-Type: application/json` (415 otherwise).

Starlette's TrustedHostMiddleware answers a foreign host in plain text; this API's clients read one-line JSON
errors, so the check is written here (a set lookup).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .protocol import error_body

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

# The page loads only its own script and style sheet, talks only to its own server, and is never framed.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", PAGE_POLICY.encode()),
]


def host_name(host_header: str) -> str:
    """The name of a `Host` header without its port, lowercased (`[::1]:8000` → `::1`)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class SiteGuard:
    """ASGI middleware refusing foreign hosts (400), foreign origins (403) and non-JSON POST bodies (415), and
    adding the security headers to every response."""

    def __init__(self, app: ASGIApp, allowed_hosts: frozenset[str], allowed_origins: frozenset[str]) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.allowed_hosts = frozenset(host_name(h) for h in allowed_hosts) | LOOPBACK_NAMES
        self.allowed_origins = frozenset(o.rstrip("/").lower() for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
        refusal = self.refusal(scope, headers)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *COMMON_HEADERS]}
            await send(message)

        if refusal is not None:
            status, message = refusal
            await JSONResponse(error_body(scope["path"], status, message), status)(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if not self.any_host and host_name(host) not in self.allowed_hosts:
            return 400, (
                f"this server does not answer to the host {host_name(host)!r}: the operator can add it to "
                "RAG_SERVE_ALLOWED_HOSTS"
            )
        origin = headers.get("origin")
        if (
            origin is not None
            and not self.same_origin(origin, host)
            and origin.rstrip("/").lower() not in (self.allowed_origins)
        ):
            return 403, (
                f"requests from {origin[:100]!r} are not allowed: the operator can add the origin to "
                "RAG_SERVE_CORS_ORIGINS"
            )
        has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        if scope["method"] == "POST" and has_body:
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                shown = kind or "none"
                return 415, (
                    f"the request body must be JSON sent as Content-Type: application/json (got {shown}; curl: "
                    "--json '{…}')"
                )
        return None

    @staticmethod
    def same_origin(origin: str, host: str) -> bool:
        """Whether `origin` is this server as the browser reached it (scheme and the `Host` it sent)."""
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()
