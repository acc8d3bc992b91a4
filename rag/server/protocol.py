"""What the HTTP API and `/v1` share: the request models (bodies, and the filters and `format=` every GET route
reads), the error shapes, a request's answer as events or as one `ask --json` object, and a list of papers as
BibTeX, Markdown or CSV. The app (app.py), the admission limit (admission.py) and the OpenAI routes
(openai_compat.py) import this module; it imports none of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import Depends, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ..api import PastTurn
from ..config import K_MAX, K_MIN
from ..errors import InputError, NotFoundError, RagError, StoreError
from ..export import export
from ..followups import Resolution
from ..query import MAX_QUESTION_CHARS
from ..types import Answer, Event, Source
from ..wire import answer_json

if TYPE_CHECKING:
    from ..api import Papers

MAX_BODY_BYTES = 64 * 1024
MAX_HISTORY_TURNS = 20
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # no proxy may hold the stream back


# -- requests ---------------------------------------------------------------------------------------------

K = Annotated[int, Field(ge=K_MIN, le=K_MAX, description=f"papers to retrieve ({K_MIN}-{K_MAX})")]
Year = Annotated[int, Field(ge=1900, le=2100)]
Venue = Annotated[str, Field(min_length=1, max_length=100)]
Area = Annotated[str, Field(min_length=1, max_length=200, description="a primary area, as /api/info lists them")]
Status = Annotated[
    str, Field(min_length=1, max_length=20, description="accepted|oral|spotlight|poster|rejected|withdrawn")
]


class HistoryTurn(BaseModel):
    """An earlier question and the answer text shown for it (its [ID] citations say which papers it listed)."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=MAX_QUESTION_CHARS)
    answer: str = Field(max_length=MAX_BODY_BYTES)


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field ("yaer") is an error, not silently ignored
    question: str = Field(max_length=MAX_QUESTION_CHARS)
    k: K | None = None
    year: Year | None = None
    venue: Venue | None = None
    area: Area | None = None
    status: Status | None = None
    backend: Literal["extractive", "openai", "local"] | None = None
    history: list[HistoryTurn] | None = Field(None, max_length=MAX_HISTORY_TURNS)

    def past_turns(self) -> list[PastTurn] | None:
        return None if self.history is None else [PastTurn(t.question, t.answer) for t in self.history]


class SimilarRequest(BaseModel):
    """Papers like a text: an abstract or a draft paragraph (POST /api/similar; a stored paper: GET ?id=)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=MAX_BODY_BYTES, description="an abstract or a draft paragraph (5 words at least)")
    k: K = 5
    year: Year | None = None
    venue: Venue | None = None
    area: Area | None = None
    status: Status | None = None


@dataclass(frozen=True)
class Filters:
    """The year, venue, primary area and decision a GET route keeps, as `?year=&venue=&area=&status=`."""

    year: int | None = None
    venue: str | None = None
    area: str | None = None
    status: str | None = None


def query_filters(
    year: Annotated[int | None, Query(ge=1900, le=2100)] = None,
    venue: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    area: Annotated[str | None, Query(min_length=1, max_length=200, description="a primary area")] = None,
    status: Annotated[
        str | None, Query(min_length=1, max_length=20, description="accepted|oral|spotlight|poster|rejected|withdrawn")
    ] = None,
) -> Filters:
    return Filters(year, venue, area, status)


def query_format(
    fmt: Annotated[
        str | None,
        Query(alias="format", max_length=20, description="bibtex|markdown|csv: the listed papers as that text"),
    ] = None,
) -> str | None:
    """`?format=`, checked before any work: an unknown one is export's own one-line `InputError` (a 400)."""
    if fmt is not None:
        export((), fmt)
    return fmt


FiltersParams = Annotated[Filters, Depends(query_filters)]
FormatParam = Annotated[str | None, Depends(query_format)]


# -- errors -------------------------------------------------------------------------------------------------


class ApiError(Exception):
    """A request the server refuses, with the status and the one line to say why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def status_of(exc: RagError) -> int:
    """The HTTP status for an error of the core: the caller's mistake (4xx), or the store's state (503)."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, InputError):
        return 400
    if isinstance(exc, StoreError):
        return 503
    return 500


def one_line(text: str) -> str:
    return " ".join(str(text).split()) or "error"


def client_message(exc: BaseException, store_label: str) -> str:
    """An error of the core as a client reads it: one line, the store's path (the operator's business) replaced."""
    message = one_line(str(exc))
    return message.replace(store_label, "the server's store") if store_label else message


def error_body(path: str, status: int, message: str) -> dict:
    """`{"error": "…"}` for /api; OpenAI's shape for /v1, so its clients show the message."""
    message = one_line(message)
    if path.startswith("/v1"):
        kind = "invalid_request_error" if status < 500 else "server_error"
        if status == 401:
            kind = "authentication_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"error": message}


def validation_message(exc: RequestValidationError) -> str:
    """The first problem pydantic found, as one line a user can act on."""
    errors = exc.errors()
    if not errors:
        return "bad request"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON"
    if tuple(first.get("loc", ())) == ("body",) and first.get("type") in ("model_attributes_type", "dict_type"):
        return "the request body must be a JSON object"
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path"))
    if first.get("type") == "missing":
        return f"{where or 'the request body'} is required"
    return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "bad request"))


def check_backend_choice(body: AskRequest, enabled: frozenset[str]) -> None:
    """A request may choose only a backend the operator enabled: another would make the server call out (or load
    a model) on a stranger's say-so."""
    if body.backend is not None and body.backend not in enabled:
        names = ", ".join(sorted(enabled))
        raise ApiError(400, f"the backend {body.backend!r} is not enabled on this server (it answers with: {names})")


# -- a request's answer -------------------------------------------------------------------------------------


def answer_events(papers: Papers, body: AskRequest) -> Iterator[Event]:
    """The answer to `body` as events (the question parsed first: a bad one raises before any event)."""
    return papers.stream(
        body.question,
        body.k,
        body.year,
        body.venue,
        body.backend,
        history=body.past_turns(),
        area=body.area,
        status=body.status,
    )


def final_answer(events: Iterable[Event]) -> tuple[Answer, Resolution | None]:
    """The answer the events end with, and in a conversation how the follow-up was read."""
    resolution: Resolution | None = None
    for event in events:
        if event.type == "query":
            resolution = event.resolved
        elif event.type == "answer" and event.answer is not None:
            return event.answer, resolution
    raise RagError("the answer stopped before it was complete")


def collect(events: Iterable[Event], question: str) -> dict:
    """The whole answer as the `ask --json` object, with the question as typed and, in a conversation, how it
    was read (blocking when `events` is a generator: then called in the thread pool)."""
    answer, resolution = final_answer(events)
    return answer_json(answer, question, resolution)


def cited(answer: Answer) -> list[Source]:
    """The papers an answer cites, in the order it cites them."""
    by_id = {source.id: source for source in answer.sources}
    return [by_id[paper_id] for paper_id in answer.citations if paper_id in by_id]


def exported(papers: Iterable[Any], fmt: str) -> Response:
    """Papers (sources, or stored papers) as BibTeX, Markdown or CSV (`rag.export`): every route's `format=`, and
    GET /api/export. CSV is sent as text/csv, the others as text/plain; both UTF-8."""
    media_type = "text/csv" if fmt == "csv" else "text/plain"
    return Response(export(papers, fmt), media_type=media_type)  # Starlette adds "; charset=utf-8"


def sse_message(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
