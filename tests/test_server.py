"""`rag serve` over HTTP, against a real server process on 127.0.0.1: the JSON API, its streamed answer, follow-ups,
bad input, the token, 16 clients at once, and the OpenAI-compatible endpoint through the official `openai` client
(also with an LLM behind it, the scripted server on loopback)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from .helpers import cli_env
from .llm_server import ScriptedLLM
from .serving import Server, running_server

UNLEARNING = "which papers study unlearning?"
PURGE = "001-02"  # the PURGE paper: policy unlearning, evaluated on RWKU


@pytest.fixture(scope="module")
def server(seed_store_dir) -> Server:
    with running_server(seed_store_dir) as running:
        yield running


@pytest.fixture()
def http(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


def sse_events(response: httpx.Response) -> list[tuple[str, dict]]:
    """The (event, data) pairs of a Server-Sent Events body."""
    events = []
    for block in response.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_ask_answers_with_citations_among_its_sources(http):
    response = http.post("/api/ask", json={"question": UNLEARNING})
    assert response.status_code == 200
    body = response.json()
    source_ids = [s["id"] for s in body["sources"]]
    assert PURGE in body["citations"] and f"[{PURGE}]" in body["answer"]
    assert set(body["citations"]) <= set(source_ids)
    assert body["question"] == UNLEARNING and body["query"]["search"] == "unlearning"
    assert not body["abstained"] and "resolved" not in body  # no history: a standalone question, as `ask --json`


def test_the_streamed_answer_arrives_as_query_sources_text_answer(http):
    response = http.post("/api/ask/stream", json={"question": UNLEARNING, "k": 3})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    kinds = [kind for kind, _ in events]
    assert kinds[:2] == ["query", "sources"] and kinds[-1] == "answer" and "text" in kinds
    query, sources, answer = events[0][1], events[1][1], events[-1][1]["answer"]
    assert query["described"] == "↳ searching: unlearning"
    assert len(sources["sources"]) == 3  # k reached the retriever
    streamed = "".join(data["text"] for kind, data in events if kind == "text")
    assert streamed == answer["answer"] and PURGE in answer["citations"]


def test_a_follow_up_reads_the_history_as_the_chat_does(http):
    first = http.post("/api/ask", json={"question": UNLEARNING, "history": []}).json()
    second_id = first["citations"][1]
    history = [{"question": UNLEARNING, "answer": first["answer"]}]
    follow = http.post("/api/ask", json={"question": "tell me more about the second one", "history": history}).json()
    assert follow["resolved"]["paper_ids"] == [second_id]
    assert follow["citations"] == [second_id]
    narrowed = http.post("/api/ask", json={"question": "only 2025 ones", "history": history}).json()
    assert narrowed["resolved"]["year"] == 2025 and narrowed["query"]["year"] == 2025
    assert all(s["year"] == 2025 for s in narrowed["sources"])


def test_compare_them_is_answered_side_by_side_on_every_route(http):
    """ "compare them" after an answer citing several papers: each route answers 200, quoting every cited paper."""
    first = http.post("/api/ask", json={"question": UNLEARNING}).json()
    cited = first["citations"]
    assert len(cited) >= 2
    history = [{"question": UNLEARNING, "answer": first["answer"]}]
    body = {"question": "compare them", "history": history}

    whole = http.post("/api/ask", json=body)
    assert whole.status_code == 200, whole.text
    answer = whole.json()
    assert answer["citations"] == cited and not answer["abstained"]
    assert answer["answer"].startswith(f"{len(cited)} papers side by side:\n")
    assert answer["resolved"]["paper_ids"] == cited
    assert answer["resolved"]["described"].startswith("↳ searching: unlearning")

    streamed = http.post("/api/ask/stream", json=body)
    assert streamed.status_code == 200, streamed.text
    events = sse_events(streamed)
    assert [kind for kind, _ in events] == ["query", "sources", "text", "answer"]
    assert events[0][1]["paper_ids"] == cited and [s["id"] for s in events[1][1]["sources"]] == cited
    assert events[2][1]["text"] == answer["answer"] and events[-1][1]["answer"]["citations"] == cited

    messages = [
        {"role": "user", "content": UNLEARNING},
        {"role": "assistant", "content": first["answer"]},
        {"role": "user", "content": "compare them"},
    ]
    completion = http.post("/v1/chat/completions", json={"model": "rag-papers", "messages": messages})
    assert completion.status_code == 200, completion.text
    reply = completion.json()
    assert reply["choices"][0]["message"]["content"] == answer["answer"] and reply["citations"] == cited
    chunked = http.post("/v1/chat/completions", json={"model": "rag-papers", "messages": messages, "stream": True})
    assert chunked.status_code == 200, chunked.text
    chunks = [
        json.loads(line.removeprefix("data: "))
        for line in chunked.text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == answer["answer"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["citations"] == cited


def test_search_and_a_paper(http):
    found = http.get("/api/search", params={"q": "graph neural networks", "k": 2}).json()
    assert found["query"] == "graph neural networks" and len(found["results"]) == 2
    paper = http.get(f"/api/papers/{PURGE}").json()
    assert paper["id"] == PURGE and "PURGE" in paper["abstract"]
    assert len(paper["sentences"]) > 3 and any("PURGE" in s for s in paper["sentences"])
    missing = http.get("/api/papers/999-99")
    assert missing.status_code == 404 and "999-99" in missing.json()["error"]
    info = http.get("/api/info").json()
    assert info["papers"] == 95 and info["years"] == [2025, 2026] and "ICLR 2025" in info["venues"]


def test_the_area_and_status_filters_change_the_sources_and_info_gives_their_facets(http):
    info = http.get("/api/info").json()
    assert info["statuses"] == [
        {"status": "accepted", "papers": 88},
        {"status": "oral", "papers": 2},
        {"status": "spotlight", "papers": 3},
        {"status": "poster", "papers": 83},
    ]
    assert {"area": "learning theory", "papers": 20} in info["areas"] and sum(a["papers"] for a in info["areas"]) == 95
    every = http.post("/api/ask", json={"question": UNLEARNING}).json()
    assert every["sources"][0] == {
        **every["sources"][0],
        "id": PURGE,
        "url": "https://openreview.net/forum?id=BjWwqPE7mk",
        "status": "poster",
        "area": "alignment, fairness, safety, privacy, and societal considerations",
    }
    oral = http.post("/api/ask", json={"question": UNLEARNING, "status": "oral"}).json()
    assert oral["query"]["status"] == "oral" and {s["id"] for s in oral["sources"]} == {"001-01", "001-04"}
    assert all(s["status"] == "oral" for s in oral["sources"])
    streamed = sse_events(http.post("/api/ask/stream", json={"question": UNLEARNING, "status": "oral"}))
    assert {s["id"] for s in dict(streamed)["sources"]["sources"]} == {"001-01", "001-04"}
    found = http.get("/api/search", params={"q": "unlearning", "area": "Learning Theory", "k": 3}).json()
    assert len(found["results"]) == 3 and {r["area"] for r in found["results"]} == {"learning theory"}
    spotlight = http.get("/api/search", params={"q": "clustering", "status": "spotlight"}).json()
    assert {r["id"] for r in spotlight["results"]} == {"004-03", "004-05", "004-19"}


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            {"status": "rejected"},
            "no rejected papers in the store; its decisions: oral (2), poster (83), spotlight (3)",
        ),
        ({"status": "maybe"}, "unknown status 'maybe': use one of accepted, oral, spotlight, poster, rejected"),
        ({"area": "quantum gardening"}, "no papers of area 'quantum gardening' in the store; its areas: alignment"),
    ],
)
def test_a_filter_the_store_cannot_apply_is_a_one_line_400(http, fields, says):
    for path in ("/api/ask", "/api/ask/stream"):
        response = http.post(path, json={"question": UNLEARNING, **fields})
        assert response.status_code == 400 and says in response.json()["error"], response.text
    response = http.get("/api/search", params={"q": "unlearning", **fields})
    assert response.status_code == 400 and says in response.json()["error"]
    assert "\n" not in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"question": ""}, 400, "empty"),
        ({"question": "   "}, 400, "empty"),
        ({}, 422, "question is required"),
        ({"question": "x" * 4001}, 422, "4000"),
        ({"question": UNLEARNING, "k": 0}, 422, "k:"),
        ({"question": UNLEARNING, "k": "five"}, 422, "k:"),
        ({"question": UNLEARNING, "yaer": 2025}, 422, "yaer"),
        ({"question": UNLEARNING, "backend": "gpt"}, 422, "backend"),
        ("not json", 422, "not valid JSON"),
        ([UNLEARNING], 422, "JSON object"),
        ({"question": "y" * 70_000}, 413, "64 KB"),
    ],
)
def test_bad_requests_get_a_one_line_4xx(http, body, status, says):
    content = body if isinstance(body, str) else json.dumps(body)
    for path in ("/api/ask", "/api/ask/stream"):
        response = http.post(path, content=content, headers={"content-type": "application/json"})
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert says in error and "\n" not in error and "Traceback" not in response.text


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/nope", 404),
        ("POST", "/api/search", 405),
        ("GET", "/api/ask", 405),
        ("GET", "/api/papers/" + "x" * 300, 422),
        ("GET", "/api/search?q=", 400),
        ("GET", "/api/search?q=x&k=abc", 422),
        ("GET", "/v1/nope", 404),
    ],
)
def test_wrong_routes_and_parameters_are_one_line_json_too(http, method, path, status):
    response = http.request(method, path)
    assert response.status_code == status
    error = response.json()["error"]
    message = error["message"] if path.startswith("/v1") else error
    assert message and "\n" not in message


def test_a_body_not_sent_as_json_is_415_and_says_how(http):
    """`curl -d '{…}'` declares form encoding, and a cross-site page's `text/plain` POST needs no preflight: only a
    body sent as JSON is read."""
    for kind in ("application/x-www-form-urlencoded", "text/plain", None):
        headers = {"Content-Type": kind} if kind else {}
        response = http.post("/api/ask", content=json.dumps({"question": UNLEARNING}), headers=headers)
        assert response.status_code == 415 and "application/json" in response.json()["error"]
    sent = http.post(
        "/api/ask",
        content=json.dumps({"question": UNLEARNING}),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert sent.status_code == 200 and PURGE in sent.json()["citations"]


def test_cors_is_off_unless_configured(http, server):
    """A page on another origin gets a 403 and no CORS header; the server's own page (same origin) is answered."""
    response = http.get("/api/info", headers={"Origin": "https://example.org"})
    assert response.status_code == 403 and "access-control-allow-origin" not in response.headers
    assert "RAG_SERVE_CORS_ORIGINS" in response.json()["error"]
    own = http.post("/api/ask", json={"question": UNLEARNING}, headers={"Origin": server.url})
    assert own.status_code == 200


