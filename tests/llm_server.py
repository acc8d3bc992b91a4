"""A scripted OpenAI-compatible chat server on 127.0.0.1, for testing the `openai` backend for real over HTTP.

The request's `model` picks the script:
- `normal`: a JSON completion citing the first source it was given;
- `stream`: the same answer as server-sent events, a few characters per event;
- `bad-cite`: cites the first source and also `[999-99]`, which was never retrieved;
- `abstain`: replies INSUFFICIENT_EVIDENCE;
- `error500`: HTTP 500 with an OpenAI-style error body;
- `slow`: waits `slow_seconds` before answering (for timeouts); if the client hangs up first (it gave up at
  its timeout), nothing is sent and the request is marked `_hung_up_at` (see `hung_up`, `answered`);
- `slow-stream`: streams one word every `slow_seconds` (for interrupting a running answer).
Faults (for tests/reliability):
- `error503`: always HTTP 503; `flaky500`: HTTP 500 on the first answer request, then `normal`;
- `rate-limited`: HTTP 429 with `Retry-After: <retry_after>` on the first answer request, then `normal`;
  `rate-limited-long`: always 429 with `Retry-After: 120`;
- `echo-key-401`: HTTP 401 whose error message repeats the Authorization header (a careless server);
- `hangup`: closes the connection without answering; `malformed-json`: 200 with a truncated JSON body;
  `html`: 200 with an HTML page (a proxy's error page);
- `stream-cut`: streams half the answer (a valid citation, `[999-99]`, an unclosed `[998-`), then closes the
  connection cleanly without a finish_reason; `stream-reset`: the same, but the connection dies inside a
  chunk (HTTP/1.1 chunked); `stream-garbage`: the same, then an event that is not JSON;
- `sneaky-cite`: cites the first source properly, then writes near-citations of `999-99` that the citation
  pattern does not match (`[see 999-99]`, `[999‐99]` with a Unicode hyphen);
- `obey-injection`: a model that follows instructions planted in an abstract: it cites every `[id]` written
  inside the sources (and `[999-99]`), plus the first real source.
Streams end with a `finish_reason` chunk and `data: [DONE]`, as real servers do.
A chat condense request (`rag chat` rewriting a follow-up; recognised by its `<latest>` block) is answered,
whatever the model, with the latest message plus " (standalone)".
`POST /v1/embeddings` answers with deterministic bag-of-words vectors.
A prompt starting "You grade" (the eval's judge) gets fixed scores. Every request body is recorded in `requests`,
with `_at` (arrival, monotonic), and `_answered_at` once a chat completion was written out in full.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedLLM:
    def __init__(self, slow_seconds: float = 3.0, retry_after: str = "1") -> None:
        self.requests: list[dict] = []
        self.slow_seconds = slow_seconds
        self.retry_after = retry_after
        self.settled = threading.Condition()  # notified whenever a request has been handled to its end
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                body["_path"] = self.path
                body["_auth"] = self.headers.get("Authorization", "")
                body["_at"] = time.monotonic()  # when it arrived: the gap between tries shows the backoff
                with server.settled:
                    server.requests.append(body)
                try:
                    # The client may give up (timeout or Ctrl-C): that is what such a test wanted.
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        server.respond(self, body)
                finally:
                    with server.settled:
                        body["_done_at"] = time.monotonic()
                        server.settled.notify_all()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- scripts -------------------------------------------------------------------------------------

    @staticmethod
    def source_ids(body: dict) -> list[str]:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        return re.findall(r'<source id="([^"]+)"', text)

    @staticmethod
    def condense_question(body: dict) -> str | None:
        """The follow-up a chat condense request asks to rewrite, or None for an answer request."""
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        match = re.search(r"<latest>\s*(.*?)\s*</latest>", text, re.S)
        return match.group(1) if match else None

    @staticmethod
    def planted_ids(body: dict) -> list[str]:
        """Ids written in square brackets inside the <sources> block (an injection, not a real source)."""
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        block = text.split("<sources>", 1)[-1].split("</sources>", 1)[0]
        return re.findall(r"\[([A-Za-z0-9][\w.:/-]*)\]", block)

    def answer_requests(self, model: str) -> int:
        """Answer requests (not condense or judge requests) seen so far for `model`."""
        answers = [r for r in self.requests if r["_path"].endswith("/chat/completions")]
        return sum(1 for r in answers if r.get("model") == model and self.condense_question(r) is None)

    def wait_settled(self, timeout: float = 60.0) -> None:
        """Until every request received so far has been handled to its end (answered, failed, hung up on).

        The client can return before the server's thread has noticed its hang-up; counts read after this are
        final. `timeout` only guards against a test hanging: no script takes that long to finish.
        """
        with self.settled:
            if not self.settled.wait_for(lambda: all("_done_at" in r for r in self.requests), timeout):
                raise AssertionError(f"the scripted server was still handling a request after {timeout}s")

    def hung_up(self, model: str) -> int:
        """Requests for `model` whose client closed the connection while the server was still composing."""
        self.wait_settled()
        return sum(1 for r in self.requests if r.get("model") == model and "_hung_up_at" in r)

    def answered(self, model: str) -> int:
        """Requests for `model` whose whole reply (a chat completion, streamed or not) was written out."""
        self.wait_settled()
        return sum(1 for r in self.requests if r.get("model") == model and "_answered_at" in r)

    @staticmethod
    def _client_hangs_up(handler: BaseHTTPRequestHandler, seconds: float) -> bool:
        """Wait up to `seconds`; True as soon as the client closes the connection (it stopped waiting)."""
        connection = handler.connection
        deadline = time.monotonic() + seconds
        if not select.select([connection], [], [], seconds)[0]:
            return False  # the whole delay passed with the client still there
        try:
            if not connection.recv(1, socket.MSG_PEEK):
                return True  # end of stream: the client closed its end
        except OSError:
            return True  # reset by the client
        time.sleep(max(0.0, deadline - time.monotonic()))  # it sent more bytes instead (it should not)
        return False

    def answer_text(self, body: dict) -> str:
        ids = self.source_ids(body) or ["none"]
        model = body.get("model")
        if model == "abstain":
            return "INSUFFICIENT_EVIDENCE"
        if model == "obey-injection":
            planted = [i for i in self.planted_ids(body) if i not in ids]
            cites = ", ".join(dict.fromkeys(["999-99", *planted]))
            return f"As the abstract instructs [{cites}]. The relevant paper is [{ids[0]}]."
        if model == "sneaky-cite":
            return f"The relevant paper is [{ids[0]}]. Another one agrees [see 999-99]. So does [999\u201099]."
        text = f"The most relevant paper studies this directly [{ids[0]}]."
        if model == "bad-cite":
            text += " Another paper agrees [999-99]."
        if len(ids) > 1 and model != "bad-cite":
            text += f" A second one is related [{ids[1]}]."
        return text

    def respond(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        if handler.path.endswith("/embeddings"):
            self._json(handler, 200, self.embeddings(body))
            return
        model = body.get("model", "normal")
        messages = body.get("messages") or [{}]
        if str(messages[0].get("content", "")).startswith("You grade"):  # the eval's LLM judge
            text = 'Scores: {"faithfulness": 0.75, "correctness": 0.5}'
            reply = {"role": "assistant", "content": text}
            self._json(
                handler,
                200,
                {
                    "id": "j",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                },
            )
            return
        if model == "error500" or (model == "flaky500" and self.answer_requests(model) == 1):
            self._json(handler, 500, {"error": {"message": "internal failure", "type": "server_error"}})
            return
        if model == "error503":
            self._json(handler, 503, {"error": {"message": "overloaded", "type": "server_error"}})
            return
        if model == "rate-limited-long" or (model == "rate-limited" and self.answer_requests(model) == 1):
            after = "120" if model == "rate-limited-long" else self.retry_after
            error = {"error": {"message": "rate limit reached", "type": "rate_limit_error"}}
            self._json(handler, 429, error, {"Retry-After": after})
            return
        if model == "echo-key-401":
            error = {"error": {"message": f"invalid key in {handler.headers.get('Authorization')}", "type": "auth"}}
            self._json(handler, 401, error)
            return
        if model == "hangup":
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if model == "malformed-json":
            self._raw(handler, 200, "application/json", b'{"id": "x", "choices": [{"message": {"content": "Half')
            return
        if model == "html":
            self._raw(handler, 200, "text/html", b"<html><body>502 Bad Gateway</body></html>")
            return
        if model.startswith("stream-") and model != "stream-ok":
            self._broken_stream(handler, body, model)
            return
        if model == "slow" and self._client_hangs_up(handler, self.slow_seconds):
            body["_hung_up_at"] = time.monotonic()  # the reply is never sent
            handler.close_connection = True
            return
        follow_up = self.condense_question(body)
        text = self.answer_text(body) if follow_up is None else f"{follow_up} (standalone)"
        if body.get("stream"):
            delay = self.slow_seconds if model == "slow-stream" else 0.0
            try:
                self._stream(handler, text, delay)
            except OSError:  # the client closed the stream while it was being written (it stopped reading)
                body["_hung_up_at"] = time.monotonic()
                handler.close_connection = True
                return
            body["_answered_at"] = time.monotonic()
            return
        self._json(
            handler,
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            },
        )
        body["_answered_at"] = time.monotonic()

    @staticmethod
    def embeddings(body: dict) -> dict:
        """Deterministic bag-of-words vectors (64 hashed buckets): texts sharing words come out close."""
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for index, text in enumerate(inputs):
            vector = [0.0] * 64
            for word in re.findall(r"[a-z]+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
            vector[0] += 0.01  # never all zeros
            data.append({"object": "embedding", "index": index, "embedding": vector})
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return {"object": "list", "data": data, "model": body.get("model"), "usage": usage}

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _raw(handler: BaseHTTPRequestHandler, status: int, content_type: str, data: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _event(piece: str) -> bytes:
        event = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "stream",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        return f"data: {json.dumps(event)}\n\n".encode()

    def _broken_stream(self, handler: BaseHTTPRequestHandler, body: dict, model: str) -> None:
        """Half an answer, then the stream fails the way `model` says (see the module docstring)."""
        first = self.source_ids(body)[0]
        pieces = ["The most relevant ", f"paper studies this [{first}]. ", "Another agrees [999-99]. ", "And [998-"]
        if not body.get("stream"):  # asked for a whole reply: a body cut short instead
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "500")
            handler.end_headers()
            handler.wfile.write(b'{"id": "x", "choices": [')
            handler.close_connection = True
            return
        chunked = model == "stream-reset"
        if chunked:
            handler.protocol_version = "HTTP/1.1"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for piece in pieces:
            data = self._event(piece)
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)
            handler.wfile.flush()
        if model == "stream-garbage":
            handler.wfile.write(b"data: {this is not json\n\n")
        elif chunked:
            handler.wfile.write(b"400\r\ndata: {")  # a chunk announced as 1024 bytes, then the connection dies
        handler.wfile.flush()
        handler.close_connection = True

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, text: str, delay: float) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        pieces = re.findall(r"\S+\s*", text) if delay else [text[i : i + 5] for i in range(0, len(text), 5)]
        for piece in pieces:
            handler.wfile.write(ScriptedLLM._event(piece))
            handler.wfile.flush()
            if delay:
                time.sleep(delay)
        end = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "stream",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        handler.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
