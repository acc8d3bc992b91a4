"""The held-out set's coined-name and misspelled-question cases, scored from `rag eval` runs of it.

    rag eval evals/heldout.jsonl --out OUT          (once per setting, e.g. RAG_RERANKER=off and on)
    python evals/heldout_subsets.py OUT_OFF/results.json OUT_ON/results.json

evals/heldout.jsonl tags its 8 "what is <name>?" questions `[name]` and its 6 misspelled ones `[typo: …]` in
their rationale (written before any tuning). For each results file: per subset, the share answered (not
abstained), recall@5, and the share whose first citation is a gold paper.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HELDOUT = Path(__file__).resolve().parent / "heldout.jsonl"


def subsets() -> dict[str, set[str]]:
    tags: dict[str, set[str]] = {"name": set(), "typo": set()}
    for line in HELDOUT.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for tag in tags:
            if row["rationale"].startswith(f"[{tag}"):
                tags[tag].add(row["qid"])
    return tags


def main(paths: list[str]) -> None:
    groups = subsets()
    print("| results | subset | n | answered | recall@5 | first citation gold |")
    print("|---|---|---|---|---|---|")
    for path in paths:
        run = json.loads(Path(path).read_text(encoding="utf-8"))["runs"][0]
        for name, qids in groups.items():
            rows = [q for q in run["questions"] if q["qid"] in qids]
            answered = sum(not q["abstained"] for q in rows) / len(rows)
            recall = sum(q["metrics"].get("recall@5") or 0.0 for q in rows) / len(rows)
            first = sum(bool(q["citations"]) and q["citations"][0] in q["gold_ids"] for q in rows) / len(rows)
            print(f"| {path} | {name} | {len(rows)} | {answered:.3f} | {recall:.3f} | {first:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
