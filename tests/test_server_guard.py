"""Other web sites against a token-less `rag serve` (rag/server/guard.py), over real HTTP to a real server: a
foreign `Host` (DNS rebinding), a foreign `Origin`, bodies not sent as JSON, the page's security headers, and a
backend the operator did not enable. The browser's side of it is in tests/test_web_page.py."""

from __future__ import annotations

import json

import httpx
import pytest

from .serving import Server, running_server

UNLEARNING = "which papers study unlearning?"


@pytest.fixture(scope="module")
def server(seed_store_dir) -> Server:
    with running_server(seed_store_dir, RAG_SERVE_ALLOWED_HOSTS="papers.lab.internal") as running:
        yield running


@pytest.fixture()
def http(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


@pytest.mark.parametrize("path", ["/", "/api/info", "/api/search?q=unlearning", "/v1/models"])
def test_a_foreign_host_is_refused_everywhere(http, path):
    """A page on evil.example whose name was rebound to 127.0.0.1 sends `Host: evil.example`: nothing is
    answered, the page included (a rebound page would read it as its own origin)."""
    response = http.get(path, headers={"Host": "evil.example:8000"})
    assert response.status_code == 400
    body = response.json()
    message = body["error"] if isinstance(body["error"], str) else body["error"]["message"]
    assert "evil.example" in message and "RAG_SERVE_ALLOWED_HOSTS" in message and "\n" not in message


@pytest.mark.parametrize("host", ["127.0.0.1:1234", "localhost:1234", "[::1]:1234", "papers.lab.internal:8000"])
def test_loopback_names_and_the_listed_hosts_are_answered(http, host):
    assert http.get("/api/info", headers={"Host": host}).status_code == 200


def test_a_post_from_a_foreign_origin_is_refused_before_it_is_answered(http, server):
    for origin in ("https://evil.example", "null", server.url.replace("127.0.0.1", "localhost")):
        response = http.post("/api/ask", json={"question": UNLEARNING}, headers={"Origin": origin})
        assert response.status_code == 403 and "access-control-allow-origin" not in response.headers
    assert http.post("/api/ask", json={"question": UNLEARNING}, headers={"Origin": server.url}).status_code == 200


def test_the_page_and_every_reply_carry_the_security_headers(http):
    for response in (http.get("/"), http.get("/api/info"), http.get("/api/nope")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy


def test_a_client_cannot_pick_a_backend_the_operator_did_not_enable(http):
    """This server answers extractively (no RAG_LLM_BASE_URL): a request for the LLM or the local model would make
    it call out or load 1 GB on a stranger's say-so."""
    for backend in ("openai", "local"):
        response = http.post("/api/ask", json={"question": UNLEARNING, "backend": backend})
        assert response.status_code == 400
        assert f"'{backend}' is not enabled" in response.json()["error"]
    assert http.post("/api/ask", json={"question": UNLEARNING, "backend": "extractive"}).status_code == 200


def test_the_store_path_is_not_shown(http, seed_store_dir):
    info = http.get("/api/info")
    assert info.status_code == 200 and str(seed_store_dir) not in info.text
    assert str(seed_store_dir) not in json.dumps(http.get("/api/papers/nope").json())


def test_an_id_with_a_slash_is_cited_and_served(tmp_path):
    """Ids of the one rule (rag.corpus.PAPER_ID) work on every route: arXiv's old ids hold a "/"."""
    import subprocess
    import sys

    from .helpers import cli_env

    papers = tmp_path / "papers.jsonl"
    papers.write_text(
        json.dumps(
            {
                "id": "hep-th/9901001",
                "title": "Honeybee waggle dances decoded by harmonic radar",
                "abstract": "We decode the honeybee waggle dance with harmonic radar tracking of foragers.",
                "year": 2025,
            }
        )
        + "\n"
        + json.dumps({"id": "p-2", "abstract": "We study graph neural networks for molecules.", "year": 2025})
        + "\n"
    )
    store = tmp_path / "store"
    env = cli_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "rag", "ingest", str(papers), "--store", str(store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with (
        running_server(store, XDG_CACHE_HOME=str(tmp_path / "cache")) as served,
        httpx.Client(base_url=served.url, timeout=120) as client,
    ):
        paper = client.get("/api/papers/hep-th/9901001")
        assert paper.status_code == 200 and paper.json()["id"] == "hep-th/9901001"
        answer = client.post("/api/ask", json={"question": "which papers decode the honeybee waggle dance?"}).json()
        assert "hep-th/9901001" in answer["citations"] and "[hep-th/9901001]" in answer["answer"]


def test_an_error_midway_through_a_stream_does_not_show_the_store_path(tmp_path):
    """A store that fails after the answer began (a full disk, another process's rebuild): the stream's last
    event says so in one line, with the store named as the server's, on /api/ask/stream and /v1 alike."""
    from rag.errors import StoreError
    from rag.server.app import sse
    from rag.server.openai_compat import chunks
    from rag.types import Event

    label = str(tmp_path / "private" / "store")

    def failing():
        yield Event("text", text="Two papers study it")
        raise StoreError(f"the store at {label} could not be read (is the disk full?)")

    for stream in (
        list(sse(Event("text", text="…"), failing(), UNLEARNING, label)),
        list(chunks(Event("text", text="…"), failing(), UNLEARNING, "rag-papers", label)),
    ):
        said = [message for message in stream if "is the disk full?" in message]
        assert len(said) == 1 and "the server's store" in said[0]
        assert str(tmp_path) not in "".join(stream)