def test_sixteen_clients_at_once_are_all_served(http, server):
    questions = [
        UNLEARNING,
        "which papers study graph neural networks?",
        "what is PURGE?",
        "which papers study diffusion models?",
        "which papers use reinforcement learning?",
        "which papers study contrastive learning?",
        "which 2025 papers study language models?",
        "what does PURGE reach on RWKU?",
    ] * 2

    def ask(question: str) -> tuple[int, dict, float]:
        started = time.monotonic()
        with httpx.Client(base_url=server.url, timeout=300) as client:
            response = client.post("/api/ask", json={"question": question})
        return response.status_code, response.json(), time.monotonic() - started

    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(ask, questions))
    elapsed = time.monotonic() - started
    assert [status for status, _, _ in results] == [200] * 16
    for (_, body, _), question in zip(results, questions, strict=True):
        assert body["question"] == question
        assert set(body["citations"]) <= {s["id"] for s in body["sources"]}
    # Bounded: 16 extractive answers on two cores, a few hundred ms of work each (docs/BENCHMARKS.md has the
    # measured latencies); far under this unless requests serialize badly or deadlock.
    assert elapsed < 120, f"16 concurrent asks took {elapsed:.0f} s"
    assert http.get("/healthz").status_code == 200  # and the server is still there


def test_each_request_is_a_line_in_the_access_log_without_its_query(http, server):
    http.post("/api/ask", json={"question": UNLEARNING})
    http.get("/api/search", params={"q": "a private question", "k": 2})
    http.get("/api/papers/nope")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "/api/papers/nope" not in server.log():
        time.sleep(0.1)
    log = server.log()
    assert re.search(r"^\S+Z 127\.0\.0\.1 POST /api/ask 200 \d+ ms", log, re.M)
    assert re.search(r"^\S+Z 127\.0\.0\.1 GET /api/search 200 \d+ ms", log, re.M)
    assert re.search(r"^\S+Z 127\.0\.0\.1 GET /api/papers/nope 404 \d+ ms", log, re.M)
    assert "private question" not in log  # the query string, a user's question, is not logged


