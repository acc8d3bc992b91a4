"""Store safety: concurrent ingests, kill -9 mid-ingest (filling, updating, rebuilding), a read-only or full store,
a store built with another model, a damaged store — each a clear one-line message, and nothing committed is lost.

The kills and the concurrent ingest are placed exactly with fault points (tests/fault_points.py: the real CLI with
Chroma's writes counted), never by hoping an ingest is still busy.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from rag.config import Settings
from rag.corpus import Paper, load_papers
from rag.ingest import write
from rag.store import Store

from .. import fault_points
from ..helpers import BIN, assert_store_exact, cli_env, expected_chunks, ingest_counts, write_jsonl_gz


def rag(args: list[str], env: dict, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "rag"), *args], env=env, capture_output=True, text=True, timeout=300, **kwargs)


def store_env(tmp_path: Path, window: int) -> dict[str, str]:
    return cli_env(
        RAG_STORE=str(tmp_path / "store"), RAG_INGEST_WINDOW=str(window), XDG_CACHE_HOME=str(tmp_path / "cache")
    )


def as_read(papers: list[Paper], path: Path) -> list[Paper]:
    """`papers` written to `path` and read back as `rag ingest` reads them (titles and all)."""
    return load_papers([write_jsonl_gz(papers, path)])


def stored_chunks(store: Path) -> dict[str, dict]:
    """chunk id → metadata, as committed."""
    rows = Store(replace(Settings(), store=store)).collection().get(include=["metadatas"])
    return dict(zip(rows["ids"], rows["metadatas"], strict=True))


def test_kill_9_during_ingest_then_rerun_resumes_with_exact_counts(tmp_path, seed_papers):
    store = tmp_path / "store"
    env = store_env(tmp_path, window=24)
    papers_file = tmp_path / "papers.jsonl.gz"
    papers = as_read(seed_papers[:30], papers_file)
    expected = expected_chunks(papers)

    killed = fault_points.run(["ingest", str(papers_file)], env, at="upsert:3")  # kill -9 once 3 writes are in
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    committed_ids = {meta["paper_id"] for meta in stored_chunks(store).values()}
    committed = [p for p in papers if p.id in committed_ids]
    assert 0 < len(committed) < len(papers)
    assert_store_exact(store, committed)  # whole papers only: none half-written

    rerun = rag(["ingest", str(papers_file)], env)
    assert rerun.returncode == 0, rerun.stderr
    done = ingest_counts(rerun.stdout)
    # The finished papers are neither redone nor re-embedded; the rest are embedded once.
    assert (done["added"], done["updated"], done["unchanged"]) == (len(papers) - len(committed), 0, len(committed))
    assert done["embedded"] == len(expected) - len(expected_chunks(committed))
    assert_store_exact(store, papers)
    assert ingest_counts(rag(["ingest", str(papers_file)], env).stdout)["embedded"] == 0
    found = json.loads(rag(["search", "what is AGREST?", "--json"], env).stdout)
    # MiniLM alone ranks 000-15 outside its top 5 for this name: only a BM25 index rebuilt for the final
    # contents puts it first.
    assert found["results"][0]["id"] == "000-15"


def test_kill_9_while_updating_papers_then_rerun_ends_complete_and_exact(tmp_path, seed_papers):
    store = tmp_path / "store"
    env = store_env(tmp_path, window=6)
    base = seed_papers[:18]
    old = as_read(base, tmp_path / "v1.jsonl.gz")
    assert rag(["ingest", str(tmp_path / "v1.jsonl.gz")], env).returncode == 0
    # A third of the papers shrink to their first sentence (the update deletes their stale chunks before writing
    # the new ones), a third grow by another abstract; with a 6-chunk window each write holds one of each.
    changed = []
    for n, paper in enumerate(base):
        if n % 3 == 0:
            changed.append(replace(paper, abstract=paper.abstract.split(". ")[0] + "."))
        elif n % 3 == 1:
            changed.append(replace(paper, abstract=f"{paper.abstract} {seed_papers[50 + n].abstract}"))
        else:
            changed.append(paper)
    changed[-2] = replace(changed[-2], abstract=changed[-2].abstract + " The method is named Quokkanet.")
    new_file = tmp_path / "v2.jsonl.gz"
    new = as_read(changed, new_file)
    old_chunks, new_chunks = expected_chunks(old), expected_chunks(new)
    updated = [p for p, q in zip(old, new, strict=True) if p != q]
    assert any(len(expected_chunks([p])) < len(expected_chunks([q])) for p, q in zip(new, old, strict=True))

    # kill -9 right after the second write's stale-chunk delete, before its upsert.
    killed = fault_points.run(["ingest", str(new_file)], env, at="delete:2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    stored = stored_chunks(store)
    states = {}
    for paper in updated:
        ids = {i for i in stored if i.startswith(f"{paper.id}#")}
        was = {i for i in old_chunks if i.startswith(f"{paper.id}#")}
        now = {i for i in new_chunks if i.startswith(f"{paper.id}#")}
        head = stored[f"{paper.id}#0"]["paper_hash"]
        if head == new_chunks[f"{paper.id}#0"].metadata["paper_hash"] and ids == now:
            states[paper.id] = "done"
        elif head == old_chunks[f"{paper.id}#0"].metadata["paper_hash"] and ids == was:
            states[paper.id] = "untouched"
        elif head == old_chunks[f"{paper.id}#0"].metadata["paper_hash"] and ids == was & now:
            states[paper.id] = "stale chunks deleted, new ones not written"
        else:
            raise AssertionError(f"{paper.id} is half-updated: {sorted(ids)} with hash {head}")
    assert set(states.values()) == {"done", "untouched", "stale chunks deleted, new ones not written"}, states

    rerun = rag(["ingest", str(new_file)], env)
    assert rerun.returncode == 0, rerun.stderr
    redo = [p for p in new if states.get(p.id, "done") != "done"]
    done = ingest_counts(rerun.stdout)
    assert (done["added"], done["updated"], done["unchanged"]) == (0, len(redo), len(new) - len(redo))
    assert done["embedded"] == len(expected_chunks(redo))
    assert_store_exact(store, new)  # every paper at its new version: no stale chunk, none missing, no old text
    assert ingest_counts(rag(["ingest", str(new_file)], env).stdout)["embedded"] == 0
    found = json.loads(rag(["search", "what is Quokkanet?", "--json"], env).stdout)
    assert found["results"][0]["id"] == new[-2].id  # the lexical index follows the new texts


def test_the_exactness_check_fails_on_a_stale_chunk_or_an_old_text(tmp_path, seed_papers):
    """`assert_store_exact` must be able to fail: one chunk too many, or a chunk of the previous version."""
    from rag.embedding import get_embedder

    store = tmp_path / "store"
    settings = replace(Settings(), store=store)
    embedder = get_embedder(settings)
    papers = as_read(seed_papers[:3], tmp_path / "papers.jsonl.gz")
    write(Store(settings), papers, embedder)
    assert_store_exact(store, papers)
    collection = Store(settings).collection()
    head = collection.get(ids=[f"{papers[0].id}#0"], include=["embeddings", "documents", "metadatas"])

    stale = {**head["metadatas"][0], "chunk": 7}
    collection.add(ids=[f"{papers[0].id}#7"], embeddings=head["embeddings"], documents=["old"], metadatas=[stale])
    with pytest.raises(AssertionError, match="stale chunks"):
        assert_store_exact(store, papers)
    collection.delete(ids=[f"{papers[0].id}#7"])
    assert_store_exact(store, papers)

    older = {**head["metadatas"][0], "paper_hash": "0" * 32}  # same id and text, of another version
    collection.update(ids=[f"{papers[0].id}#0"], metadatas=[older])
    with pytest.raises(AssertionError, match="of another version"):
        assert_store_exact(store, papers)
    collection.update(
        ids=[f"{papers[0].id}#0"], embeddings=head["embeddings"], metadatas=head["metadatas"], documents=["older text"]
    )
    with pytest.raises(AssertionError, match="differs from the paper's text"):
        assert_store_exact(store, papers)


def test_a_second_ingest_at_once_exits_with_a_clear_message(tmp_path, seed_papers):
    store = tmp_path / "store"
    env = store_env(tmp_path, window=6)
    papers_file = write_jsonl_gz(seed_papers[:12], tmp_path / "papers.jsonl.gz")
    # The first ingest is held at its first write, with the writer lock taken, until the test lets it go.
    with fault_points.Paused(["ingest", str(papers_file)], env, at="upsert:1", pause_dir=tmp_path / "hold") as first:
        first.wait()
        second = rag(["ingest", str(papers_file)], env)
        finished = first.release()
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert second.stderr.strip().endswith(
        f"error: another `rag ingest` (pid {first.process.pid}) is writing to {store}: "
        "wait for it to finish, then run this again"
    )
    assert finished.returncode == 0, finished.stderr
    assert ingest_counts(finished.stdout)["added"] == 12
    assert_store_exact(store, load_papers([papers_file]))


# -- a rebuild killed at each step of its swap ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def rebuild_case(tmp_path_factory, seed_papers) -> dict:
    """An old store (6 seeds), the new input (one paper changed, two added), and the writes a rebuild makes."""
    folder = tmp_path_factory.mktemp("rebuild")
    env = store_env(folder, window=6)
    old = as_read(seed_papers[:6], folder / "old.jsonl.gz")
    changed = replace(seed_papers[1], abstract=seed_papers[1].abstract + " The method is named Quokkanet.")
    new = as_read([seed_papers[0], changed, *seed_papers[2:8]], folder / "new.jsonl.gz")
    built = rag(["ingest", str(folder / "old.jsonl.gz")], env)
    assert built.returncode == 0, built.stderr
    shutil.copytree(folder / "store", folder / "template")
    traced = fault_points.run(["ingest", "--rebuild", str(folder / "new.jsonl.gz")], env, trace=folder / "trace")
    assert traced.returncode == 0, traced.stderr
    calls = (folder / "trace").read_text().splitlines()
    return {"folder": folder, "old": old, "new": new, "calls": calls}


def point(calls: list[str], write: str) -> str:
    """The point of a traced write: "METHOD:N" as is, or "METHOD ENDING" → the one call of METHOD whose line ends so."""
    if ":" in write:
        return write
    method, ending = write.split(" ", 1)
    found = [line.split()[0] for line in calls if line.startswith(f"{method}:") and line.endswith(ending)]
    assert len(found) == 1, f"{write!r} in {calls}"
    return found[0]


# (step, the write, kill before it rather than after, the version readers must see, the command run next)
SWAP_STEPS = [
    ("filling the new collection", "upsert:2", False, "old", "--rebuild"),
    ("before marking it complete", "modify ,rebuild_complete", True, "old", "plain"),
    ("before moving the old one aside", "modify name=papers-replaced", True, "old", "--rebuild"),
    ("before renaming the new one in", "modify name=papers", True, "new", "plain"),
    ("before deleting the old one", "delete_collection papers-replaced", True, "new", "--rebuild"),
    ("after deleting the old one", "delete_collection papers-replaced", False, "new", "plain"),
]


@pytest.mark.parametrize(
    ("step", "write", "before", "version", "next_command"), SWAP_STEPS, ids=[step[0] for step in SWAP_STEPS]
)
def test_a_rebuild_killed_at_any_step_reads_as_old_or_new_and_the_next_ingest_completes(
    tmp_path, rebuild_case, step, write, before, version, next_command
):
    folder, calls = rebuild_case["folder"], rebuild_case["calls"]
    at = point(calls, write)
    store = tmp_path / "store"
    shutil.copytree(folder / "template", store)
    env = store_env(tmp_path, window=6)
    new_file = str(folder / "new.jsonl.gz")

    killed = fault_points.run(["ingest", "--rebuild", new_file], env, at=at, before=before, trace=tmp_path / "trace")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    reached = [line.split()[0] for line in calls].index(at) + 1
    assert (tmp_path / "trace").read_text().splitlines() == calls[:reached]  # the same writes, up to `at`
    # Readers see one whole version: exactly the old papers, or exactly the new.
    assert_store_exact(store, rebuild_case[version])
    shown = rag(["show", "000-02"], env)
    assert shown.returncode == 0, shown.stderr
    assert ("Quokkanet" in shown.stdout) == (version == "new")
    answer = rag(["ask", "--json", "what is DiVeQ?"], env)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["citations"] == ["000-01"]

    args = ["ingest", "--rebuild", new_file] if next_command == "--rebuild" else ["ingest", new_file]
    following = rag(args, env)
    assert following.returncode == 0, following.stderr
    assert_store_exact(store, rebuild_case["new"])
    assert [c.name for c in Store(replace(Settings(), store=store)).client.list_collections()] == ["papers"]
    found = json.loads(rag(["search", "what is Quokkanet?", "--json"], env).stdout)
    assert found["results"][0]["id"] == "000-02"  # the lexical index follows the final contents


def test_a_store_built_with_another_model_is_refused_not_mixed(tmp_path, seed_papers):
    store = tmp_path / "store"
    write(Store(replace(Settings(), store=store)), seed_papers[:3], _FakeModel())
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
    # The commands name the store: copied without --store, they would fill the default store instead.
    assert result.stderr.startswith(
        f"error: the store at {store} is empty: add papers with `rag ingest FILE... --store {store}`"
    )
    assert result.stderr.endswith(f"/seeds --store {store}`)\n") and result.stderr.count("\n") == 1  # one line


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
    first = seed_papers[:10]
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
        assert ingest_counts(resumed.stdout)["unchanged"] >= len(first)  # what was committed before is kept
        assert_store_exact(store, load_papers([everything]))
