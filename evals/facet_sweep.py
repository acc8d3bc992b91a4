"""Sweep the facet bar (`Policy.facet_bar`) on the dev questions: the command behind the bar's value.

    python evals/facet_sweep.py --store SEED_STORE [--part dev] [--bars 0.45,0.5,0.55,0.6,0.65]

For each bar, the real pipeline (`rag.evaluation.run_eval`, hybrid, extractive, k=5) over the part's questions:
citation precision, recall and F1, abstention accuracy and false abstains. The bar is chosen on dev (the best
abstention accuracy, then the best citation F1, then the lower bar); test and held-out are reported, never swept.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="a store holding the seed papers")
    parser.add_argument("--part", default="dev", choices=["dev", "test"])
    parser.add_argument("--bars", default="0.45,0.5,0.55,0.6,0.65")
    args = parser.parse_args()

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.evaluation.run import run_eval
    from rag.pipeline import Pipeline
    from rag.policy import Policy
    from rag.store import Store

    questions = select_split(
        load_questions([REPO / "evals" / "questions.jsonl"]), args.part, load_split(REPO / "evals" / "split.json")
    )
    settings = replace(Settings.from_env(), store=Path(args.store))
    store, embedder = Store(settings), get_embedder(settings)
    print("| bar | citation precision | citation recall | citation F1 | abstention accuracy | false abstains |")
    print("|---|---|---|---|---|---|")
    policy = Policy.from_settings(settings)
    for bar in (float(b) for b in args.bars.split(",")):
        pipeline = Pipeline(store, embedder, settings, policy=replace(policy, facet_bar=bar))
        run = run_eval(questions, store, embedder, settings, "hybrid", "extractive", 5, pipeline=pipeline)
        row = [mean([r.metrics.get(m) for r in run.questions]) for m in METRICS]
        print(f"| {bar:.2f} | " + " | ".join(f"{v:.3f}" for v in row) + " |", flush=True)


METRICS = ("citation_precision", "citation_recall", "citation_f1", "abstention_accuracy", "false_abstain_rate")

if __name__ == "__main__":
    main()
