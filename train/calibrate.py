"""Fit the reranker's calibration on the dev questions only, and write `calibration.json` beside the model.

    python -m train.calibrate --model rag/models/reranker --store SEED_STORE [--candidates 20]

1. For each **dev** question (evals/split.json's dev part of evals/questions.jsonl, and with `--extra
   evals/dev2.jsonl` a second dev set written after the split; the test part is never read): the hybrid retriever's top
   `--candidates` papers without reranking, and rag.rerank's features of each (the cross-encoder's logit, the
   best chunk's cosine, the share of the question's terms the paper holds, log(1 + fused rank)); the label is
   whether the paper is one of the question's gold papers.
2. A logistic regression (scikit-learn) over those rows: `Source.relevance` is its probability.
3. `relevance_bar`: the abstention bar on the best candidate's probability. Chosen on dev: the highest
   abstention accuracy among bars whose false-abstain rate is at most 0.05; of the bars that tie, the middle one.
   The unanswerable cases are dev's own and, because dev has only 4, each answerable dev question asked of the
   store without its gold papers (a near-miss: the papers left share its words, not its topic).
4. `cite_bar` and `detail_bar`: which further papers an extractive answer cites, for a list question and for a
   question about a detail. Chosen on dev by running the real pipeline (`rag.evaluation.run_eval`, extractive,
   k=5) for each candidate bar: the highest citation F1 over that kind of question; ties, the middle.

Needs scikit-learn (the `[train]` extra). Writes `calibration.json` (weights, bars, the dev qids fitted on, the
split file's sha256, both sweeps) into `--model`.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from rag.evaluation.questions import Question
from rag.pipeline import Pipeline, reranked_as

MAX_FALSE_ABSTAIN = 0.05
RELEVANCE_GRID = [round(0.01 * i, 2) for i in range(1, 100)]
CITE_GRID = [round(0.05 * i, 2) for i in range(1, 20)]


def dev_questions(questions_file: Path, split_file: Path, extra_files: list[Path] = ()) -> list[Question]:
    """The dev part, and the extra dev sets, only: calibration must never see a test question."""
    from rag.evaluation.questions import load_questions, load_split, select_split

    dev = select_split(load_questions([questions_file]), "dev", load_split(split_file))
    return dev + (load_questions(extra_files) if extra_files else [])


def middle_of_best(scores: dict[float, float]) -> float:
    """The grid value in the middle of the run of values sharing the best score (robust to the grid's edges)."""
    best = max(scores.values())
    winners = sorted(v for v, s in scores.items() if s >= best - 1e-12)
    return winners[len(winners) // 2]


def abstention_sweep(max_probability: list[float], answerable: list[bool]) -> dict[float, dict]:
    """Per bar: abstention accuracy on the unanswerable questions and false abstains on the answerable ones."""
    sweep = {}
    unanswerable = [p for p, a in zip(max_probability, answerable, strict=True) if not a]
    answered = [p for p, a in zip(max_probability, answerable, strict=True) if a]
    for bar in RELEVANCE_GRID:
        accuracy = sum(p < bar for p in unanswerable) / len(unanswerable) if unanswerable else 0.0
        false = sum(p < bar for p in answered) / len(answered) if answered else 0.0
        sweep[bar] = {"abstention_accuracy": round(accuracy, 4), "false_abstains": round(false, 4)}
    return sweep


def calibrate(args: argparse.Namespace) -> dict:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.run import run_eval
    from rag.policy import FEATURES, Calibration, Policy
    from rag.query import parse
    from rag.rerank import Reranker
    from rag.store import Store

    questions = dev_questions(Path(args.questions), Path(args.split), [Path(f) for f in args.extra])
    settings = replace(Settings.from_env(), store=Path(args.store), reranker=False)
    store, embedder = Store(settings), get_embedder(settings)
    reranker = Reranker(Path(args.model))
    fused = Pipeline(store, embedder, settings)  # the reranker off: the fused candidates whose features are fitted

    rows, labels, groups = [], [], []
    for q in questions:
        retrieval = fused.retrieve(parse(q.question), k=args.candidates)
        # The features the pipeline reads at run time: a list's on its topic words (rag.pipeline.reranked_as).
        scored, sources = reranked_as(retrieval.query), retrieval.sources
        for source, values in zip(sources, reranker.features(scored, sources), strict=True):
            rows.append(values)
            labels.append(source.id in q.gold_ids)
            groups.append(q.qid)
    model = LogisticRegression(C=args.c, max_iter=1000).fit(np.array(rows), np.array(labels))
    weights, bias = tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0])
    placeholder = Calibration(weights, bias, 0.0, 1.0, 1.0, args.candidates)
    probability = [placeholder.probability(r) for r in rows]

    best = {}
    for qid, p in zip(groups, probability, strict=True):
        best[qid] = max(best.get(qid, 0.0), p)
    # Dev holds only 4 unanswerable questions: too few to place a bar. Each answerable dev question asked of the
    # store without its gold papers is a near-miss that should be abstained on (the papers left share its words,
    # not its topic), so those count as unanswerable cases too.
    everything = sorted(store.stored_papers())
    near_misses = []
    for q in questions:
        if not q.gold_ids:
            continue
        others = [p for p in everything if p not in set(q.gold_ids)]
        retrieval = fused.retrieve(parse(q.question), k=args.candidates, paper_ids=others)
        features = reranker.features(reranked_as(retrieval.query), retrieval.sources)
        near_misses.append(max((placeholder.probability(f) for f in features), default=0.0))
    maxima = [best.get(q.qid, 0.0) for q in questions] + near_misses
    answerable = [bool(q.gold_ids) for q in questions] + [False] * len(near_misses)
    sweep = abstention_sweep(maxima, answerable)
    feasible = {b: s["abstention_accuracy"] for b, s in sweep.items() if s["false_abstains"] <= MAX_FALSE_ABSTAIN}
    relevance_bar = middle_of_best(feasible)

    # A list question reads only cite_bar and a detail question only detail_bar, so one run per grid value with
    # both bars at that value scores both kinds; each bar is then chosen on its own kind's citation F1.
    cite_sweep: dict[float, dict] = {}
    run_settings = replace(settings, reranker=True)
    fitted = Calibration(weights, bias, relevance_bar, 1.0, 1.0, args.candidates)
    base = Policy.from_settings(run_settings, calibration=fitted)
    pipeline = RememberingPipeline(store, embedder, run_settings, policy=base, reranker=reranker)
    lists = {q.qid for q in questions if parse(q.question).wants_list}
    for bar in CITE_GRID:
        pipeline.policy = replace(base, calibration=replace(fitted, cite_bar=bar, detail_bar=bar))
        run = run_eval(questions, store, embedder, run_settings, "hybrid", "extractive", 5, pipeline=pipeline)
        cite_sweep[bar] = {}
        for kind, wanted in (("list", True), ("detail", False)):
            scores = [
                r.metrics.get("citation_f1")
                for r in run.questions
                if (r.qid in lists) == wanted and r.metrics.get("citation_f1") is not None
            ]
            cite_sweep[bar][f"{kind}_citation_f1"] = round(sum(scores) / len(scores), 4) if scores else None
    cite_bar = middle_of_best({b: s["list_citation_f1"] or 0.0 for b, s in cite_sweep.items()})
    detail_bar = middle_of_best({b: s["detail_citation_f1"] or 0.0 for b, s in cite_sweep.items()})

    split_sha = hashlib.sha256(Path(args.split).read_bytes()).hexdigest()
    result = {
        "features": list(FEATURES),
        "weights": [round(w, 6) for w in weights],
        "bias": round(bias, 6),
        "relevance_bar": relevance_bar,
        "cite_bar": cite_bar,
        "detail_bar": detail_bar,
        "candidates": args.candidates,
        "fitted_on": {
            "part": "dev",
            "split_file_sha256": split_sha,
            "extra_files": {Path(f).name: hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in args.extra},
            "qids": [q.qid for q in questions],
            "rows": len(rows),
            "near_miss_cases": len(near_misses),
            "positives": int(sum(labels)),
        },
        "command": "python -m train.calibrate " + shlex.join(args.argv),
        "abstention_sweep": {str(b): s for b, s in sweep.items()},
        "cite_sweep": {str(b): s for b, s in cite_sweep.items()},
    }
    out = Path(args.model) / "calibration.json"
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


