"""Which reranked candidates a topic list names: the top k only, or also those below k that pass the list's test,
with the calibrated relevance or with the calibration's rank term left out (rank-free), side by side.

    python evals/list_membership.py --store /tmp/judge-store --questions /tmp/judge-data/questions.jsonl
    python evals/list_membership.py --store /tmp/seeds --questions evals/heldout.jsonl

One pass per question: the pipeline's own retrieval (fused, reranked, facet shares) and its rules answer at k
(the papers quoted from the top k); the candidates below k are then scored both ways from the same cross-encoder
features (the rank term is `log1p(fused rank)`: rank-free sets it to 0, as if each paper were fused first). A
candidate below k is a member when its score reaches the bar and it holds every facet of the topic. Precision
and recall are micro-averaged over the topic questions' cited ids against their gold ids. `--half even|odd`
keeps every other question (choose a bar on one half, read it on the other).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.config import Settings
from rag.embedding import get_embedder
from rag.facets import holds_topic
from rag.lexical import get_index
from rag.pipeline import Pipeline, answer_of, respond
from rag.query import parse
from rag.retrieval import fuse
from rag.spelling import speller_for
from rag.store import Store

BARS = (0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all")
    parser.add_argument("--types", default="topic,venue")
    args = parser.parse_args()

    settings = replace(Settings.from_env(), store=args.store, judge="rules")
    pipeline = Pipeline(Store(settings), get_embedder(settings), settings)
    policy, reranker = pipeline.policy, pipeline.reranker
    calibration = policy.calibration
    assert reranker is not None and calibration is not None
    types = set(args.types.split(","))
    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("type") in types and r.get("gold_ids")]
    if args.half != "all":
        rows = rows[args.half == "odd" :: 2]

    tallies: dict[str, list[int]] = {}  # variant -> [cited, cited gold, gold]

    def tally(name: str, cited: set[str], gold: set[str]) -> None:
        t = tallies.setdefault(name, [0, 0, 0])
        t[0] += len(cited)
        t[1] += len(cited & gold)
        t[2] += len(gold)

    for row in rows:
        query = parse(row["question"])
        gold = set(row["gold_ids"])
        store = pipeline.store
        with store.reading():
            index = get_index(store)
            query, fused = fuse(
                query,
                store,
                pipeline.query_embedder,
                settings,
                policy,
                calibration.candidates,
                None,
                "hybrid",
                index,
                speller_for(index) if settings.spelling else None,
            )
            features = reranker.features(query, fused) if fused else []
            rank_free = {s.id: calibration.probability((*f[:3], 0.0)) for s, f in zip(fused, features, strict=True)}
            ranked = reranker.rerank(query, fused, calibration) if fused else []
            pipeline.add_lexical_evidence(query, ranked, index, "hybrid", policy)
        answer = answer_of(
            respond(query, ranked[: args.k], pipeline.backend("extractive"), policy, shown=args.k, stream=False)
        )
        top = set() if answer.abstained else set(answer.citations)
        tally("top k only", top, gold)
        below = ranked[args.k :] if top else []
        holding = [s for s in below if not query.is_topic or holds_topic(s.facet_shares, policy.facet_bar)]
        for bar in BARS:
            tally(f"calibrated >= {bar}", top | {s.id for s in holding if (s.relevance or 0) >= bar}, gold)
            tally(f"rank-free >= {bar}", top | {s.id for s in holding if rank_free[s.id] >= bar}, gold)

    print(f"{len(rows)} questions ({args.questions.name}, half {args.half}), k={args.k}, {args.store}")
    print("| members | cited | precision | recall | F1 |\n|---|---|---|---|---|")
    for name, (cited, hit, gold) in tallies.items():
        p = hit / cited if cited else 0.0
        r = hit / gold if gold else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(f"| {name} | {cited} | {p:.3f} | {r:.3f} | {f1:.3f} |")


if __name__ == "__main__":
    main()
