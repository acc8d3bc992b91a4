"""How much of a question's other words the paper it names writes, answerable against unanswerable questions.

    python evals/unsaid_share.py --store SEED_STORE [--sets dev,test,dev2,…] [--bars 0.25,0.3,0.35,0.4,0.45] [--named]

Every question of the sets is asked with the unsaid rule off (`Policy.unsaid_share` 0; extractive, hybrid, k=5, the
reranker on). For those the judge answers and that name a paper shown (`rag.judge.words_beside_names`: not a list,
a definition, a count or a record question; two or more other words), the share of those words the named paper
writes. Prints, for each bar, how many of them the rule would refuse, unanswerable and answerable, then the
questions under the highest bar with their share and the words their paper lacks. `Policy.unsaid_share` is chosen
on the spent sets with this; the sets it reports on are named apart.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

EVALS = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--sets", default="dev,test,dev2,dev3,dev4,heldout")
    parser.add_argument("--bars", default="0.25,0.3,0.35,0.4,0.45")
    parser.add_argument("--named", action="store_true", help="ask only questions writing a coined name (faster)")
    args = parser.parse_args()

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.judge import judge, words_beside_names
    from rag.pipeline import Pipeline
    from rag.policy import Policy
    from rag.query import parse
    from rag.store import Store

    settings = replace(Settings.from_env(), store=args.store)
    policy = replace(Policy.from_settings(settings), unsaid_share=0.0)
    seen: list = []

    def recorded(query, sources, policy):  # the verdict with the rule off, and what the rule would read
        verdict = judge(query, sources, policy)
        seen.append((verdict, words_beside_names(query, sources, policy.calibration.detail_bar, policy.paper_name_df)))
        return verdict

    pipeline = Pipeline(Store(settings), get_embedder(settings), settings, policy=policy, judge=recorded)
    split = load_split(EVALS / "split.json")
    team = load_questions([EVALS / "questions.jsonl"])
    rows = []  # (share, answerable, question, lacking words)
    for name in args.sets.split(","):
        in_team = name in ("dev", "test")
        questions = select_split(team, name, split) if in_team else load_questions([EVALS / f"{name}.jsonl"])
        for question in questions:
            if args.named and not parse(question.question).specifics:
                continue  # naming no coined name, the rule cannot read it
            seen.clear()
            list(pipeline.run(parse(question.question), stream=False))
            if not seen or not seen[0][0].answers or seen[0][1] is None:
                continue
            _, _, others, lacking = seen[0][1]
            rows.append((1 - len(lacking) / len(others), bool(question.gold_ids), question.question, sorted(lacking)))
    answerable = sum(r[1] for r in rows)
    print(f"{len(rows)} answered questions naming their paper: {answerable} answerable, {len(rows) - answerable} not")
    bars = [float(b) for b in args.bars.split(",")]
    for bar in bars:
        refused = [r for r in rows if r[0] < bar]
        print(
            f"  share < {bar:g}: refuses {sum(not r[1] for r in refused)} unanswerable, "
            f"{sum(r[1] for r in refused)} answerable"
        )
    for share, is_answerable, text, lacking in sorted(r for r in rows if r[0] < max(bars)):
        print(f"  {share:.2f} {'answerable  ' if is_answerable else 'unanswerable'} {text[:90]}  lacks {lacking}")


if __name__ == "__main__":
    main()
