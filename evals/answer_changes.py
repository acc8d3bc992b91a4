"""Which answers a change changes: every question of the named sets through one checkout's pipeline, then two such
runs compared set by set and question by question.

    PYTHONPATH=TREE python evals/answer_changes.py dump OUT.pkl --store SEED_STORE --sets dev,test,dev2,sealed9 \
        [--depth 20] [--only QUESTIONS.txt --base BASE.pkl]
    python evals/answer_changes.py compare BEFORE.pkl AFTER.pkl      # per-set means, then each changed answer
    python evals/answer_changes.py losses RUN.pkl [--sets test,heldout]   # where one run's answers lose

Scoring (per question, then the mean): citation precision over answered questions with gold (an answered
unanswerable question is not in it: it counts in abstention), citation recall over questions with gold (0 when
refused), topic citation recall over topic questions, abstention over unanswerable ones, false abstains over
answerable ones. Extractive, hybrid, k=5, the reranker on: the defaults. Sealed sets are read only when named.
With `--only`, only the questions listed (one per line) are asked and every other row is copied from `--base` (a dump
of the same sets): for a change that can alter only the answers of questions one can list beforehand (those naming
a capitalized word, say), the same dump in a fraction of the time.

`losses` reads one dump: each question by the judge's verdict (the reason it answered or refused, `rag.judge`) and
its best shown paper's relevance, answerable or not; then why each gold paper of a topic question is not cited
(the question refused, the paper not among the reranked candidates, the question not read as a list, a facet of
the topic it lacks, its relevance under the cite bar).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from dataclasses import replace
from pathlib import Path

EVALS = Path(__file__).resolve().parent


def dump(
    out: Path, store: Path, names: list[str], depth: int | None, only: set[str] | None = None, base: dict | None = None
) -> None:
    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.evaluation.run import RETRIEVAL_DEPTH
    from rag.facets import holds_topic
    from rag.judge import judge
    from rag.pipeline import Pipeline, answer_of
    from rag.query import parse
    from rag.store import Store

    settings = replace(Settings.from_env(), store=store)
    verdicts: list = []

    def judge_recorded(query, sources, policy):  # the pipeline's judge, its verdict kept for `losses`
        verdicts.append((judge(query, sources, policy), query, max((s.relevance or 0.0 for s in sources), default=0)))
        return verdicts[-1][0]

    pipeline = Pipeline(Store(settings), get_embedder(settings), settings, judge=judge_recorded)
    policy = pipeline.policy
    team = load_questions([EVALS / "questions.jsonl"])
    split = load_split(EVALS / "split.json")
    runs = {}
    for name in names:
        if name in ("dev", "test"):
            questions = select_split(team, name, split)
        else:
            questions = load_questions([EVALS / f"{name}.jsonl"])
        rows = []
        for place, question in enumerate(questions):
            if only is not None and base is not None and question.question not in only:
                row = base[name][place]
                if row["question"] != question.question:
                    raise SystemExit(f"error: the base's {name} is another set (row {place} differs)")
                rows.append(row)
                continue
            # As `rag eval` asks: `depth` papers retrieved (RETRIEVAL_DEPTH, to score the ranking), the answer reading
            # the top k.
            verdicts.clear()
            events = list(pipeline.run(parse(question.question), stream=False, depth=depth or RETRIEVAL_DEPTH))
            answer = answer_of(events)
            retrieved = next((e.sources for e in events if e.type == "sources"), None) or []
            verdict, asked, best = verdicts[0] if verdicts else (None, None, 0.0)
            rows.append(
                {
                    "type": question.type,
                    "question": question.question,
                    "gold": list(question.gold_ids),
                    "citations": list(answer.citations),
                    "abstained": answer.abstained,
                    "reason": verdict.reason if verdict else None,
                    "defined": bool(verdict and verdict.defined),  # answered for a name it defines, whatever the bar
                    "relevance": best,
                    "list": bool(asked and asked.wants_list),
                    # Each retrieved paper: its id, relevance and whether it holds every facet of the topic.
                    "candidates": [
                        (s.id, s.relevance or 0.0, holds_topic(s.facet_shares, policy.facet_bar)) for s in retrieved
                    ],
                    "cite_bar": policy.calibration.cite_bar if policy.calibration else 0.0,
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


def losses(run: dict, names: list[str]) -> None:
    """Where one dump's answers lose: verdicts by reason and relevance, then topic questions' uncited gold papers."""
    rows = [row for name in names for row in run[name]]
    if rows and "reason" not in rows[0]:
        raise SystemExit("error: this dump has no verdicts (dump it again with this script)")
    bins = (("relevance < 0.5", 0.0), ("0.5-0.9", 0.5), ("≥ 0.9", 0.9))
    counts: dict[tuple[str, str, str], int] = {}
    for row in rows:
        kind = "answerable" if row["gold"] else "unanswerable"
        done = "refused" if row["abstained"] else "answered"
        label = next(name for name, low in reversed(bins) if row["relevance"] >= low)
        key = (f"{row['reason']} ({done})", kind, label)
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(rows)} questions of {', '.join(names)}, by the judge's verdict and the best shown paper's relevance")
    print()
    print(
        "| verdict | "
        + " | ".join(f"answerable, {b}" for b, _ in bins)
        + " | "
        + " | ".join(f"unanswerable, {b}" for b, _ in bins)
        + " |"
    )
    print("|---|" + "---|" * (2 * len(bins)))
    for verdict in sorted({key[0] for key in counts}):
        cells = [counts.get((verdict, kind, b), 0) for kind in ("answerable", "unanswerable") for b, _ in bins]
        print(f"| {verdict} | " + " | ".join(str(c) for c in cells) + " |")
    causes: dict[str, int] = {}
    for row in rows:
        if row["type"] != "topic":
            continue
        candidates = {paper: (relevance, holding) for paper, relevance, holding in row["candidates"]}
        for paper in set(row["gold"]) - set(row["citations"]):
            if row["abstained"]:
                cause = "the question refused"
            elif paper not in candidates:
                cause = "not among the reranked candidates"
            elif not row["list"]:
                cause = "the question not read as a list"
            elif not candidates[paper][1]:
                cause = "lacks a facet of the topic"
            elif candidates[paper][0] < row["cite_bar"]:
                cause = f"relevance under the cite bar ({row['cite_bar']:g})"
            else:
                cause = "other (no sentence speaks to the question, or k)"
            causes[cause] = causes.get(cause, 0) + 1
    print()
    print(f"topic questions' gold papers not cited: {sum(causes.values())}")
    for cause, count in sorted(causes.items(), key=lambda item: -item[1]):
        print(f"- {cause}: {count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--store", type=Path, required=True)
    dumping.add_argument("--sets", required=True)
    dumping.add_argument("--depth", type=int, help="papers retrieved (default: rag eval's RETRIEVAL_DEPTH)")
    dumping.add_argument("--only", type=Path, help="ask only these questions (one per line), the rest from --base")
    dumping.add_argument("--base", type=Path, help="a dump of the same sets that --only's other rows come from")
    comparing = commands.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    reading = commands.add_parser("losses")
    reading.add_argument("run", type=Path)
    reading.add_argument("--sets", help="comma-separated (default: every set of the dump)")
    args = parser.parse_args()
    if args.command == "dump":
        if (args.only is None) != (args.base is None):
            raise SystemExit("error: --only and --base go together")
        only = set(args.only.read_text(encoding="utf-8").splitlines()) if args.only else None
        base = pickle.loads(args.base.read_bytes()) if args.base else None
        if base is not None:
            for name in args.sets.split(","):
                if name not in base:
                    raise SystemExit(f"error: {args.base} has no set {name}")
        dump(args.out, args.store, args.sets.split(","), args.depth, only, base)
    elif args.command == "losses":
        run = pickle.loads(args.run.read_bytes())
        losses(run, args.sets.split(",") if args.sets else list(run))
    else:
        compare(pickle.loads(args.before.read_bytes()), pickle.loads(args.after.read_bytes()))


if __name__ == "__main__":
    main()
