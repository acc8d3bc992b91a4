"""`/v1/chat/completions` and `/v1/models`: the papers as a model any OpenAI client or chat UI can talk to.

The last user message is the question; the earlier user/assistant pairs are the conversation, read as `rag chat`
reads it ("the second one" means the second paper the previous answer cited). The text carries `[ID]` citations,
and the response also carries `citations`, `sources`, `abstained` and `warnings` beside `choices`: in the last
chunk too when streaming, so nothing is lost on the way (clients that only read `choices` still get the [ID]s).
Extra request fields `k`, `year`, `venue`, `area` and `status` (the openai client's `extra_body`) filter as `ask`
does.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ..errors import RagError
from ..followups import Resolution
from ..query import MAX_QUESTION_CHARS
from ..types import Event
from ..wire import answer_json
from .protocol import (
    SSE_HEADERS,
    ApiError,
    Area,
    AskRequest,
    HistoryTurn,
    K,
    Status,
    Venue,
    Year,
    answer_events,
    client_message,
    collect,
)
from .work import Departure, EventStream, Work

if TYPE_CHECKING:
    from ..api import Papers

MODEL_ID = "rag-papers"
MAX_MESSAGES = 41  # 20 earlier exchanges and the question


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls…: accepted and ignored
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(part.text or "" for part in self.content if part.type == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    # OpenAI's many sampling fields (temperature, top_p, …) are accepted and ignored: the answer is the
    # papers' (extractive by default), not a sample.
    model_config = ConfigDict(extra="allow")
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    model: str | None = None
    stream: bool = False
    k: K | None = None
    year: Year | None = None
    venue: Venue | None = None
    area: Area | None = None
    status: Status | None = None

    def ask_request(self) -> AskRequest:
        """The question (the last message, a user's) and the conversation before it, as /api/ask takes them."""
        *earlier, last = [m for m in self.messages if m.role in ("user", "assistant")] or [self.messages[-1]]
        if last.role != "user":
            raise ApiError(400, "the last message must be the user's question")
        question = last.text()
        if len(question) > MAX_QUESTION_CHARS:
            raise ApiError(400, f"the question is over {MAX_QUESTION_CHARS} characters")
        history: list[HistoryTurn] = []
        pending: str | None = None
        for message in earlier:
            if message.role == "user":
                pending = message.text()  # two user messages in a row: the later one is the question asked
            elif pending is not None:
                history.append(HistoryTurn(question=pending[:MAX_QUESTION_CHARS], answer=message.text()))
                pending = None
        return AskRequest(
            question=question,
            k=self.k,
            year=self.year,
            venue=self.venue,
            area=self.area,
            status=self.status,
            history=history,
        )


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def extras(answer: dict) -> dict:
    """What the papers add to an OpenAI response: the citations, the sources, whether it abstained."""
    return {
        "citations": answer["citations"],
        "sources": answer["sources"],
        "abstained": answer["abstained"],
        "warnings": answer["warnings"],
        "query": answer["query"],
        **({"resolved": answer["resolved"]} if "resolved" in answer else {}),
    }


def usage(answer: dict) -> dict:
    used = answer.get("usage") or {}
    prompt, completion = int(used.get("prompt_tokens", 0)), int(used.get("completion_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def openai_router(papers: Papers, require_token: Callable[..., None], work: Work) -> APIRouter:
    router = APIRouter(prefix="/v1", dependencies=[Depends(require_token)])

    @router.get("/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "rag-papers"}]}

    @router.post("/chat/completions", response_model=None)
    async def chat_completions(body: ChatRequest, http: Request) -> dict | EventStream:
        request = body.ask_request()
        model = body.model or MODEL_ID
        events = await work.run(answer_events, papers, request)
        if not body.stream:
            departure = Departure(http.receive)
            try:
                answer = collect(await work.drain(events, departure), request.question)
            finally:
                departure.stop()
                await work.close(events)
            return {
                "id": completion_id(),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer["answer"]},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage(answer),
                **extras(answer),
            }
        first = await work.pull(events)  # a bad question: a 4xx before the stream
        stream = chunks(first, events, request.question, model, papers.settings.store_label)
        return EventStream(work, stream, SSE_HEADERS)

    return router


def chunks(
    first: Event | None, events: Iterator[Event], question: str, model: str, store_label: str = ""
) -> Iterator[str]:
    """OpenAI's `chat.completion.chunk` stream: the role, the checked text as it comes, then a last chunk with
    `finish_reason` and the citations and sources; `[DONE]`. An error midway is a chunk with `error`."""
    base = {"id": completion_id(), "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict, finish: str | None = None, **more: Any) -> str:
        body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **more}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    resolution: Resolution | None = None
    try:
        event = first
        while event is not None:
            if event.type == "query":
                resolution = event.resolved
            elif event.type == "text" and event.text:
                yield chunk({"content": event.text})
            elif event.type == "answer" and event.answer is not None:
                answer = answer_json(event.answer, question, resolution)
                yield chunk({}, "stop", usage=usage(answer), **extras(answer))
            event = next(events, None)
    except RagError as exc:
        error = {"message": client_message(exc, store_label), "type": "server_error", "param": None, "code": None}
        yield f"data: {json.dumps({'error': error})}\n\n"
    finally:
        close = getattr(events, "close", None)
        if close:
            close()
    yield "data: [DONE]\n\n"


__all__ = ["MODEL_ID", "openai_router"]
