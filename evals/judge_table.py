"""The issue-28 table: every question set through `rag eval` with each judge, side by side in one run.

    python evals/judge_table.py --store SEED_STORE [--sets dev,test,heldout,dev2,dev3] [--judges rules,learned]
        [--rerankers shipped,DIR]

Each cell is the real pipeline's answer scored by `rag eval` (extractive, hybrid, k=5, the reranker on), with
`RAG_JUDGE` set per column; with `--rerankers`, one column per judge and reranker folder (`shipped` is the
packaged one, a folder is passed as `RAG_RERANKER_MODEL`). Prints one markdown table per set. The sealed sets
are read only when named.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETS = {
    "dev": ["evals/questions.jsonl", "--split", "dev"],
    "test": ["evals/questions.jsonl", "--split", "test"],
    "heldout": ["evals/heldout.jsonl"],
    "dev2": ["evals/dev2.jsonl"],
    "dev3": ["evals/dev3.jsonl"],
    "dev4": ["evals/dev4.jsonl"],
    "sealed": ["evals/sealed.jsonl"],
    "sealed2": ["evals/sealed2.jsonl"],
    "sealed3": ["evals/sealed3.jsonl"],
    "sealed4": ["evals/sealed4.jsonl"],
    "sealed5": ["evals/sealed5.jsonl"],
    "sealed6": ["evals/sealed6.jsonl"],
    "sealed7": ["evals/sealed7.jsonl"],
    "sealed8": ["evals/sealed8.jsonl"],
    "sealed9": ["evals/sealed9.jsonl"],
    "sealed10": ["evals/sealed10.jsonl"],
    "sealed11": ["evals/sealed11.jsonl"],
    "sealed12": ["evals/sealed12.jsonl"],
    "sealed13": ["evals/sealed13.jsonl"],
    "sealed14": ["evals/sealed14.jsonl"],
    "sealed15": ["evals/sealed15.jsonl"],
    "sealed16": ["evals/sealed16.jsonl"],
    "sealed17": ["evals/sealed17.jsonl"],
    "sealed18": ["evals/sealed18.jsonl"],
    "sealed19": ["evals/sealed19.jsonl"],
    "sealed20": ["evals/sealed20.jsonl"],
    "sealed21": ["evals/sealed21.jsonl"],
    "sealed22": ["evals/sealed22.jsonl"],
    "off_domain": ["evals/off_domain.jsonl"],
}
METRICS = (
    "recall@5",
    "citation_precision",
    "citation_recall",
    "topic:citation_recall",
    "abstention_accuracy",
    "false_abstain_rate",
)


def measure(store: str, judge: str, name: str, reranker: str = "shipped") -> dict:
    env = {**os.environ, "RAG_JUDGE": judge}
    if reranker != "shipped":
        env["RAG_RERANKER_MODEL"] = reranker
    out = subprocess.run(
        [sys.executable, "-m", "rag", "eval", "--store", store, "--json", *SETS[name]],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)["runs"][0]


def cell(result: dict, metric: str) -> str:
    kind, _, name = metric.rpartition(":")
    block = result["by_type"].get(kind, {}) if kind else result["overall"]
    value = block.get(name)
    return "" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--sets", default="dev,test,heldout,dev2,dev3")
    parser.add_argument("--judges", default="rules,learned")
    parser.add_argument("--rerankers", default="shipped", help="comma-separated: shipped, or reranker folders")
    args = parser.parse_args()
    rerankers = args.rerankers.split(",")
    columns = [(j, r) for j in args.judges.split(",") for r in rerankers]
    judges = [j if len(rerankers) == 1 else f"{j} {Path(r).name}" for j, r in columns]
    for name in args.sets.split(","):
        results = {label: measure(args.store, j, name, r) for label, (j, r) in zip(judges, columns, strict=True)}
        n = results[judges[0]]["overall"]["n"]
        print(f"\n{name} ({n} questions)\n")
        print("| metric | " + " | ".join(judges) + " |")
        print("|---|" + "---|" * len(judges))
        for metric in METRICS:
            print(f"| {metric} | " + " | ".join(cell(results[j], metric) for j in judges) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
