"""Search latency of each retriever, side by side in one run, on the same questions and store.

    python evals/bench_search.py [--store DIR] [--rounds 3]

Runs every question of evals/questions.jsonl once to warm up, then `rounds` times per retriever,
interleaving the retrievers so machine noise hits them equally; prints p50/p95 in ms and the ratio to dense.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path

from rag.config import Settings
from rag.embedding import get_embedder
from rag.evaluation import default_questions_file, load_questions, percentile
from rag.pipeline import Pipeline
from rag.query import parse
from rag.retrieval import RETRIEVERS
from rag.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    settings = Settings.from_env()
    if args.store:
        settings = replace(settings, store=args.store)
    store, embedder = Store(settings), get_embedder(settings)
    pipeline = Pipeline(store, embedder, settings)
    questions = [q.question for q in load_questions([default_questions_file()])]
    for mode in RETRIEVERS:  # warm-up: model session, lexical index, Chroma caches
        for q in questions:
            pipeline.retrieve(parse(q), k=args.k, mode=mode)
    timings: dict[str, list[float]] = {mode: [] for mode in RETRIEVERS}
    for _ in range(args.rounds):
        for q in questions:
            for mode in RETRIEVERS:
                started = time.perf_counter()
                pipeline.retrieve(parse(q), k=args.k, mode=mode)
                timings[mode].append((time.perf_counter() - started) * 1000)
    dense_p50 = statistics.median(timings["dense"])
    rows = {
        mode: {
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "ratio_to_dense_p50": round(statistics.median(values) / dense_p50, 2),
        }
        for mode, values in timings.items()
    }
    print(json.dumps({"papers": store.count_papers(), "queries": len(timings["dense"]), "retrievers": rows}, indent=2))


if __name__ == "__main__":
    main()
