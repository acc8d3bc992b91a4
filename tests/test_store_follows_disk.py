"""A long-lived process follows the store on disk: papers another process ingests show in its searches and counts
within seconds, no restart (issue 29). Real stores, a real `rag ingest` in a subprocess, a real `rag serve`.

Embedded Chroma keeps the HNSW index it loaded in memory: a process that had searched never saw vectors another
process added, whatever collection handle it asked for, until the store reopens on a new Chroma system
(`Store.follow_disk`, at most every `REFRESH_SECONDS`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import httpx

from rag import Papers
from rag.config import Settings
from rag.query import parse
from rag.store import REFRESH_SECONDS, Store

from .conftest import REPO
from .helpers import cli_env
from .serving import running_server

NEW = "zz-bees"
TOPIC = "honeybee waggle dance"
NEW_PAPER = {
    "id": NEW,
    "title": "Decoding the honeybee waggle dance with harmonic radar",
    "abstract": (
        "We track foraging honeybees with harmonic radar and decode the waggle dance by which a forager tells its "
        "hive mates the direction and distance of a flower patch. Honeybee recruits that followed a waggle dance "
        "flew to the advertised patch in 78% of flights."
    ),
    "year": 2025,
    "venue": "ICLR 2025",
}
FOLLOW_SECONDS = 10  # the bar: within a few seconds, no restart


def ingest_elsewhere(store: Path, tmp_path: Path, env: dict[str, str] | None = None) -> None:
    """`rag ingest` of NEW_PAPER in another process, as a user would run it beside a server."""
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(NEW_PAPER) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "rag", "ingest", str(path), "--store", str(store)],
        env=env or cli_env(XDG_CACHE_HOME=str(tmp_path / "cache")),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "1 added" in done.stdout


def until(check, seconds: float = FOLLOW_SECONDS):
    """Poll `check` until it returns something true, for up to `seconds`; its last value, and the time it took."""
    started = time.monotonic()
    while True:
        value = check()
        if value or time.monotonic() - started > seconds:
            return value, time.monotonic() - started
        time.sleep(0.25)


def test_the_refresh_interval_is_a_few_seconds():
    assert 0 < REFRESH_SECONDS <= 5


def test_papers_finds_a_paper_another_process_ingests_and_counts_it(store_copy, tmp_path):
    papers = Papers(store=store_copy)
    before = papers.info()["papers"]
    assert NEW not in [s.id for s in papers.search(TOPIC, k=5)]  # the store is open and its index loaded

    # Searching from two threads all along: a reopen must not break a query running on the old view.
    errors: list[BaseException] = []
    stop = threading.Event()

    def keep_searching() -> None:
        while not stop.is_set():
            try:
                papers.search("machine unlearning", k=3)
                papers.info()
            except BaseException as exc:  # every failure is the test's to report
                errors.append(exc)
                return

    searchers = [threading.Thread(target=keep_searching) for _ in range(2)]
    for searcher in searchers:
        searcher.start()
    try:
        ingest_elsewhere(store_copy, tmp_path)
        found, took = until(lambda: [s.id for s in papers.search(TOPIC, k=5)][:1] == [NEW])
    finally:
        stop.set()
        for searcher in searchers:
            searcher.join()
    assert errors == []
    assert found, f"the new paper was not found within {FOLLOW_SECONDS} s"
    assert took <= FOLLOW_SECONDS
    assert papers.info()["papers"] == before + 1
    assert papers.get(NEW).title == NEW_PAPER["title"]
    # Both halves of the hybrid search hold it: the dense one (new vectors seen) and the BM25 index (rebuilt).
    assert [s.id for s in papers.pipeline.retrieve(parse(TOPIC), k=1, mode="dense").sources] == [NEW]
    assert [s.id for s in papers.pipeline.retrieve(parse(TOPIC), k=1, mode="lexical").sources] == [NEW]
    answer = papers.ask("which papers study the honeybee waggle dance?")
    assert NEW in [s.id for s in answer.sources]


def test_an_open_store_sees_new_vectors_only_after_the_check(store_copy, tmp_path):
    """The mechanism itself: before the check the old view (Chroma's in-memory index), after it the new one."""
    from rag.embedding import get_embedder

    settings = replace(Settings(), store=store_copy)
    store, embedder = Store(settings), get_embedder(settings)
    vector = embedder.embed([f"{NEW_PAPER['title']}. {NEW_PAPER['abstract']}"])[0]
    assert NEW not in {hit.paper_id for hit in store.query(vector, n=3)}
    generation = store.generation()

    ingest_elsewhere(store_copy, tmp_path)
    store.follow_disk(force=True)
    assert store.generation() != generation
    assert store.query(vector, n=1)[0].paper_id == NEW
    assert store.count_papers() == 96


def test_an_ingest_through_the_same_store_is_seen_at_once_without_reopening(store_copy):
    """The writer's own Store: its writes drop the handle (as before), and are not mistaken for another writer's."""
    from rag.corpus import Paper
    from rag.embedding import get_embedder
    from rag.ingest import ingest

    settings = replace(Settings(), store=store_copy)
    store, embedder = Store(settings), get_embedder(settings)
    client = store.client
    ingest(store, [Paper(id=NEW, abstract=NEW_PAPER["abstract"], title=NEW_PAPER["title"])], embedder)
    assert store.count_papers() == 96
    store.follow_disk(force=True)
    assert store.client is client  # nothing to catch up with: no new Chroma system


def test_rag_serve_finds_a_paper_another_process_ingests(store_copy, tmp_path):
    with running_server(store_copy) as server, httpx.Client(base_url=server.url, timeout=120) as http:
        before = http.get("/api/info").json()["papers"]
        first = http.get("/api/search", params={"q": TOPIC, "k": 5})
        assert first.status_code == 200 and NEW not in [r["id"] for r in first.json()["results"]]

        ingest_elsewhere(store_copy, tmp_path)

        def served() -> bool:
            results = http.get("/api/search", params={"q": TOPIC, "k": 5}).json()["results"]
            return [r["id"] for r in results][:1] == [NEW]

        found, _ = until(served)
        assert found, f"rag serve did not find the new paper within {FOLLOW_SECONDS} s:\n{server.log()}"
        assert http.get("/api/info").json()["papers"] == before + 1
        asked = http.post("/api/ask", json={"question": "which papers study the honeybee waggle dance?"}).json()
        assert NEW in [s["id"] for s in asked["sources"]]


# -- a full disk (a real tmpfs, as tests/reliability/test_store_safety.py mounts them) -----------------------------

TRIES = """
import sys
from rag import Papers
papers = Papers(store=sys.argv[1])
for _ in range(4):  # retried on the same Chroma system, the count hung within 2-5 tries
    try:
        print("papers", papers.info()["papers"], flush=True)
    except Exception as exc:
        print(type(exc).__name__, exc, flush=True)
"""


def test_a_full_disk_is_one_clear_line_and_a_running_reader_keeps_its_view_then_catches_up(tmp_path, seed_store_dir):
    from .reliability.test_store_safety import mounted

    size = sum(f.stat().st_size for f in seed_store_dir.rglob("*") if f.is_file()) // 1024 + 1100  # KB: ~1 MB free
    with mounted(["-t", "tmpfs", "-o", f"size={size}k", "tmpfs"], tmp_path / "small") as disk:
        store = disk / "store"
        shutil.copytree(seed_store_dir, store)
        reader = Papers(store=store)
        assert reader.info()["papers"] == 95 and reader.search(TOPIC, k=1)

        # Another process's ingest fills the disk half-way: the new paper first, then more than there is room for.
        rows = [NEW_PAPER] + [
            {"id": f"pad-{n}", "title": f"Padding {n}", "abstract": "Padding sentence about nothing at all. " * 40}
            for n in range(400)
        ]
        corpus = tmp_path / "big.jsonl"
        corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
        env = cli_env(XDG_CACHE_HOME=str(tmp_path / "cache"), RAG_INGEST_WINDOW="24")
        run = [sys.executable, "-m", "rag", "ingest", str(corpus), "--store", str(store)]
        full = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
        assert full.returncode == 1 and "is the disk full?" in full.stderr, full.stderr

        # The running reader: Chroma cannot apply the log that ingest left, so it answers from the view it has.
        time.sleep(REFRESH_SECONDS + 0.5)
        assert reader.info()["papers"] == 95 and reader.search(TOPIC, k=1)

        # A new process: each try one line (never Chroma's InternalError), and none hangs.
        tries = subprocess.run(
            [sys.executable, "-c", TRIES, str(store)], env=env, capture_output=True, text=True, timeout=120, cwd=REPO
        )
        lines = [line for line in tries.stdout.splitlines() if line]
        disk_full = f"StoreError the store at {store} could not be written (is the disk full?): free space and run the "
        assert lines == [disk_full + "command again"] * 4, tries.stdout + tries.stderr

        # Room again: the reader catches up with what the ingest committed, no restart.
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        found, _ = until(lambda: [s.id for s in reader.search(TOPIC, k=1)] == [NEW])
        assert found
