"""Could a topic's missing part be matched by meaning? The facet rule's refusals, scored by the cross-encoder and
by MiniLM against the closest paper's sentences.

    python evals/facet_meaning.py --store SEED_STORE [--sets dev,dev2,dev3,dev4]

For every topic question of the sets that the shipped pipeline (extractive, hybrid, k=5, rules judge) refuses
while its closest paper reaches the relevance bar and lacks a facet (the facet rule's refusals), two scores of
the facets that paper lacks, the weakest facet's: the cross-encoder's highest logit of (facet, sentence) over the
paper's sentences, and the highest MiniLM cosine. Prints each score's AUC of answerable refusals (false abstains)
against unanswerable ones (right refusals), and at each cut what a meaning match would do: the false abstains it
would answer against the right refusals it would answer. A measurement for item 2 of "Questions as people ask
them"; nothing in rag/ reads it.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--sets", default="dev,dev2,dev3,dev4")
    args = parser.parse_args()

    import numpy as np

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.evaluation.run import RETRIEVAL_DEPTH
    from rag.evidence import display_sentences
    from rag.facets import holds_topic
    from rag.pipeline import Pipeline
    from rag.policy import Policy
    from rag.query import parse
    from rag.rerank import get_reranker
    from rag.store import Store

    settings = replace(Settings.from_env(), store=args.store)
    store, embedder = Store(settings), get_embedder(settings)
    policy = Policy.from_settings(settings)
    assert policy.calibration is not None, "the measurement reads the reranker's relevance (RAG_RERANKER=on)"
    pipeline, reranker = Pipeline(store, embedder, settings, policy=policy), get_reranker(settings)
    split = load_split(REPO / "evals" / "split.json")
    labels: list[bool] = []
    scores: dict[str, list[float]] = {"cross-encoder max logit": [], "MiniLM max cosine": []}
    for name in args.sets.split(","):
        if name in ("dev", "test"):
            questions = select_split(load_questions([REPO / "evals" / "questions.jsonl"]), name, split)
        else:
            questions = load_questions([REPO / "evals" / f"{name}.jsonl"])
        for q in questions:
            query = parse(q.question)
            if not query.is_topic:
                continue
            answer = pipeline.answer(query, k=5, backend="extractive", depth=RETRIEVAL_DEPTH, fallback=False)
            closest = answer.sources[0] if answer.sources else None
            if (
                not answer.abstained
                or closest is None
                or holds_topic(closest.facet_shares, policy.facet_bar)
                or closest.closeness < policy.calibration.relevance_bar
            ):
                continue
            sentences = [f"{closest.title}. {s}" if closest.title else s for s in display_sentences(closest.abstract)]
            lacking = [text for text, share in closest.facet_shares or () if share < policy.facet_bar]
            vectors = embedder.embed(sentences)
            logits, cosines = [], []
            for facet in lacking:
                logits.append(float(reranker.logits(facet, sentences).max()))
                cosines.append(float((vectors @ embedder.embed([facet])[0]).max()))
            labels.append(bool(q.gold_ids))
            scores["cross-encoder max logit"].append(min(logits))
            scores["MiniLM max cosine"].append(min(cosines))
    answerable, refusals = sum(labels), len(labels)
    print(f"{refusals} facet-rule refusals: {answerable} answerable (false abstains), {refusals - answerable} not")
    for score, values in scores.items():
        print(f"\n{score}: AUC {auc(labels, values):.3f}")
        print("| matched at ≥ | false abstains answered | right refusals answered |")
        print("|---|---|---|")
        for cut in np.quantile(values, [0.5, 0.6, 0.7, 0.8, 0.9]):
            lifted = [label for label, value in zip(labels, values, strict=True) if value >= cut]
            wrong = len(lifted) - sum(lifted)
            print(f"| {cut:.2f} | {sum(lifted)} of {answerable} | {wrong} of {refusals - answerable} |")


def auc(labels: list[bool], values: list[float]) -> float:
    """The chance an answerable refusal scores above an unanswerable one (ties half): the ROC AUC, over a few
    dozen pairs, without the [train] extra's scikit-learn."""
    pos = [v for label, v in zip(labels, values, strict=True) if label]
    neg = [v for label, v in zip(labels, values, strict=True) if not label]
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


if __name__ == "__main__":
    main()