class RememberingPipeline(Pipeline):
    """`Pipeline` with each retrieval kept: the sweep changes only the citation bars, never the ranking or its
    relevance, so each question is retrieved and reranked once instead of once per grid value (19×): 2.3× faster
    over 5 grid values, side by side in one process on 15 dev questions."""

    def retrieve(self, query, k=None, paper_ids=None, mode=None, policy=None):
        cache = self.__dict__.setdefault("retrieved", {})
        key = (repr(query), k, tuple(paper_ids or ()), mode)
        if key not in cache:
            cache[key] = super().retrieve(query, k=k, paper_ids=paper_ids, mode=mode, policy=policy)
        return copy.deepcopy(cache[key])  # answering may annotate sources; each run starts from the same


def parse_args(argv: list[str]) -> argparse.Namespace:
    repo = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(prog="python -m train.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the reranker folder (model.json, model, tokenizer)")
    parser.add_argument("--store", required=True, help="a store holding the seed papers")
    parser.add_argument("--questions", default=str(repo / "evals" / "questions.jsonl"))
    parser.add_argument("--split", default=str(repo / "evals" / "split.json"))
    parser.add_argument(
        "--extra",
        nargs="*",
        default=[],
        help="further dev question files, read whole, e.g. evals/dev2.jsonl (none of their questions may be in the "
        "test part)",
    )
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation of the logistic layer")
    args = parser.parse_args(argv)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    result = calibrate(parse_args(argv))
    print(json.dumps({k: result[k] for k in ("weights", "bias", "relevance_bar", "cite_bar", "detail_bar")}))


if __name__ == "__main__":
    main()
