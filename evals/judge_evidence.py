"""The rules as evidence for one model: fit a logistic layer over `rag.judge.evidence_rows` on the dev sets and
simulate its verdicts on every set but the sealed one. A measurement for issue 28's judge; nothing ships from it.

    python evals/judge_evidence.py --store SEED_STORE

Per question, the 20 reranked candidates (the real pipeline's `retrieve`) and their evidence rows; a paper is a
positive when it is one of the question's gold papers. Fitted on dev (the dev part of questions.jsonl, dev2,
dev3) only. The two bars (answer when the best candidate reaches `answer_bar`; list every candidate at or above
`member_bar`) are chosen on dev by one utility per question: citation F1 of the listed papers for an answerable
question (0 when refused), 1 for refusing an unanswerable one. Test and held-out are reported, never fitted.
Simulated: the answer is the listed papers, before the evidence selection's own filters.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GRID = [round(0.05 * i, 2) for i in range(1, 20)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="a store holding the seed papers")
    args = parser.parse_args()

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rag.config import Settings
    from rag.embedding import get_embedder
    from rag.evaluation.questions import load_questions, load_split, select_split
    from rag.judge import evidence_rows
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.store import Store

    settings = replace(Settings.from_env(), store=Path(args.store))
    pipeline = Pipeline(Store(settings), get_embedder(settings), settings)
    split, team = load_split(REPO / "evals" / "split.json"), load_questions([REPO / "evals" / "questions.jsonl"])
    sets = {
        "dev": select_split(team, "dev", split),
        "dev2": load_questions([REPO / "evals" / "dev2.jsonl"]),
        "dev3": load_questions([REPO / "evals" / "dev3.jsonl"]),
        "test": select_split(team, "test", split),
        "heldout": load_questions([REPO / "evals" / "heldout.jsonl"]),
    }
    cases = {name: [] for name in sets}
    for name, questions in sets.items():
        for q in questions:
            found = pipeline.retrieve(parse(q.question), k=20)
            rows = evidence_rows(found.query, found.sources, pipeline.policy)
            if rows:
                cases[name].append((q, [s.id for s in found.sources], np.array(rows)))
    dev = [c for name in ("dev", "dev2", "dev3") for c in cases[name]]
    x = np.vstack([rows for _, _, rows in dev])
    y = np.array([int(i in q.gold_ids) for q, ids, _ in dev for i in ids])
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000)).fit(x, y)

    def simulate(chosen, answer_bar, member_bar):
        utility, refused, kept_out, precision, recall, topic_recall = [], [], [], [], [], []
        for q, ids, rows in chosen:
            p = model.predict_proba(rows)[:, 1]
            answers = p.max() >= answer_bar
            best = int(np.argmax(p))
            listed = {i for j, (i, pj) in enumerate(zip(ids, p, strict=True)) if pj >= member_bar or j == best}
            gold = set(q.gold_ids)
            if not gold:
                kept_out.append(not answers)
                utility.append(float(not answers))
                continue
            refused.append(not answers)
            if not answers:
                utility.append(0.0)
                continue
            pr, rc = len(listed & gold) / len(listed), len(listed & gold) / len(gold)
            precision.append(pr)
            recall.append(rc)
            utility.append(2 * pr * rc / (pr + rc) if pr + rc else 0.0)
            if q.type in ("topic", "venue"):
                topic_recall.append(rc)
        mean = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
        return [mean(v) for v in (utility, refused, kept_out, precision, recall, topic_recall)]

    _, answer_bar, member_bar = max((simulate(dev, a, m)[0], a, m) for a in GRID for m in GRID)
    print(f"bars chosen on dev: answer {answer_bar:.2f}, member {member_bar:.2f}")
    print(
        "| set | n | utility | false abstains | abstention accuracy | citation precision | citation recall | "
        "topic citation recall |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, chosen in cases.items():
        row = simulate(chosen, answer_bar, member_bar)
        print(f"| {name} | {len(chosen)} | " + " | ".join(f"{v:.3f}" for v in row) + " |")


if __name__ == "__main__":
    main()
