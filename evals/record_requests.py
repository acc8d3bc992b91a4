"""Questions asking a seed paper's record, its BibTeX or its link, or not: is the field read, and of the right paper?

    python evals/record_requests.py --store SEED_STORE

evals/record_requests.jsonl: 60 questions over the seed papers written by a helper shown no code (12 BibTeX or
how to cite, 12 a link or PDF, 6 authors, 6 code, 6 decision; 12 about the paper's content and 6 topic lists, which
must read no field), each naming one paper by a coined name or a short description. Each is asked through the
whole path (`Papers.ask`, extractive). Read right: a field question reads its kind (`Query.asks_record`) and
answers or refuses about its paper; a content or list question reads no field.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parent / "record_requests.jsonl"
FIELDS = ("bibtex", "link", "authors", "code", "decision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True)
    parser.add_argument("--questions", default=str(QUESTIONS), help="evals/record_requests2.jsonl: 70 more, read once")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()

    from rag import Papers

    papers = Papers(store=args.store)
    right: dict[str, list[bool]] = defaultdict(list)
    for line in Path(args.questions).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        answer = papers.ask(row["question"])
        field = answer.query.asks_record
        wanted = row["kind"] if row["kind"] in FIELDS else None
        about = answer.citations[0] if answer.citations else (answer.sources[0].id if answer.sources else None)
        ok = field == wanted and (wanted is None or about == row["paper"])
        right[row["kind"]].append(ok)
        if args.show_misses and not ok:
            print(f"  miss ({row['kind']} {row['paper']}): read {field} of {about}: {row['question']}")
    kinds = [*FIELDS, "content", "list"]
    every = [ok for kind in kinds for ok in right[kind]]
    print("| " + " | ".join(kinds) + " | all |")
    print("|" + "---|" * (len(kinds) + 1))
    cells = [f"{sum(right[k]) / len(right[k]):.2f} ({len(right[k])})" if right[k] else "–" for k in kinds]
    print("| " + " | ".join(cells) + f" | {sum(every) / len(every):.3f} |")


if __name__ == "__main__":
    main()
