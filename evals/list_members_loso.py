"""Could a model fitted on list questions decide a list's members better than the calibrated relevance and the facet
rule do? Leave-one-set-out over the eval sets, each set's lists read by a model fitted on the others.

    python evals/list_members_loso.py --store /tmp/seeds [--sentences] [--sets dev2,dev3,…]

For every question the pipeline reads as a list (answerable, with gold ids): the reranker's 20 candidates with the
cross-encoder logit, its gap to the best candidate's, the cosine and its gap to the best, the least facet share
held, the question-term coverage, log1p(fused rank) and whether the question names a topic; `--sentences` adds
the cross-encoder's highest logit over the candidate's sentences and its gap to the best (one cross-encoder pass per
sentence of every candidate: about 1 s per list). A logistic model fitted on the other sets, its member bar chosen
on them (mean F1 of per-question precision and recall), cites the likeliest candidate and every one at the bar.
The shipped rule cites the best candidate and every one at `cite_bar` holding every facet. Printed per set and for
all: per-question citation precision, recall and their F1 under the rule and under the model.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SETS = ",".join(["dev", "test", "dev2", "dev3", "dev4", "heldout", "sealed", *(f"sealed{n}" for n in range(2, 12))])


def collect(store: Path, sets: list[str], sentences: bool) -> dict[str, list[dict]]:
    from rag import rerank
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.store import Store
    from rag.text import split_sentences

    seen: dict = {}
    features = rerank.Reranker.features

    def kept(self, query, sources):  # the features the reranker computed, by paper, for the question just asked
        found = features(self, query, sources)
        seen.clear()
        seen.update({s.id: f for s, f in zip(sources, found, strict=True)}, search=query.search)
        return found

    rerank.Reranker.features = kept
    settings = replace(Settings.from_env(), store=store)
    pipeline = Pipeline(Store(settings), get_embedder(settings), settings)
    split = load_split(REPO / "evals" / "split.json")
    team = load_questions([REPO / "evals" / "questions.jsonl"])
    out: dict[str, list[dict]] = {}
    for name in sets:
        if name in ("dev", "test"):
            questions = select_split(team, name, split)
        else:
            questions = load_questions([REPO / "evals" / f"{name}.jsonl"])
        rows = []
        for q in questions:
            retrieval = pipeline.retrieve(parse(q.question), k=5)
            if not (retrieval.query.wants_list and q.gold_ids and retrieval.candidates):
                continue
            candidates = retrieval.candidates
            best_sentence = [0.0] * len(candidates)
            if sentences:
                assert pipeline.reranker is not None
                for i, c in enumerate(candidates):
                    logits = pipeline.reranker.logits(seen["search"], split_sentences(c.abstract) or [c.snippet])
                    best_sentence[i] = float(np.max(logits))
            rows.append(
                {
                    "gold": set(q.gold_ids),
                    "topic": retrieval.query.is_topic,
                    "ids": [c.id for c in candidates],
                    "relevance": [c.relevance or 0.0 for c in candidates],
                    "shares": [c.facet_shares for c in candidates],
                    "features": [seen[c.id] for c in candidates],
                    "cosine": [c.score for c in candidates],
                    "sentence": best_sentence,
                }
            )
        out[name] = rows
    return out


def matrix(row: dict, sentences: bool) -> np.ndarray:
    logit = np.array([f[0] for f in row["features"]])
    cosine = np.array(row["cosine"])
    least = np.array([min((s for _, s in shares), default=1.0) if shares else 1.0 for shares in row["shares"]])
    columns = [logit, logit - logit.max(), cosine, cosine - cosine.max(), least]
    columns += [np.array([f[2] for f in row["features"]]), np.array([f[3] for f in row["features"]])]
    columns += [np.full(len(logit), float(row["topic"]))]
    if sentences:
        best = np.array(row["sentence"])
        columns += [best, best - best.max()]
    return np.stack(columns, axis=1)


def scored(row: dict, cited: set[str]) -> tuple[float, float]:
    hits = len(row["gold"] & cited)
    return hits / len(cited), hits / len(row["gold"])


def by_rule(row: dict, cite_bar: float, facet_bar: float) -> tuple[float, float]:
    from rag.facets import holds_topic

    cited = {row["ids"][0]} | {
        i
        for i, r, s in zip(row["ids"], row["relevance"], row["shares"], strict=True)
        if r >= cite_bar and holds_topic(s, facet_bar)
    }
    return scored(row, cited)


def by_model(row: dict, p: np.ndarray, bar: float) -> tuple[float, float]:
    cited = {row["ids"][int(np.argmax(p))]} | {i for i, x in zip(row["ids"], p, strict=True) if x >= bar}
    return scored(row, cited)


def f1(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    precision = float(np.mean([p for p, _ in pairs]))
    recall = float(np.mean([r for _, r in pairs]))
    return precision, recall, 2 * precision * recall / (precision + recall)


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from rag.config import Settings
    from rag.policy import Policy

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--sentences", action="store_true")
    args = parser.parse_args()
    policy = Policy.from_settings(Settings.from_env())
    assert policy.calibration is not None
    data = collect(args.store, args.sets.split(","), args.sentences)
    all_rule, all_model = [], []
    print(f"{'set':9} {'lists':>5}  rule P / R / F1       model P / R / F1     bar")
    for held, test in data.items():
        if not test:
            continue
        train = [row for name, rows in data.items() if name != held for row in rows]
        x = np.vstack([matrix(row, args.sentences) for row in train])
        y = np.concatenate([[i in row["gold"] for i in row["ids"]] for row in train]).astype(float)
        model = LogisticRegression(max_iter=2000).fit(x, y)
        likely = [model.predict_proba(matrix(row, args.sentences))[:, 1] for row in train]
        pairs = list(zip(train, likely, strict=True))
        bar = max(np.arange(0.1, 0.9, 0.05), key=lambda b: f1([by_model(r, p, b) for r, p in pairs])[2])
        rule = [by_rule(row, policy.calibration.cite_bar, policy.facet_bar) for row in test]
        learned = [by_model(row, model.predict_proba(matrix(row, args.sentences))[:, 1], bar) for row in test]
        all_rule += rule
        all_model += learned
        print(f"{held:9} {len(test):5}  " + " / ".join(f"{v:.3f}" for v in f1(rule)), end="   ")
        print(" / ".join(f"{v:.3f}" for v in f1(learned)) + f"   {bar:.2f}")
    print(f"{'all':9} {len(all_rule):5}  " + " / ".join(f"{v:.3f}" for v in f1(all_rule)), end="   ")
    print(" / ".join(f"{v:.3f}" for v in f1(all_model)))


if __name__ == "__main__":
    main()
