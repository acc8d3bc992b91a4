"""Does the top paper state the asked detail? The cross-encoder over its sentences, against the whole passage.

    python evals/sentence_evidence.py --store SEED_STORE

For every fact question (whose top search result is its gold paper) and every unanswerable question of the dev
sets (dev part of questions.jsonl, dev2, dev3, dev4) and of the reported ones (test part, held-out), three scores
of the top paper: the cross-encoder's highest logit over the abstract's sentences, its logit for the whole
passage as the reranker reads it, and `Source.relevance`. Prints each score's AUC of answerable against
unanswerable, per group. A measurement for the judge's evidence; nothing in rag/ reads it.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GROUPS = {
    "dev": ("questions.jsonl:dev", "dev2.jsonl", "dev3.jsonl", "dev4.jsonl"),
    "reported": ("questions.jsonl:test", "heldout.jsonl"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, type=Path)
    args = parser.parse_args()

    from sklearn.metrics import roc_auc_score

    from rag.api import Papers
    from rag.config import Settings
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.rerank import get_reranker, passage

    papers = Papers(args.store)
    reranker = get_reranker(replace(Settings(), store=args.store))
    split = load_split(REPO / "evals" / "split.json")
    for group, names in GROUPS.items():
        labels, scores = [], {"max sentence logit": [], "passage logit": [], "relevance": []}
        for name in names:
            file, _, part = name.partition(":")
            questions = load_questions([REPO / "evals" / file])
            for q in select_split(questions, part, split) if part else questions:
                if q.type not in ("fact", "unanswerable"):
                    continue
                top = papers.search(q.question)[0]
                if q.type == "fact" and top.id not in q.gold_ids:
                    continue  # a retrieval miss, not a question of whether the paper states it
                text = top.abstract or top.snippet
                sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) > 3] or [text]
                labels.append(q.type == "fact")
                scores["max sentence logit"].append(float(reranker.logits(q.question, sentences).max()))
                scores["passage logit"].append(float(reranker.logits(q.question, [passage(top.title, text)])[0]))
                scores["relevance"].append(top.relevance or 0.0)
        answerable = sum(labels)
        print(f"{group}: {answerable} answerable fact questions, {len(labels) - answerable} unanswerable")
        for score, values in scores.items():
            print(f"  {score}: AUC {roc_auc_score(labels, values):.3f}")


if __name__ == "__main__":
    main()
