"""Warm latency of `similar` and `trend` side by side with `ask`, in one process on one store.

    python evals/bench_next.py --store STORE [--n 20]

After one warm-up call of each, the three are timed in turn (ask, similar, trend, ask, …) so the machine's load
falls on all alike: `ask` on questions about the topics below (extractive), `similar` on `n` papers drawn from the
store (seeded), `trend` on the topics. Prints p50 and p95 in seconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TOPICS = (
    "machine unlearning",
    "multi-view clustering",
    "spiking neural networks",
    "federated learning",
    "diffusion models for video generation",
    "graph neural networks for molecules",
    "hyperbolic embeddings",
    "knowledge distillation",
    "contrastive learning",
    "implicit neural representations",
)


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    from rag.api import Papers
    from rag.lexical import get_index

    papers = Papers(store=args.store)
    pipeline = papers.pipeline
    with pipeline.store.reading():
        ids = sorted(set(get_index(pipeline.store).paper_ids))
    chosen = random.Random(args.seed).sample(ids, min(args.n, len(ids)))
    topics = [TOPICS[i % len(TOPICS)] for i in range(args.n)]
    # Warm-up: every model loaded, every cache filled once.
    papers.ask(f"which papers study {topics[0]}?")
    papers.similar(chosen[0])
    papers.trend(topics[0])
    times: dict[str, list[float]] = {"ask": [], "similar": [], "trend": []}
    for paper_id, topic in zip(chosen, topics, strict=True):
        times["ask"].append(timed(lambda t=topic: papers.ask(f"which papers study {t}?")))
        times["similar"].append(timed(lambda p=paper_id: papers.similar(p)))
        times["trend"].append(timed(lambda t=topic: papers.trend(t)))
    count = papers.info()["papers"]
    print(f"{count:,} papers, {args.n} calls each, warm, interleaved")
    for name, values in times.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(f"{name:8} p50 {statistics.median(values):.3f} s   p95 {p95:.3f} s")


if __name__ == "__main__":
    main()
