"""The cross-encoder reranker (issue 16) measured as it would ship: int8 ONNX on onnxruntime + tokenizers.

    python evals/rerank_measure.py --store /tmp/rr-store --model reranker-onnx [--k 30] [--passage abstract]
        [--out results.json]

For every question of evals/questions.jsonl (dev and test parts, evals/split.json) and evals/heldout.jsonl: the
default hybrid retriever's top `--k` papers (`Pipeline.retrieve`, as `rag search` gets them), then the same
papers reordered by the cross-encoder's score on (question, passage), where the passage is title + " " +
abstract start (`abstract`, what the model was trained on) or title + " " + the retrieved best chunk (`chunk`).
Prints one table: recall@1, recall@5, MRR, paraphrase recall@5 and recall@k (the candidates' ceiling) per set,
not reranked vs reranked, and the reranker's latency per question (ms to score the k candidates, 2 threads).
Nothing is tuned here: no threshold, no score mixing; the reranked order is the model's order.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere: train/ is a top-level package of the checkout
    sys.path.insert(0, str(REPO))

from rag.evaluation.metrics import mean, recall_at, reciprocal_rank  # noqa: E402

SETS = ("dev", "test", "heldout")


def rerank(ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """`ids` by descending score; equal scores keep the retriever's order."""
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: -scores[i])]


def summarize(rows: Sequence[dict], field: str) -> dict:
    """Means over the questions with gold papers of the ranking in `row[field]`: recall@1, recall@5, MRR,
    paraphrase recall@5 (questions of type "paraphrase") and recall@all (the candidates' ceiling)."""
    answerable = [r for r in rows if r["gold_ids"]]

    def over(items: Sequence[dict], fn) -> float | None:
        return mean(fn(r[field], r["gold_ids"]) for r in items)

    return {
        "n": len(answerable),
        "recall@1": over(answerable, lambda ranked, gold: recall_at(ranked, gold, 1)),
        "recall@5": over(answerable, lambda ranked, gold: recall_at(ranked, gold, 5)),
        "mrr": over(answerable, reciprocal_rank),
        "paraphrase_recall@5": over(
            [r for r in answerable if r["type"] == "paraphrase"], lambda ranked, gold: recall_at(ranked, gold, 5)
        ),
        "recall@all": over(answerable, lambda ranked, gold: recall_at(ranked, gold, len(ranked))),
    }


def question_sets() -> dict[str, list]:
    from rag.evaluation.questions import (
        default_questions_file,
        default_split_file,
        load_questions,
        load_split,
        select_split,
    )

    questions = load_questions([default_questions_file()])
    split = load_split(default_split_file())
    return {
        "dev": select_split(questions, "dev", split),
        "test": select_split(questions, "test", split),
        "heldout": load_questions([REPO / "evals" / "heldout.jsonl"]),
    }


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.store import Store
    from train.onnx_scorer import OnnxCrossEncoder
    from train.reranker import document

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="the folder python -m train.export wrote")
    parser.add_argument("--model-file", default="model_int8.onnx")
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--max-length", type=int, default=160)
    parser.add_argument("--passage", choices=("abstract", "chunk"), default="abstract")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    settings = replace(Settings.from_env(), store=args.store, reranker=False)  # the fused order, not reranked
    store, embedder = Store(settings), get_embedder(settings)
    fused = Pipeline(store, embedder, settings)
    scorer = OnnxCrossEncoder(args.model, args.model_file, args.max_length, args.threads)
    scorer.score("warm up", ["the session's first run allocates"])
    results: dict[str, dict] = {}
    latencies: list[float] = []
    for name, questions in question_sets().items():
        rows = []
        for q in questions:
            sources = fused.retrieve(parse(q.question), k=args.k).sources
            if args.passage == "abstract":
                passages = [document(s.title or "", s.abstract or s.snippet) for s in sources]
            else:
                passages = [f"{s.title or ''} {s.snippet}".strip() for s in sources]
            started = time.perf_counter()
            scores = scorer.score(q.question, passages).tolist() if passages else []
            latencies.append((time.perf_counter() - started) * 1000)
            ids = [s.id for s in sources]
            rows.append(
                {
                    "qid": q.qid,
                    "type": q.type,
                    "gold_ids": list(q.gold_ids),
                    "base": ids,
                    "reranked": rerank(ids, scores),
                }
            )
        results[name] = {"base": summarize(rows, "base"), "reranked": summarize(rows, "reranked"), "rows": rows}

    metrics = ("recall@1", "recall@5", "mrr", "paraphrase_recall@5", "recall@all")
    print(f"| set | n | ranking | {' | '.join(m.replace('@all', f'@{args.k}') for m in metrics)} |")
    print("|---|---|---|" + "---|" * len(metrics))
    for name in SETS:
        for field, label in (("base", "hybrid"), ("reranked", "hybrid → reranker")):
            s = results[name][field]
            print(f"| {name} | {s['n']} | {label} | {' | '.join(fmt(s[m]) for m in metrics)} |")
    p50 = statistics.median(latencies)
    p95 = sorted(latencies)[int(0.95 * (len(latencies) - 1))]
    print(
        f"\nreranker latency per question ({args.k} candidates, {args.threads} threads):"
        f" p50 {p50:.0f} ms, p95 {p95:.0f} ms"
    )
    if args.out:
        summary = {
            "args": {k: str(v) for k, v in vars(args).items()},
            "latency_ms": {"p50": p50, "p95": p95, "n": len(latencies)},
            "results": results,
        }
        args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
