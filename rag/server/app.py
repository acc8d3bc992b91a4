"""The ASGI app of `rag serve`: a thin client of `rag.Papers`, like the CLI.

    GET  /                      the web page (static/), `/?q=…` runs a question on load
    GET  /healthz               {"status": "ok"}
    GET  /api/info              papers, store, backend, and the years, venues, areas and statuses to filter by
    POST /api/ask               {question, k?, year?, venue?, area?, status?, backend?, history?} → `ask --json`
    POST /api/ask/stream        the same as Server-Sent Events: query, sources, text…, warning, answer (or error)
    GET  /api/search?q=&k=&year=&venue=&area=&status=   the `search --json` object
    GET  /api/papers/{id}       the paper, its abstract also cut into the sentences answers quote (404 if unknown)
    GET  /api/similar?id=&k=&year=&venue=&area=&status=  papers like a stored paper (`wire.similar_json`)
    POST /api/similar           {text, k?, year?, venue?, area?, status?}: papers like a text (an abstract, a draft)
    GET  /api/trend?topic=&year=&venue=&area=&status=    how many papers are on a topic, by year (`wire.trend_json`)
    GET  /api/export?ids=ID1,ID2&format=bibtex|markdown|csv   those papers as that text, in that order
    `?format=bibtex|markdown|csv` on /api/ask (the cited papers), /api/search, /api/similar and /api/trend (the
    members): that text instead of JSON
    POST /v1/chat/completions, GET /v1/models   OpenAI-compatible (openai_compat.py)

Every error a request can cause is a 4xx with a one-line JSON body; anything unexpected is a 500 with a one-line
body (the traceback goes to the server's stderr only). The core's work is CPU-bound and blocking, so it runs in
the thread pool, never on the event loop; the store, the models and the BM25 index are opened once, at startup,
and shared (their lazy caches are filled there, before two requests could race to fill them).
"""

from __future__ import annotations

import hmac
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..config import K_MAX, K_MIN
from ..errors import RagError
from ..followups import Resolution
from ..query import MAX_QUESTION_CHARS, parse
from ..types import Event
from ..wire import answer_json, event_json, paper_json, search_json, similar_json, trend_json
from .admission import Admission
from .guard import SiteGuard
from .openai_compat import openai_router
from .protocol import (
    MAX_BODY_BYTES,
    SSE_HEADERS,
    ApiError,
    AskRequest,
    FiltersParams,
    FormatParam,
    SimilarRequest,
    answer_events,
    check_backend_choice,
    cited,
    client_message,
    error_body,
    exported,
    final_answer,
    sse_message,
    status_of,
    validation_message,
)
from .work import ClientGone, Departure, EventStream, Work

if TYPE_CHECKING:
    from ..api import Papers

T = TypeVar("T")
STATIC = FilePath(__file__).parent / "static"
MAX_EXPORT_IDS = 300  # papers one /api/export names: a reference list, or a count's members (rag.trend reads 300)


# -- the body limit -----------------------------------------------------------------------------------------


