"""Store safety: concurrent ingests, kill -9 mid-ingest, a read-only or full store, a store built with
another model, a damaged store — each a clear one-line message, and nothing committed is lost."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from rag.chunking import chunk_paper
from rag.config import Settings
from rag.store import Store

from ..helpers import BIN, chroma_chunk_rows, cli_env, write_jsonl_gz


@pytest.fixture(scope="module")
def seeds_jsonl_gz(tmp_path_factory, seed_papers) -> Path:
    return write_jsonl_gz(seed_papers, tmp_path_factory.mktemp("corpus") / "seeds.jsonl.gz")


def rag(args: list[str], env: dict, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "rag"), *args], env=env, capture_output=True, text=True, timeout=300, **kwargs)


def counts(summary: str) -> dict[str, int]:
    """`95 papers in S: 10 added, 0 updated, 85 unchanged (30 chunks embedded in 2.0s)` → numbers."""
    line = summary.strip().splitlines()[-1]
    tail = line.split(": ", 1)[1]
    return {
        "added": int(tail.split(" added")[0]),
        "updated": int(tail.split("added, ")[1].split(" updated")[0]),
        "unchanged": int(tail.split("updated, ")[1].split(" unchanged")[0]),
        "embedded": int(tail.split("(")[1].split(" chunks")[0]),
    }


def assert_store_exact(store: Path, papers) -> None:
    expected = sum(len(chunk_paper(p, 128, 24, "m")) for p in papers)
    final = Store(replace(Settings(), store=store))
    ids = final.collection().get(include=[])["ids"]
    assert len(ids) == len(set(ids)) == expected  # no duplicates, nothing missing
    assert final.count_papers() == len(papers)


def start_ingest_and_wait_for_rows(args: list[str], env: dict, store: Path, rows: int) -> subprocess.Popen:
    process = subprocess.Popen([str(BIN / "rag"), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while chroma_chunk_rows(store) < rows and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, "the ingest finished before the test could act on it"
    return process


def test_kill_9_during_ingest_then_rerun_resumes_with_exact_counts(tmp_path, seeds_jsonl_gz, seed_papers):
    store = tmp_path / "store"
    env = cli_env(RAG_STORE=str(store), RAG_INGEST_WINDOW="24", XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = start_ingest_and_wait_for_rows(["ingest", str(seeds_jsonl_gz)], env, store, rows=48)
    first.send_signal(signal.SIGKILL)
    first.wait()
    total_chunks = sum(len(chunk_paper(p, 128, 24, "m")) for p in seed_papers)
    assert 0 < chroma_chunk_rows(store) < total_chunks

    rerun = rag(["ingest", str(seeds_jsonl_gz)], env)
    assert rerun.returncode == 0, rerun.stderr
    done = counts(rerun.stdout)
    assert done["added"] + done["unchanged"] == 95 and done["unchanged"] > 0  # finished papers not redone
    assert done["embedded"] < total_chunks  # nor re-embedded
    assert_store_exact(store, seed_papers)
    assert counts(rag(["ingest", str(seeds_jsonl_gz)], env).stdout)["embedded"] == 0
    found = json.loads(rag(["search", "what is DiVeQ?", "--json"], env).stdout)
    assert found["results"][0]["id"] == "000-01"  # the lexical index was rebuilt for the final contents


def test_a_second_ingest_at_once_exits_with_a_clear_message(tmp_path, seeds_jsonl_gz):
    store = tmp_path / "store"
    env = cli_env(RAG_STORE=str(store), RAG_INGEST_WINDOW="24", XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = start_ingest_and_wait_for_rows(["ingest", str(seeds_jsonl_gz)], env, store, rows=1)
    second = rag(["ingest", str(seeds_jsonl_gz)], env)
    assert first.poll() is None, "the first ingest ended before the second started"
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert second.stderr.strip().endswith(
        f"error: another `rag ingest` (pid {first.pid}) is writing to {store}: "
        "wait for it to finish, then run this again"
    )
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert counts(out.decode())["added"] == 95


def test_a_store_built_with_another_model_is_refused_not_mixed(tmp_path, seed_papers):
    store = tmp_path / "store"
    Store(replace(Settings(), store=store)).ingest(seed_papers[:3], _FakeModel())
    env = cli_env(RAG_STORE=str(store), XDG_CACHE_HOME=str(tmp_path / "cache"))
    for args in (["search", "unlearning"], ["ask", "which papers study unlearning?"], ["ingest", "/dev/null"]):
        result = rag(args, env)
        assert result.returncode != 0 and "Traceback" not in result.stderr
    result = rag(["search", "unlearning"], env)
    assert result.stderr == (
        f"error: the store at {store} was built with embedding model 'fake-model', not "
        "'all-MiniLM-L6-v2-onnx-int8': use the same model, or re-ingest with --rebuild\n"
    )
    assert Store(replace(Settings(), store=store)).count_papers() == 3  # untouched


class _FakeModel:
    """A different (deterministic) embedding model, to build a store the packaged model must refuse."""

    name = "fake-model"
    dimension = 384

    def embed(self, texts):
        import numpy as np

        rng = np.random.default_rng(0)
        vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_damaged_store_is_a_clear_error(tmp_path, seed_store_dir):
    store = tmp_path / "store"
    shutil.copytree(seed_store_dir, store)
    with open(store / "chroma.sqlite3", "r+b") as f:
        f.write(b"this is not a database" * 50)
    env = cli_env(RAG_STORE=str(store), XDG_CACHE_HOME=str(tmp_path / "cache"))
    for args in (["search", "unlearning"], ["ask", "what is DiVeQ?"]):
        result = rag(args, env)
        assert result.returncode == 1
        assert result.stderr == (
            f"error: the store at {store} is damaged (not a readable Chroma database): keep it for recovery "
            "and rebuild into a new --store with `rag ingest --rebuild`\n"
        )


def test_a_deleted_collection_reads_as_an_empty_store(tmp_path, seed_store_dir):
    store = tmp_path / "store"
    shutil.copytree(seed_store_dir, store)
    Store(replace(Settings(), store=store)).client.delete_collection("papers")
    result = rag(["ask", "anything"], cli_env(RAG_STORE=str(store), XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: the store at {store} is empty: add papers with `rag ingest FILE...`")
    assert result.stderr.endswith("/seeds`)\n") and result.stderr.count("\n") == 1  # one line, naming the seeds


# -- stores on a read-only or a full filesystem (real mounts: root with CAP_SYS_ADMIN, as here and in CI) -----


@contextlib.contextmanager
def mounted(args: list[str], target: Path):
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()}); this test needs root with CAP_SYS_ADMIN")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def test_a_read_only_store_is_a_clear_error_and_stays_intact(tmp_path, seed_store_dir, seed_papers):
    source = tmp_path / "store"
    shutil.copytree(seed_store_dir, source)
    before = (source / "chroma.sqlite3").read_bytes()
    with mounted(["--bind", str(source)], tmp_path / "ro") as view:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
        env = cli_env(RAG_STORE=str(view), XDG_CACHE_HOME=str(tmp_path / "cache"))
        papers = tmp_path / "new.jsonl"
        papers.write_text('{"id": "n1", "abstract": "A new paper about tokenizers."}\n')
        ingest = rag(["ingest", str(papers)], env)
        assert ingest.returncode == 1
        assert ingest.stderr == f"error: cannot write to the store at {view} (Read-only file system)\n"
        search = rag(["search", "unlearning"], env)
        assert search.returncode == 1 and search.stderr == (
            f"error: the store at {view} is read-only, and Chroma must write even to read: copy it somewhere writable\n"
        )
    assert (source / "chroma.sqlite3").read_bytes() == before


def test_a_full_disk_fails_the_ingest_cleanly_and_it_resumes_once_there_is_room(tmp_path, seed_papers):
    first, rest = seed_papers[:10], seed_papers[10:]
    with mounted(["-t", "tmpfs", "-o", "size=2m", "tmpfs"], tmp_path / "small") as disk:
        store = disk / "store"
        env = cli_env(RAG_STORE=str(store), RAG_INGEST_WINDOW="24", XDG_CACHE_HOME=str(tmp_path / "cache"))
        assert rag(["ingest", str(write_jsonl_gz(first, tmp_path / "first.jsonl.gz"))], env).returncode == 0
        everything = write_jsonl_gz(seed_papers, tmp_path / "all.jsonl.gz")
        full = rag(["ingest", str(everything)], env)
        assert full.returncode == 1 and "Traceback" not in full.stderr
        assert full.stderr.strip().splitlines()[-1] == (
            f"error: the store at {store} could not be written (is the disk full?): free space and run the "
            "command again"
        )
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        resumed = rag(["ingest", str(everything)], env)
        assert resumed.returncode == 0, resumed.stderr
        assert counts(resumed.stdout)["unchanged"] >= len(first)  # what was committed before is kept
        assert_store_exact(store, first + rest)
