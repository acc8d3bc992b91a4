"""Questions naming their paper by its title, asking its record (decision, authors, code) or not: is the field read?

    python evals/record_titles.py [--title-words 0,3,4,5,6]

evals/record_title_papers.jsonl holds 80 records drawn at random from the ICLR 2025/2026 corpus (seed 20261206);
evals/record_title_questions.jsonl, 180 questions about them written by a helper shown no code (40 decision, 25
authors, 25 code, 60 about the paper's content, 30 lists whose topic borrows a title's words), each naming a paper
by its title. The papers are ingested into a temporary store; each question is retrieved once, then read with
each `Policy.record_title_words`. A question is read right when the field read is its kind's (None for content
and lists) and, for a field, the paper it is asked of is its paper. Papers split by id into dev (the choice) and
held-out (reported), half each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

EVALS = Path(__file__).resolve().parent
PAPERS = EVALS / "record_title_papers.jsonl"
QUESTIONS = EVALS / "record_title_questions.jsonl"


def part(paper_id: str) -> str:
    return "dev" if hashlib.sha256(paper_id.encode()).digest()[0] % 2 == 0 else "held-out"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--title-words", default="0,3,4,5,6")
    args = parser.parse_args()
    choices = [int(n) for n in args.title_words.split(",")]

    from rag.config import Settings
    from rag.corpus import load_papers
    from rag.embedding import get_embedder
    from rag.ingest import write
    from rag.pipeline import Pipeline
    from rag.query import parse
    from rag.record import asked_paper
    from rag.store import Store

    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        settings = replace(Settings.from_env(), store=Path(folder) / "store")
        embedder = get_embedder(settings)
        write(Store(settings), load_papers([PAPERS]), embedder)
        pipeline = Pipeline(Store(settings), embedder, settings)
        right: dict[tuple[int, str, str], list[bool]] = defaultdict(list)
        for row in questions:
            found = pipeline.retrieve(parse(row["question"]), k=settings.k)
            wanted = row["kind"] if row["kind"] in ("decision", "authors", "code") else None
            for words in choices:
                policy = replace(pipeline.policy, record_title_words=words)
                query = pipeline.asks_of_record(found.query, found.sources, settings.k, policy)
                paper = asked_paper(query.specifics, found.sources[: settings.k])
                ok = query.asks_record == wanted and (
                    wanted is None or (paper is not None and paper.id == row["paper"])
                )
                right[(words, part(row["paper"]), row["kind"])].append(ok)
    kinds = ("decision", "authors", "code", "content", "list")
    for section in ("dev", "held-out"):
        print(f"\n{section}: share read right, by kind (n)")
        print("| title words | " + " | ".join(kinds) + " | all |")
        print("|---|" + "---|" * (len(kinds) + 1))
        for words in choices:
            cells = [right[(words, section, kind)] for kind in kinds]
            every = [ok for cell in cells for ok in cell]
            shown = " | ".join(f"{sum(c) / len(c):.2f} ({len(c)})" if c else "–" for c in cells)
            print(f"| {words or 'none'} | {shown} | {sum(every) / len(every):.3f} |")


if __name__ == "__main__":
    main()