def test_no_access_log_when_asked(seed_store_dir):
    with running_server(seed_store_dir, "--no-access-log") as quiet:
        httpx.get(f"{quiet.url}/api/info", timeout=60)
        time.sleep(0.5)
        assert "/api/info" not in quiet.log() and "/healthz" not in quiet.log()


def test_past_the_pending_limit_a_question_gets_503_and_retry_after(seed_store_dir):
    """Two questions in flight (each waiting 3 s on the scripted LLM), a third and a fourth are refused at once with
    a one-line 503 and Retry-After; health checks and paper lookups still answer; once the two are done, the next
    question is answered."""
    with ScriptedLLM(slow_seconds=3.0) as llm:
        env = {"RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "slow", "RAG_SERVE_MAX_PENDING": "2"}
        with running_server(seed_store_dir, "--no-access-log", **env) as limited:

            def ask(_: int) -> httpx.Response:
                with httpx.Client(base_url=limited.url, timeout=120) as client:
                    return client.post("/api/ask", json={"question": UNLEARNING})

            with ThreadPoolExecutor(2) as slow_pool:
                slow = [slow_pool.submit(ask, i) for i in range(2)]
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and llm.answer_requests("slow") < 2:  # both wait on the LLM now
                    time.sleep(0.05)
                refused = [ask(i) for i in range(2)]
                with httpx.Client(base_url=limited.url, timeout=30) as client:
                    assert client.get("/healthz").status_code == 200
                    assert client.get(f"/api/papers/{PURGE}").status_code == 200
                answered = [future.result() for future in slow]
            assert [r.status_code for r in answered] == [200, 200]
            for response in refused:
                assert response.status_code == 503 and response.headers["retry-after"] == "1"
                assert "busy" in response.json()["error"] and "\n" not in response.json()["error"]
            assert ask(0).status_code == 200  # the two finished: room again


def test_the_token_guards_the_api(seed_store_dir):
    with (
        running_server(seed_store_dir, RAG_SERVE_TOKEN="s3cret-token") as guarded,
        httpx.Client(base_url=guarded.url, timeout=60) as client,
    ):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
            for response in (
                client.post("/api/ask", json={"question": UNLEARNING}, headers=headers),
                client.get("/api/search", params={"q": "x"}, headers=headers),
                client.get("/v1/models", headers=headers),
            ):
                assert response.status_code == 401
                assert "token" in json.dumps(response.json()) and "s3cret" not in response.text
        good = {"Authorization": "Bearer s3cret-token"}
        assert client.post("/api/ask", json={"question": UNLEARNING}, headers=good).status_code == 200
        assert client.get("/v1/models", headers=good).status_code == 200
        assert client.get("/healthz").status_code == 200  # health and the page itself are open
        assert client.get("/").status_code == 200


def test_off_loopback_it_refuses_to_start_without_a_token(seed_store_dir):
    result = subprocess.run(
        [sys.executable, "-m", "rag", "serve", "--store", str(seed_store_dir), "--host", "0.0.0.0", "--port", "0"],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1 and "RAG_SERVE_TOKEN" in result.stderr and "Traceback" not in result.stderr


def test_a_port_in_use_is_one_line(server, seed_store_dir):
    port = server.url.rsplit(":", 1)[1]
    result = subprocess.run(
        [sys.executable, "-m", "rag", "serve", "--store", str(seed_store_dir), "--port", port],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in result.stderr


# -- the OpenAI-compatible endpoint, through the official client ------------------------------------------


@pytest.fixture()
def openai_client(server):
    from openai import OpenAI

    return OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=120)


def ask_once(client, question: str = UNLEARNING):
    return client.chat.completions.create(model="rag-papers", messages=[{"role": "user", "content": question}])


def test_openai_client_gets_an_answer_with_citations(openai_client):
    assert [m.id for m in openai_client.models.list()] == ["rag-papers"]
    reply = openai_client.chat.completions.create(
        model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}]
    )
    text = reply.choices[0].message.content
    extra = reply.model_extra
    assert f"[{PURGE}]" in text and reply.choices[0].finish_reason == "stop"
    assert PURGE in extra["citations"] and set(extra["citations"]) <= {s["id"] for s in extra["sources"]}


