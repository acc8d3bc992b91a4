"""HNSW search beam: exactness and cost of Chroma's `ef_search`, side by side in one process.

    python evals/ef_search.py --store STORE [--ef 100,400] [--depth 80]

Copies the store once per value, sets that `ef_search` on the copy, and over every eval question's embedding
counts the questions whose `depth` nearest chunks differ from the exact cosine top `depth` (numpy over all the
store's vectors), and times the Chroma query (ids and distances only; three passes, interleaved, mean per query).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETS = ("questions.jsonl", "dev2.jsonl", "dev3.jsonl", "heldout.jsonl")
SET_EF = (
    "import sys, chromadb; chromadb.PersistentClient(sys.argv[1]).get_collection(sys.argv[2])"
    ".modify(configuration={'hnsw': {'ef_search': int(sys.argv[3])}})"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--collection", default="papers")
    parser.add_argument("--ef", default="100,400")
    parser.add_argument("--depth", type=int, default=80)
    args = parser.parse_args()

    import chromadb
    import numpy as np

    from rag.config import Settings
    from rag.embedding import get_embedder

    embedder = get_embedder(Settings())
    questions = [json.loads(line)["question"] for name in SETS for line in (REPO / "evals" / name).open()]
    queries = [embedder.embed([q])[0] for q in questions]
    work = Path(tempfile.mkdtemp())
    collections = {}
    for ef in (int(v) for v in args.ef.split(",")):
        copy = work / str(ef)
        shutil.copytree(args.store, copy)
        # Set in a child process: Chroma keeps one client per path per process, and a collection modified
        # through it keeps its old beam until the process reopens it.
        subprocess.run(
            [sys.executable, "-c", SET_EF, str(copy), args.collection, str(ef)], check=True, capture_output=True
        )
        collections[ef] = chromadb.PersistentClient(str(copy)).get_collection(args.collection)
    first = next(iter(collections.values()))
    rows = first.get(include=["embeddings"])
    ids, vectors = rows["ids"], np.asarray(rows["embeddings"], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = [{ids[i] for i in np.argsort(-(vectors @ (q / np.linalg.norm(q))))[: args.depth]} for q in queries]
    elapsed = dict.fromkeys(collections, 0.0)
    misses = dict.fromkeys(collections, 0)
    for rep in range(3):
        for ef, collection in collections.items():
            started = time.perf_counter()
            results = [
                collection.query(query_embeddings=[q.tolist()], n_results=args.depth, include=["distances"])["ids"][0]
                for q in queries
            ]
            elapsed[ef] += time.perf_counter() - started
            if rep == 0:
                misses[ef] = sum(set(got) != want for got, want in zip(results, exact, strict=True))
    print(f"{len(ids)} chunks, {len(queries)} questions, depth {args.depth}")
    print("| ef_search | questions missing a true top-depth chunk | ms per query |")
    print("|---|---|---|")
    for ef in collections:
        print(f"| {ef} | {misses[ef]} | {elapsed[ef] / 3 / len(queries) * 1000:.2f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
