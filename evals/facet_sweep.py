"""Sweep the facet bar and focus (`Policy.facet_bar`, `Policy.facet_focus`) and a list's cite bar on dev questions:
the command behind their values.

    python evals/facet_sweep.py --store SEED_STORE [--sets dev,dev2,dev3,dev4] [--bars 0.45,0.55,0.65]
        [--focus 0,0.5,1] [--cite-bars 0.25,0.35]

For each (focus, bar, cite bar), the real pipeline (`rag.evaluation.run_eval`, hybrid, extractive, k=5) over each set's
questions: citation precision, recall and F1, topic citation recall, abstention accuracy, false abstains, and
utility (per question: citation F1 when answerable, 1 for a right refusal), each set and pooled. The values are
chosen on dev sets by pooled utility; test, held-out and the sealed sets are reported, never swept.
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
    parser.add_argument("--sets", default="dev,dev2,dev3,dev4")
    parser.add_argument("--bars", default="0.45,0.55,0.65")
    parser.add_argument("--focus", default="0,0.5,1")
    parser.add_argument("--cite-bars", default="", help="a list's cite bar (calibration.json's when not given)")
    args = parser.parse_args()

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.evaluation.run import run_eval
    from rag.pipeline import Pipeline
    from rag.policy import Policy
    from rag.store import Store

    split = load_split(REPO / "evals" / "split.json")
    sets = {}
    for name in args.sets.split(","):
        if name in ("dev", "test"):
            sets[name] = select_split(load_questions([REPO / "evals" / "questions.jsonl"]), name, split)
        else:
            sets[name] = load_questions([REPO / "evals" / f"{name}.jsonl"])
    settings = replace(Settings.from_env(), store=Path(args.store))
    store, embedder = Store(settings), get_embedder(settings)
    print("| focus | bar | cite bar | set | " + " | ".join(METRICS) + " | utility |")
    print("|---|---|---|---|" + "---|" * (len(METRICS) + 1))
    policy = Policy.from_settings(settings)
    if policy.calibration is None:
        raise SystemExit("error: the sweep reads the reranker's relevance: run it with RAG_RERANKER=on")
    cite_bars = [float(c) for c in args.cite_bars.split(",")] if args.cite_bars else [policy.calibration.cite_bar]
    for focus in (float(f) for f in args.focus.split(",")):
        for bar in (float(b) for b in args.bars.split(",")):
            for cite in cite_bars:
                calibration = replace(policy.calibration, cite_bar=cite)
                swept = replace(policy, facet_bar=bar, facet_focus=focus, calibration=calibration)
                pipeline = Pipeline(store, embedder, settings, policy=swept)
                pooled = []
                setting = f"| {focus:g} | {bar:.2f} | {cite:.2f} |"
                for name, questions in sets.items():
                    run = run_eval(questions, store, embedder, settings, "hybrid", "extractive", 5, pipeline=pipeline)
                    pooled.extend(run.questions)
                    print(f"{setting} {name} | " + row(run.questions) + " |", flush=True)
                if len(sets) > 1:
                    print(f"{setting} **pooled** | " + row(pooled) + " |", flush=True)


def row(results: list) -> str:
    values = [mean([r.metrics.get(m) for r in results]) for m in METRICS]
    values[METRICS.index("topic_citation_recall")] = mean(
        [r.metrics.get("citation_recall") for r in results if r.type == "topic"]
    )
    utility = mean([_utility(r.metrics) for r in results])
    return " | ".join(f"{v:.3f}" for v in values) + f" | {utility:.4f}"


def _utility(metrics: dict) -> float:
    if metrics.get("abstention_accuracy") is not None:
        return metrics["abstention_accuracy"]
    return metrics.get("citation_f1") or 0.0


METRICS = (
    "citation_precision",
    "citation_recall",
    "citation_f1",
    "topic_citation_recall",
    "abstention_accuracy",
    "false_abstain_rate",
)

if __name__ == "__main__":
    main()
