"""A scripted OpenAI-compatible chat server on 127.0.0.1, for testing the `openai` backend for real over HTTP.

The request's `model` picks the script:
- `normal`: a JSON completion citing the first source it was given;
- `stream`: the same answer as server-sent events, a few characters per event;
- `bad-cite`: cites the first source and also `[999-99]`, which was never retrieved;
- `abstain`: replies INSUFFICIENT_EVIDENCE;
- `error500`: HTTP 500 with an OpenAI-style error body;
- `slow`: waits `slow_seconds` before answering (for timeouts);
- `slow-stream`: streams one word every `slow_seconds` (for interrupting a running answer).
A chat condense request (`rag chat` rewriting a follow-up; recognised by its `<latest>` block) is answered,
whatever the model, with the latest message plus " (standalone)".
`POST /v1/embeddings` answers with deterministic bag-of-words vectors.
A prompt starting "You grade" (the eval's judge) gets fixed scores. Every request body is recorded in `requests`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedLLM:
    def __init__(self, slow_seconds: float = 3.0) -> None:
        self.requests: list[dict] = []
        self.slow_seconds = slow_seconds
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                body["_path"] = self.path
                body["_auth"] = self.headers.get("Authorization", "")
                server.requests.append(body)
                # The client may give up (timeout or Ctrl-C): that is what such a test wanted.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.respond(self, body)

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

    def answer_text(self, body: dict) -> str:
        ids = self.source_ids(body) or ["none"]
        model = body.get("model")
        if model == "abstain":
            return "INSUFFICIENT_EVIDENCE"
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
        if model == "error500":
            self._json(handler, 500, {"error": {"message": "internal failure", "type": "server_error"}})
            return
        if model == "slow":
            time.sleep(self.slow_seconds)
        follow_up = self.condense_question(body)
        text = self.answer_text(body) if follow_up is None else f"{follow_up} (standalone)"
        if body.get("stream"):
            delay = self.slow_seconds if model == "slow-stream" else 0.0
            self._stream(handler, text, delay)
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
    def _json(handler: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, text: str, delay: float) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        pieces = re.findall(r"\S+\s*", text) if delay else [text[i : i + 5] for i in range(0, len(text), 5)]
        for piece in pieces:
            event = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": "stream",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
            if delay:
                time.sleep(delay)
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
