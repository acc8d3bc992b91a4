"""Every answer the question sets get, written down so two versions of the code can be compared per question.

    python evals/snapshot.py --store /tmp/seeds --out /tmp/after.json
    python evals/snapshot.py --compare /tmp/before.json /tmp/after.json

For each question of evals/questions.jsonl, heldout.jsonl and dev2.jsonl (with `--phrasings`, also each phrasing of
evals/phrasings_*.txt over its eight topics): the citations, whether it abstained, the answer text and the ids of
the sources shown (extractive backend, the default settings), whole (`Papers.ask`) and streamed
(`Papers.stream`, the text pieces joined). Timings are left out: they differ between any two runs. `--compare`
prints each question whose record differs and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SETS = ("questions.jsonl", "heldout.jsonl", "dev2.jsonl")


def questions(phrasings: bool = False) -> dict[str, str]:
    """Every question of the question sets (and with `phrasings`, of the phrasing files) by a stable key."""
    from evals.phrasings import TOPICS

    found: dict[str, str] = {}
    for name in SETS:
        for line in (REPO / "evals" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                found[f"{name}:{item['qid']}"] = item["question"]
    for path in sorted((REPO / "evals").glob("phrasings_*.txt")) if phrasings else ():
        for n, template in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if template.strip():
                for topic in TOPICS:
                    found[f"{path.name}:{n}:{topic}"] = template.replace("{topic}", topic)
    return found


def record(papers, question: str) -> dict:
    answer = papers.ask(question)
    streamed = [event for event in papers.stream(question)]
    final = next(e.answer for e in streamed if e.type == "answer")
    return {
        "question": question,
        "citations": answer.citations,
        "abstained": answer.abstained,
        "answer": answer.answer,
        "sources": [s.id for s in answer.sources],
        "streamed_text": "".join(e.text for e in streamed if e.type == "text"),
        "streamed_citations": final.citations,
        "search": [s.id for s in papers.search(question)],
    }


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    differ = 0
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            differ += 1
            a, b = old.get(key) or {}, new.get(key) or {}
            fields = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
            print(f"{key}: {', '.join(fields)}")
            for f in fields:
                print(f"  before {f}: {a.get(f)!r}\n  after  {f}: {b.get(f)!r}")
    print(f"{differ} of {len(set(old) | set(new))} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--phrasings", action="store_true", help="also every phrasing of evals/phrasings_*.txt")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.store or not args.out:
        parser.error("--store and --out are needed (or --compare BEFORE AFTER)")
    from rag import Papers

    papers = Papers(store=args.store)
    results = {key: record(papers, question) for key, question in questions(args.phrasings).items()}
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"{len(results)} questions written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