def test_openai_client_filters_by_status_through_extra_body(openai_client):
    reply = openai_client.chat.completions.create(
        model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}], extra_body={"status": "oral"}
    )
    sources = reply.model_extra["sources"]
    assert {s["id"] for s in sources} == {"001-01", "001-04"} and all(s["url"] for s in sources)


def test_openai_client_streams_and_the_last_chunk_keeps_the_sources(openai_client):
    whole = openai_client.chat.completions.create(
        model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}]
    )
    chunks = list(
        openai_client.chat.completions.create(
            model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    last = chunks[-1]
    assert text == whole.choices[0].message.content
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["citations"] == whole.model_extra["citations"]
    assert [s["id"] for s in last.model_extra["sources"]] == [s["id"] for s in whole.model_extra["sources"]]


def test_openai_messages_carry_the_conversation(openai_client):
    first = openai_client.chat.completions.create(
        model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}]
    )
    listed = first.model_extra["citations"]
    follow = openai_client.chat.completions.create(
        model="rag-papers",
        messages=[
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": UNLEARNING},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "what does the third one find?"},
        ],
        extra_body={"k": 3},
    )
    assert follow.model_extra["resolved"]["paper_ids"] == [listed[2]]
    assert follow.model_extra["citations"] == [listed[2]]


