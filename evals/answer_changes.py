"""Which answers a change changes: every question of the named sets through one checkout's pipeline, then two such
runs compared set by set and question by question.

    PYTHONPATH=TREE python evals/answer_changes.py dump OUT.pkl --store SEED_STORE --sets dev,test,dev2,sealed9 \
        [--depth 20]
    python evals/answer_changes.py compare BEFORE.pkl AFTER.pkl      # per-set means, then each changed answer

Scoring (per question, then the mean): citation precision over answered questions with gold (an answered
unanswerable question is not in it: it counts in abstention), citation recall over questions with gold (0 when
refused), topic citation recall over topic questions, abstention over unanswerable ones, false abstains over
answerable ones. Extractive, hybrid, k=5, the reranker on: the defaults. Sealed sets are read only when named.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from dataclasses import replace
from pathlib import Path

EVALS = Path(__file__).resolve().parent


def dump(out: Path, store: Path, names: list[str], depth: int | None) -> None:
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.evaluation.run import RETRIEVAL_DEPTH
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.store import Store

    settings = replace(Settings.from_env(), store=store)
    pipeline = Pipeline(Store(settings), get_embedder(settings), settings)
    team = load_questions([EVALS / "questions.jsonl"])
    split = load_split(EVALS / "split.json")
    runs = {}
    for name in names:
        if name in ("dev", "test"):
            questions = select_split(team, name, split)
        else:
            questions = load_questions([EVALS / f"{name}.jsonl"])
        rows = []
        for question in questions:
            # As `rag eval` asks: `depth` papers retrieved (RETRIEVAL_DEPTH, to score the ranking), the answer reading
            # the top k.
            answer = pipeline.answer(parse(question.question), depth=depth or RETRIEVAL_DEPTH)
            rows.append(
                {
                    "type": question.type,
                    "question": question.question,
                    "gold": list(question.gold_ids),
                    "citations": list(answer.citations),
                    "abstained": answer.abstained,
                }
            )
        runs[name] = rows
        print(name, len(rows), file=sys.stderr, flush=True)
    out.write_bytes(pickle.dumps(runs))


def means(rows: list[dict]) -> tuple[float, ...]:
    precision, recall, topic, abstention, false_abstain = [], [], [], [], []
    for row in rows:
        gold, cited = set(row["gold"]), set(row["citations"])
        if not gold:
            abstention.append(row["abstained"])
            continue
        false_abstain.append(row["abstained"])
        if not row["abstained"]:
            precision.append(len(gold & cited) / len(cited) if cited else 0.0)
        recall.append(0.0 if row["abstained"] else len(gold & cited) / len(gold))
        if row["type"] == "topic":
            topic.append(recall[-1])
    return tuple(sum(v) / len(v) if v else float("nan") for v in (precision, recall, topic, abstention, false_abstain))


def compare(before: dict, after: dict) -> None:
    print("| set | citation precision | citation recall | topic citation recall | abstention | false abstains |")
    print("|---|---|---|---|---|---|")
    names = [name for name in before if name in after]
    for name, rows_a, rows_b in [(n, before[n], after[n]) for n in names] + [
        ("all", [r for n in names for r in before[n]], [r for n in names for r in after[n]])
    ]:
        cells = " | ".join(f"{a:.3f} / {b:.3f}" for a, b in zip(means(rows_a), means(rows_b), strict=True))
        print(f"| {name} | {cells} |")
    print()
    for name in names:
        for a, b in zip(before[name], after[name], strict=True):
            if set(a["citations"]) != set(b["citations"]) or a["abstained"] != b["abstained"]:
                gold = set(a["gold"])

                def said(row: dict, gold: set = gold) -> str:
                    cited = set(row["citations"])
                    return "refused" if row["abstained"] else f"{len(gold & cited)}/{len(cited)} right"

                print(f"{name} {a['type']} (gold {len(gold)}): {said(a)} -> {said(b)} | {a['question']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--store", type=Path, required=True)
    dumping.add_argument("--sets", required=True)
    dumping.add_argument("--depth", type=int, help="papers retrieved (default: rag eval's RETRIEVAL_DEPTH)")
    comparing = commands.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.store, args.sets.split(","), args.depth)
    else:
        compare(pickle.loads(args.before.read_bytes()), pickle.loads(args.after.read_bytes()))


if __name__ == "__main__":
    main()
