"""How right `rag trend`'s membership is: precision and recall of "on topic X" on papers a reader labelled.

    python evals/trend_label.py sample --store STORE --runs R.json --blind B.jsonl [--per-side 20]
    (a helper shown no code labels B.jsonl: one line {"topic": T, "on_topic": [PID, ...]} per topic)
    python evals/trend_label.py score --runs R.json --labels L.jsonl

For each topic, `sample` counts the members (rag.trend) and draws `per-side` papers from the members and as many
from the candidates judged not members, seeded; the blind file lists the topic and those papers shuffled (title,
abstract), nothing saying which side each came from. `score` estimates, per topic and over all:
precision = the labelled share of sampled members on topic; the members missed = the labelled share of sampled
non-members on topic × the non-members judged; recall = members on topic / (that + those missed); and the count's
error that implies. Papers below the judged depth are not drawn: a topic whose count is a lower bound says so.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Topics of different sizes and shapes: one word, a two-word method family, an application of a method. READ_RANK
# (rag.trend) was chosen on these.
TOPICS = (
    "machine unlearning",
    "multi-view clustering",
    "spiking neural networks",
    "federated learning",
    "video generation with diffusion models",
    "graph neural networks for molecules",
)


# Chosen before any count of them was seen, for reporting the choice of READ_RANK made on TOPICS.
HELDOUT_TOPICS = (
    "model merging",
    "out-of-distribution detection",
    "neural architecture search",
    "protein structure prediction",
    "reinforcement learning from human feedback",
    "dataset distillation",
)


def sample(args: argparse.Namespace) -> None:
    from rag.api import Papers
    from rag.query import parse
    from rag.trend import trend

    papers = Papers(store=args.store)
    pipeline = papers.pipeline
    rng = random.Random(args.seed)
    runs, blind = {}, []
    for topic in HELDOUT_TOPICS if args.heldout else TOPICS:
        counted = trend(pipeline, parse(topic))
        members = [s.id for s in counted.members]
        others = [pid for pid in counted.judged_ids if pid not in set(members)]
        drawn_members = rng.sample(members, min(args.per_side, len(members)))
        drawn_others = rng.sample(others, min(args.per_side, len(others)))
        runs[topic] = {
            "count": counted.count,
            "complete": counted.complete,
            "judged": counted.judged,
            "members": members,
            "non_members": len(others),
            "drawn_members": drawn_members,
            "drawn_others": drawn_others,
        }
        drawn = drawn_members + drawn_others
        rng.shuffle(drawn)
        found = pipeline.store.get_papers(drawn)
        blind.append(
            {
                "topic": topic,
                "papers": [{"id": pid, "title": found[pid].title, "abstract": found[pid].abstract} for pid in drawn],
            }
        )
    Path(args.runs).write_text(json.dumps(runs, indent=1))
    Path(args.blind).write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in blind))
    for topic, run in runs.items():
        bound = "" if run["complete"] else "at least "
        print(f"{topic:40} {bound}{run['count']} members of {run['judged']} judged")


def score(args: argparse.Namespace) -> None:
    runs = json.loads(Path(args.runs).read_text())
    labels = {row["topic"]: set(row["on_topic"]) for row in map(json.loads, Path(args.labels).read_text().splitlines())}
    sums = {"members_on": 0.0, "true": 0.0, "count": 0}
    print(f"{'topic':40} {'count':>6} {'precision':>9} {'missed':>7} {'recall':>7} {'count error':>11}")
    for topic, run in runs.items():
        on = labels[topic]
        precision = (
            sum(p in on for p in run["drawn_members"]) / len(run["drawn_members"]) if run["drawn_members"] else 1.0
        )
        miss_rate = sum(p in on for p in run["drawn_others"]) / len(run["drawn_others"]) if run["drawn_others"] else 0.0
        members_on = precision * run["count"]
        missed = miss_rate * run["non_members"]
        true = members_on + missed
        recall = members_on / true if true else 1.0
        error = (run["count"] - true) / true if true else 0.0
        sums["members_on"] += members_on
        sums["true"] += true
        sums["count"] += run["count"]
        print(f"{topic:40} {run['count']:>6} {precision:>9.3f} {missed:>7.1f} {recall:>7.3f} {error:>+11.2f}")
    precision = sums["members_on"] / sums["count"] if sums["count"] else 1.0
    recall = sums["members_on"] / sums["true"] if sums["true"] else 1.0
    print(f"{'all topics (members pooled)':40} {sums['count']:>6} {precision:>9.3f} {'':>7} {recall:>7.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--store", type=Path, required=True)
    s.add_argument("--per-side", type=int, default=20)
    s.add_argument("--seed", type=int, default=11)
    s.add_argument("--heldout", action="store_true", help="the held-out topics (HELDOUT_TOPICS)")
    s.add_argument("--runs", type=Path, required=True)
    s.add_argument("--blind", type=Path, required=True)
    c = sub.add_parser("score")
    c.add_argument("--runs", type=Path, required=True)
    c.add_argument("--labels", type=Path, required=True)
    args = parser.parse_args()
    sample(args) if args.command == "sample" else score(args)


if __name__ == "__main__":
    main()