def test_openai_client_sees_a_bad_request_as_its_error(openai_client):
    import openai

    with pytest.raises(openai.BadRequestError) as raised:
        openai_client.chat.completions.create(model="rag-papers", messages=[{"role": "assistant", "content": "hi"}])
    assert "last message must be the user's question" in str(raised.value)
    with pytest.raises(openai.UnprocessableEntityError):
        openai_client.chat.completions.create(model="rag-papers", messages=[])


def test_with_an_llm_behind_it_nothing_unretrieved_is_cited(seed_store_dir):
    """The server's answers come from an OpenAI-compatible LLM (the scripted one, which also cites [999-99]):
    the streamed text and the citations name only retrieved papers."""
    from openai import OpenAI

    with ScriptedLLM() as llm:
        env = {"RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "bad-cite", "RAG_LLM_RETRIES": "0"}
        with running_server(seed_store_dir, **env) as served:
            client = OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0, timeout=120)
            chunks = list(
                client.chat.completions.create(
                    model="rag-papers", messages=[{"role": "user", "content": UNLEARNING}], stream=True
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            extra = chunks[-1].model_extra
            assert "999-99" not in text and "999-99" not in extra["citations"]
            assert extra["citations"] and set(extra["citations"]) <= {s["id"] for s in extra["sources"]}
            assert any(r.get("model") == "bad-cite" for r in llm.requests)  # the LLM did write it
            with httpx.Client(base_url=served.url, timeout=120) as http:
                body = http.post("/api/ask", json={"question": UNLEARNING}).json()
            assert body["backend"] == "openai" and "999-99" in body["dropped_citations"]


def test_cors_allows_only_the_configured_origins(seed_store_dir):
    """RAG_SERVE_CORS_ORIGINS lets a page on another origin call the API; any other origin gets no CORS header."""
    from fastapi.testclient import TestClient

    from rag.api import Papers
    from rag.server.app import ServeOptions, create_app

    app = create_app(Papers(store=seed_store_dir), ServeOptions(cors_origins=("https://lab.example",)))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        allowed = client.get("/api/info", headers={"Origin": "https://lab.example"})
        other = client.get("/api/info", headers={"Origin": "https://elsewhere.example"})
        preflight = client.options(
            "/api/ask",
            headers={"Origin": "https://lab.example", "Access-Control-Request-Method": "POST"},
        )
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://lab.example"
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
    assert preflight.status_code == 200 and "POST" in preflight.headers["access-control-allow-methods"]


def test_a_store_whose_vectors_do_not_match_its_manifest_is_one_line_at_start(seed_store_dir, tmp_path):
    """A collection whose manifest names the packaged model but whose vectors are 8-dimensional (written by other
    code): `rag serve` fails at its warm-up with one line, not uvicorn's startup traceback."""
    import shutil

    import chromadb

    store = tmp_path / "store"
    shutil.copytree(seed_store_dir, store)
    client = chromadb.PersistentClient(path=str(store))
    manifest = dict(client.get_collection("papers").metadata or {})
    client.delete_collection("papers")
    odd = client.create_collection("papers", metadata=manifest, embedding_function=None)
    meta = {"paper_id": "x-1", "chunk": 0, "n_chunks": 1, "paper_hash": "h", "year": 2025, "title": "t"}
    odd.add(ids=["x-1#0"], embeddings=[[0.1] * 8], documents=["graph neural networks"], metadatas=[meta])
    del odd, client
    result = subprocess.run(
        [sys.executable, "-m", "rag", "serve", "--store", str(store), "--port", "0"],
        env=cli_env(XDG_CACHE_HOME=str(tmp_path / "cache")),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr


def test_a_blank_token_is_refused_at_start(seed_store_dir):
    """A whitespace-only RAG_SERVE_TOKEN would start a server that refuses every request: it does not start."""
    result = subprocess.run(
        [sys.executable, "-m", "rag", "serve", "--store", str(seed_store_dir), "--port", "0"],
        env=cli_env(RAG_SERVE_TOKEN="   "),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1 and "RAG_SERVE_TOKEN is blank" in result.stderr


def test_refusals_carry_cors_headers_and_a_preflight_is_never_refused(seed_store_dir):
    """A page on an allowed origin reads a 413 or a 503 as what it is (not as a CORS failure), and its preflight
    is answered even when questions are refused: a preflight is not a question."""
    from fastapi.testclient import TestClient

    from rag.api import Papers
    from rag.server.app import ServeOptions, create_app

    lab = {"Origin": "https://lab.example"}
    # A pace of 10 s per answer on 2 workers against a 0.1 s wait: every question is refused.
    options = ServeOptions(cors_origins=("https://lab.example",), max_wait=0.1, pace=10.0)
    with TestClient(create_app(Papers(store=seed_store_dir), options), base_url="http://127.0.0.1") as client:
        busy = client.post("/api/ask", json={"question": "which papers study unlearning?"}, headers=lab)
        too_big = client.post(
            "/api/ask", content=b"x" * (65 * 1024), headers={**lab, "Content-Type": "application/json"}
        )
        preflight = client.options("/api/ask", headers={**lab, "Access-Control-Request-Method": "POST"})
    assert busy.status_code == 503 and int(busy.headers["retry-after"]) >= 1 and "busy" in busy.json()["error"]
    assert too_big.status_code == 413
    for response in (busy, too_big):
        assert response.headers["access-control-allow-origin"] == "https://lab.example"
    assert preflight.status_code == 200
