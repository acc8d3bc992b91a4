"""Related papers judged by a reader: `rag similar` against a plain MiniLM nearest-neighbour search, precision@5.

    python evals/similar_judge.py sample --store STORE --n 30 --seed 7 --runs R.json --blind B.jsonl
    (a helper shown no code labels B.jsonl: one line {"query": ID, "related": [CID, ...]} per query paper)
    python evals/similar_judge.py score --runs R.json --labels L.jsonl

`sample` picks `n` papers of the store at random (seeded), finds each one's 5 closest papers both ways, and writes
the runs (which system found which paper) and a blind file: per query paper, the union of both systems' papers
shuffled under neutral ids (c1, c2, ...), with titles and abstracts, nothing saying which system found them.
The baseline is what a plain nearest-neighbour search does: the title and abstract as one MiniLM vector (the model
reads its first 256 tokens), the store's nearest chunks, papers by their best chunk. `score` gives each system's
precision@5: the share of its 5 papers the reader marked related.
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

K = 5


def baseline(store, embedder, paper, k: int) -> list[str]:
    """The k papers nearest the paper's whole text as one vector (itself left out)."""
    vector = embedder.embed([f"{paper.title or ''}. {paper.abstract}"])[0]
    ranked: list[str] = []
    for hit in store.query(vector, 20 * k, None, details=False):
        if hit.paper_id != paper.id and hit.paper_id not in ranked:
            ranked.append(hit.paper_id)
    return ranked[:k]


def sample(args: argparse.Namespace) -> None:
    from rag.api import Papers
    from rag.lexical import get_index
    from rag.similar import similar

    papers = Papers(store=args.store)
    pipeline = papers.pipeline
    with pipeline.store.reading():
        ids = sorted(set(get_index(pipeline.store).paper_ids))
    rng = random.Random(args.seed)
    chosen = rng.sample(ids, args.n)
    runs, blind = {}, []
    for paper_id in chosen:
        paper, ours = similar(pipeline.store, pipeline.embedder, papers.settings, paper_id=paper_id, k=K)
        assert paper is not None
        runs[paper_id] = {
            "ours": [r.source.id for r in ours],
            "baseline": baseline(pipeline.store, pipeline.embedder, paper, K),
        }
        union = list(dict.fromkeys(runs[paper_id]["ours"] + runs[paper_id]["baseline"]))
        rng.shuffle(union)
        found = pipeline.store.get_papers(union)
        cids = {pid: f"c{i + 1}" for i, pid in enumerate(union)}
        runs[paper_id]["cids"] = cids
        blind.append(
            {
                "query": paper_id,
                "title": paper.title,
                "abstract": paper.abstract,
                "candidates": [
                    {"cid": cids[pid], "title": found[pid].title, "abstract": found[pid].abstract} for pid in union
                ],
            }
        )
    Path(args.runs).write_text(json.dumps(runs, indent=1))
    Path(args.blind).write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in blind))
    print(f"{len(chosen)} query papers, {sum(len(b['candidates']) for b in blind)} candidates to judge")


def score(args: argparse.Namespace) -> None:
    runs = json.loads(Path(args.runs).read_text())
    labels = {row["query"]: set(row["related"]) for row in map(json.loads, Path(args.labels).read_text().splitlines())}
    for system in ("ours", "baseline"):
        precisions = []
        for query, run in runs.items():
            related = labels[query]
            precisions.append(sum(run["cids"][pid] in related for pid in run[system]) / K)
        print(f"{system:9} precision@{K} {sum(precisions) / len(precisions):.3f} over {len(precisions)} papers")
    same = sum(len(set(r["ours"]) & set(r["baseline"])) for r in runs.values()) / (K * len(runs))
    print(f"shared between the two: {same:.3f} of each top {K}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--store", type=Path, required=True)
    s.add_argument("--n", type=int, default=30)
    s.add_argument("--seed", type=int, default=7)
    s.add_argument("--runs", type=Path, required=True)
    s.add_argument("--blind", type=Path, required=True)
    c = sub.add_parser("score")
    c.add_argument("--runs", type=Path, required=True)
    c.add_argument("--labels", type=Path, required=True)
    args = parser.parse_args()
    sample(args) if args.command == "sample" else score(args)


if __name__ == "__main__":
    main()
