"""`rag serve` under load and hang-ups (rag/server/work.py, admission.py), against real server processes: a client
that leaves stops its answer and the LLM stream behind it (the scripted OpenAI-compatible server on loopback
records when its stream was closed), a burst is answered in time or refused at once, the server is free again
as soon as the burst's clients leave, and its memory stays bounded over bursts."""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from .llm_server import ScriptedLLM
from .serving import Server, running_server

UNLEARNING = "which papers study unlearning?"
HANG_UP_BAR = 2.0  # issue 29: a hang-up ends the upstream LLM stream within 2 s


def stream_then_leave(url: str, path: str, body: dict) -> float:
    """Open a streamed answer, read until its first piece of text, and hang up; when it hung up."""
    with httpx.Client(base_url=url, timeout=60) as client, client.stream("POST", path, json=body) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if '"text"' in line or ('"content": "' in line and '"content": ""' not in line):
                break
        left = time.monotonic()
    return left


def wait_for(check, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM(slow_seconds=0.3) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def llm_server(seed_store_dir, llm) -> Server:
    env = {"RAG_LLM_BASE_URL": llm.url, "RAG_LLM_MODEL": "slow-stream", "RAG_SERVE_MAX_PENDING": "1"}
    with running_server(seed_store_dir, **env) as running:
        yield running


def hang_up_delays(llm: ScriptedLLM, left: list[float]) -> list[float]:
    llm.wait_settled()
    closed = sorted(r["_hung_up_at"] for r in llm.requests if r.get("model") == "slow-stream" and "_hung_up_at" in r)
    return [c - t for c, t in zip(closed[-len(left) :], left, strict=True)]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/ask/stream", {"question": UNLEARNING}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": UNLEARNING}], "stream": True}),
    ],
)
def test_a_client_that_hangs_up_a_stream_ends_the_llms_stream(llm, llm_server, path, body):
    answered = llm.answered("slow-stream")
    left = [stream_then_leave(llm_server.url, path, body)]
    wait_for(lambda: llm.hung_up("slow-stream") >= 1 and len(hang_up_delays(llm, left)) == 1)
    assert all(0 <= d <= HANG_UP_BAR for d in hang_up_delays(llm, left)), hang_up_delays(llm, left)
    assert llm.answered("slow-stream") == answered  # nothing was generated to the end for nobody


def test_a_client_that_gives_up_on_a_whole_answer_ends_the_llms_stream_and_frees_its_slot(llm, llm_server):
    """`/api/ask` (whole) with a client timeout shorter than the answer: the LLM's stream ends within 2 s of the
    client leaving, and only then is the one slot (RAG_SERVE_MAX_PENDING=1) free: the next question is admitted
    and never runs beside the abandoned one."""
    hung = llm.hung_up("slow-stream")
    with httpx.Client(base_url=llm_server.url, timeout=1.5) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post("/api/ask", json={"question": UNLEARNING})
        left = time.monotonic()
    wait_for(lambda: llm.hung_up("slow-stream") > hung)
    (delay,) = hang_up_delays(llm, [left])
    assert 0 <= delay <= HANG_UP_BAR
    with httpx.Client(base_url=llm_server.url, timeout=60) as client:
        next_answer = client.post("/api/ask", json={"question": UNLEARNING, "backend": "extractive"})
    assert next_answer.status_code == 200
    # The abandoned stream was closed before anything else reached the LLM: no two answers at once.
    streams = [r for r in llm.requests if r.get("model") == "slow-stream"]
    spans = sorted((r["_at"], r["_done_at"]) for r in streams)
    assert all(later[0] >= earlier[1] - 0.05 for earlier, later in itertools.pairwise(spans)), spans


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def burst(url: str, clients: int, timeout: float) -> list[tuple[int, float]]:
    """`clients` questions at once, each with its own connection and `timeout`: (status or 0 for a client
    timeout, seconds)."""

    def one(i: int) -> tuple[int, float]:
        started = time.monotonic()
        with httpx.Client(base_url=url, timeout=timeout) as client:
            try:
                response = client.post("/api/ask", json={"question": f"which papers study unlearning? ({i})"})
                return response.status_code, time.monotonic() - started
            except httpx.TimeoutException:
                return 0, time.monotonic() - started

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(one, range(clients)))


def test_a_burst_is_answered_in_time_or_refused_at_once_and_memory_stays_bounded(seed_store_dir):
    """Three bursts of 40 clients with 15 s timeouts at a server told to keep waits under 4 s: every question is
    answered within its client's timeout or refused at once with a 503; right after a burst a new question is
    answered within 5 s; resident memory after the third burst is at most 1.3 times that after the first."""
    env = {"RAG_SERVE_MAX_WAIT": "4"}
    with running_server(seed_store_dir, "--no-access-log", **env) as served:
        after: list[int] = []
        for _ in range(3):
            results = burst(served.url, 40, timeout=15)
            statuses = [status for status, _ in results]
            assert 0 not in statuses, results  # no client waited out its timeout
            assert set(statuses) <= {200, 503}, results
            assert statuses.count(200) >= 4, results
            assert all(seconds < 2 for status, seconds in results if status == 503), results
            started = time.monotonic()
            with httpx.Client(base_url=served.url, timeout=30) as client:
                assert client.post("/api/ask", json={"question": UNLEARNING}).status_code == 200
            assert time.monotonic() - started <= 5
            after.append(rss_kb(served.process.pid))
        assert after[-1] <= 1.3 * after[0], after