class BodyLimit:
    """Refuses a request body over `limit` bytes with a 413, before any of it is parsed (declared or not)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self.refuse(scope, send)
            return
        body = b""
        while True:  # bodies here are small: read it whole, counting, then hand it on
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self.refuse(scope, send)
                return
            if not message.get("more_body"):
                break
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # then whatever comes: a disconnect while streaming

        await self.app(scope, replay, send)

    async def refuse(self, scope: Scope, send: Send) -> None:
        message = f"the request body is over {self.limit // 1024} KB"
        response = JSONResponse(error_body(scope["path"], 413, message), status_code=413)
        await response(scope, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


# -- the app ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServeOptions:
    """How `rag serve` guards and paces itself (the `RAG_SERVE_*` settings, read by the CLI)."""

    token: str | None = None  # every /api and /v1 request needs `Authorization: Bearer <token>`
    cors_origins: tuple[str, ...] = ()  # other sites' pages that may call the API (guard.py, CORS)
    allowed_hosts: tuple[str, ...] = ()  # `Host` names answered besides loopback ("*": any; guard.py)
    backends: frozenset[str] = frozenset({"extractive"})  # the backends a request may choose
    access_log: bool = False  # a line per request on stderr (access_log.py)
    max_pending: int = 64  # answering requests in flight at most (admission.py)
    max_wait: float = 10.0  # seconds a newly admitted question may expect to wait (admission.py, work.py)
    workers: int = 2  # threads doing the core's work (work.py)
    pace: float | None = None  # seconds per answer measured by a warm-up already done (`rag serve` does it first)


def create_app(papers: Papers, options: ServeOptions | None = None) -> FastAPI:
    """The app over `papers`, guarded and paced by `options`."""
    options = options or ServeOptions()
    token = options.token
    work = Work(options.workers, options.max_wait)
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        # Open the store, load both models and the BM25 index and the speller's vocabulary now, in one thread,
        # so the first request is not the slow one and no two requests race to fill a lazy cache.
        work.seconds_per_answer = options.pace if options.pace is not None else await work.run(warm_up, papers)
        yield
        work.shutdown()

    # No /docs page: Swagger UI comes from a CDN, and the page must work offline. /openapi.json stays.
    app = FastAPI(title="rag-papers", version=__version__, docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.papers = papers
    app.state.work = work

    def require_token(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise ApiError(401, "a bearer token is required: send `Authorization: Bearer <RAG_SERVE_TOKEN>`")

    # The store's path is the operator's business: a client sees which kind of store answers, not where it lives.
    store_label = papers.settings.store_label
    store_kind = "a Chroma server" if papers.settings.chroma_url else "an embedded Chroma store"

    @app.exception_handler(ApiError)
    async def on_api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(error_body(request.url.path, exc.status, exc.message), exc.status, headers=headers)

    @app.exception_handler(RagError)
    async def on_rag_error(request: Request, exc: RagError) -> JSONResponse:
        status = status_of(exc)
        return JSONResponse(error_body(request.url.path, status, client_message(exc, store_label)), status)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(request.url.path, 422, validation_message(exc)), 422)

    @app.exception_handler(HTTPException)  # Starlette's: unknown routes and methods too, not only FastAPI's raises
    async def on_http(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse(error_body(request.url.path, exc.status_code, str(exc.detail)), exc.status_code)

    @app.exception_handler(ClientGone)
    async def on_gone(request: Request, exc: ClientGone) -> Response:
        return Response(status_code=499)  # nobody reads it: the status is for the access log (nginx's "client left")

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        traceback.print_exception(exc, file=sys.stderr)  # for the operator; the client gets one line
        return JSONResponse(error_body(request.url.path, 500, f"internal error: {type(exc).__name__}"), 500)

    api = APIRouter(prefix="/api", dependencies=[Depends(require_token)])

    @api.get("/info")
    def info() -> dict:
        return {**papers.info(), "store": store_kind}

    async def off_loop(request: Request, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` on a worker, as an answer's steps run: not started at all if the client has left by then."""
        departure = Departure(request.receive)
        try:
            return await work.run(fn, *args, departure=departure)
        finally:
            departure.stop()

    @api.post("/ask", response_model=None)
    async def ask(body: AskRequest, request: Request, fmt: FormatParam) -> dict | Response:
        check_backend_choice(body, options.backends)
        departure = Departure(request.receive)
        events = await work.run(answer_events, papers, body, departure=departure)
        try:
            answer, resolution = final_answer(await work.drain(events, departure))
        finally:
            departure.stop()
            await work.close(events)
        return exported(cited(answer), fmt) if fmt else answer_json(answer, body.question, resolution)

    @api.post("/ask/stream")
    async def ask_stream(body: AskRequest) -> EventStream:
        check_backend_choice(body, options.backends)
        events = await work.run(answer_events, papers, body)
        # The first event is awaited here, so a bad question is a 4xx, not an error inside a 200 stream.
        first = await work.pull(events)
        return EventStream(work, sse(first, events, body.question, store_label), SSE_HEADERS)

    @api.get("/search", response_model=None)
    async def search(
        q: Annotated[str, Query(max_length=MAX_QUESTION_CHARS, description="what to look for")],
        where: FiltersParams,
        fmt: FormatParam,
        k: Annotated[int | None, Query(ge=K_MIN, le=K_MAX)] = None,
    ) -> dict | Response:
        query = parse(q, year=where.year, venue=where.venue, area=where.area, status=where.status)
        retrieval = await work.run(papers.search_query, query, k)
        return exported(retrieval.sources, fmt) if fmt else search_json(query, retrieval.sources)

    @api.get("/papers/{paper_id:path}")  # an id may hold "/" (arXiv's old ids: hep-th/9901001)
    def paper(paper_id: Annotated[str, Path(max_length=200)]) -> dict:
        return paper_json(papers.get(paper_id), sentences=True)

    @api.get("/similar", response_model=None)
    async def similar_to_paper(
        request: Request,
        paper_id: Annotated[str, Query(alias="id", min_length=1, max_length=200, description="a stored paper")],
        where: FiltersParams,
        fmt: FormatParam,
        k: Annotated[int, Query(ge=K_MIN, le=K_MAX)] = 5,
    ) -> dict | Response:
        args = (paper_id, None, k, where.year, where.venue, where.area, where.status)
        paper, found = await off_loop(request, papers.similar, *args)
        return exported([item.source for item in found], fmt) if fmt else similar_json(paper, found)

    @api.post("/similar", response_model=None)
    async def similar_to_text(body: SimilarRequest, request: Request, fmt: FormatParam) -> dict | Response:
        args = (None, body.text, body.k, body.year, body.venue, body.area, body.status)
        paper, found = await off_loop(request, papers.similar, *args)
        return exported([item.source for item in found], fmt) if fmt else similar_json(paper, found)

    @api.get("/trend", response_model=None)
    async def trend(
        request: Request,
        topic: Annotated[str, Query(max_length=MAX_QUESTION_CHARS, description="a topic, or a how-many question")],
        where: FiltersParams,
        fmt: FormatParam,
    ) -> dict | Response:
        args = (topic, where.year, where.venue, where.area, where.status)
        counted = await off_loop(request, papers.trend, *args)
        return exported(counted.members, fmt) if fmt else trend_json(counted)

    @api.get("/export", response_model=None)
    def export_papers(
        ids: Annotated[str, Query(max_length=16_000, description="paper ids, comma-separated")],
        fmt: FormatParam,
    ) -> Response:
        wanted = list(dict.fromkeys(i.strip() for i in ids.split(",") if i.strip()))  # in order, each once
        if not wanted:
            raise ApiError(400, "ids: name at least one paper (ids=ID1,ID2)")
        if len(wanted) > MAX_EXPORT_IDS:
            raise ApiError(400, f"ids: at most {MAX_EXPORT_IDS} papers at once, not {len(wanted)}")
        return exported([papers.get(paper_id) for paper_id in wanted], fmt or "bibtex")

    app.include_router(api)
    app.include_router(openai_router(papers, require_token, work))

    # Async, so health checks and the page never wait behind answers for a thread of the pool.
    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # Outermost last: the access log sees everything; CORS headers reach every refusal below it; the guard refuses
    # a foreign host or origin before a body is read or a question counted.
    app.add_middleware(Admission, work=work, limit=options.max_pending)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    hosts, origins = frozenset(options.allowed_hosts), frozenset(options.cors_origins)
    app.add_middleware(SiteGuard, allowed_hosts=hosts, allowed_origins=origins)
    if options.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(options.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    if options.access_log:
        from .access_log import AccessLog

        app.add_middleware(AccessLog)
    return app


def warm_up(papers: Papers) -> float:
    """Everything a first question loads, loaded (the store, the embedder, the BM25 index, the reranker); then the
    seconds one extractive answer takes, the first estimate of the pace (work.py)."""
    papers.info()
    papers.search("warm up the retrieval models", k=1)
    started = time.perf_counter()
    papers.ask("which papers study graph neural networks?", backend="extractive")
    return time.perf_counter() - started


def _first(events: Iterator[Event]) -> Event | None:
    return next(events, None)


def sse(first: Event | None, events: Iterator[Event], question: str, store_label: str = "") -> Iterator[str]:
    """The events as Server-Sent Events (a sync iterator: Starlette runs it in the thread pool). An error after
    the stream began becomes an `error` event with its one line."""
    resolution: Resolution | None = None
    try:
        event = first
        while event is not None:
            if event.type == "query":
                resolution = event.resolved
            yield sse_message(event.type, event_json(event, question, resolution))
            event = next(events, None)
    except RagError as exc:
        yield sse_message("error", {"type": "error", "error": client_message(exc, store_label)})
    except Exception as exc:  # the stream has begun: the client gets one line, the operator the traceback
        traceback.print_exception(exc, file=sys.stderr)
        yield sse_message("error", {"type": "error", "error": f"internal error: {type(exc).__name__}"})
    finally:
        close = getattr(events, "close", None)
        if close:
            close()  # a client that left stops the answer at its next piece
