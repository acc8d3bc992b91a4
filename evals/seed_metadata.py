"""The seeds' sidecar, seeds/metadata.json: each seed's OpenReview forum id, primary area and decision, found by
matching the seed abstracts to the ICLR 2025/2026 corpus.

    python evals/seed_metadata.py ../shared/corpus/iclr-2025-2026.jsonl.gz            # writes seeds/metadata.json
    python evals/seed_metadata.py ../shared/corpus/iclr-2025-2026.jsonl.gz --check    # exit 1 if it differs

A seed matches the corpus paper of its year whose abstract is the same text (spaces aside); a seed with none (its
authors reworded the abstract after the seed list was taken: one, 000-11) matches the paper of its year whose
abstract shares the most words with it, which must share at least MIN_OVERLAP of them (Jaccard over lowercased
words). Each entry records how it matched and the seed abstract's digest (`rag.corpus.abstract_digest`): an ingest
applies an entry only to the abstract it was matched to. Titles are left out on purpose: what the relevance judge
reads would change with them. rag.corpus reads this file when it reads a seed list of the same folder.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag.corpus import SEED_METADATA, abstract_digest, load_papers  # noqa: E402

MIN_OVERLAP = 0.8
ABOUT = (
    "Each seed's OpenReview forum id, primary area and decision as the ICLR 2025/2026 corpus gives them, matched by "
    "abstract (evals/seed_metadata.py). rag.corpus applies an entry when it reads a seed list of this folder, to the "
    "abstract whose digest it records; the link is the OpenReview forum page of the id."
)


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def build(corpus: Path, seeds: Path) -> dict:
    by_text: dict[tuple[int, str], list[dict]] = defaultdict(list)
    by_year: dict[int, list[dict]] = defaultdict(list)
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            by_text[(record["year"], " ".join(record["abstract"].split()))].append(record)
            by_year[record["year"]].append(record)
    papers: dict[str, dict] = {}
    for seed in load_papers([seeds]):
        found = by_text.get((seed.year, seed.abstract), [])
        if len(found) > 1:
            raise SystemExit(f"{seed.id}: {len(found)} corpus papers have this abstract: {[r['id'] for r in found]}")
        if found:
            record, how = found[0], "same abstract"
        else:
            mine = words(seed.abstract)
            record = max(by_year[seed.year], key=lambda r: overlap(mine, words(r["abstract"])))
            share = overlap(mine, words(record["abstract"]))
            if share < MIN_OVERLAP:
                raise SystemExit(f"{seed.id}: no corpus paper of {seed.year} shares {MIN_OVERLAP:.0%} of its words")
            how = f"closest abstract ({share:.2f} of words shared)"
        papers[seed.id] = {
            "openreview_id": record["id"],
            "primary_area": record.get("primary_area"),
            "status": record.get("status"),
            "abstract_sha256": abstract_digest(seed.abstract),
            "matched": how,
        }
    return {"about": ABOUT, "papers": papers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the ICLR 2025/2026 corpus (.jsonl.gz)")
    parser.add_argument("--seeds", type=Path, default=REPO / "seeds", help="the seed lists' folder")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args()
    text = json.dumps(build(args.corpus, args.seeds), indent=1, ensure_ascii=False) + "\n"
    target = args.seeds / SEED_METADATA
    if args.check:
        same = target.is_file() and target.read_text(encoding="utf-8") == text
        print(f"{target}: {'up to date' if same else 'differs from what the corpus gives'}")
        raise SystemExit(0 if same else 1)
    target.write_text(text, encoding="utf-8")
    matched = json.loads(text)["papers"]
    closest = [pid for pid, entry in matched.items() if entry["matched"] != "same abstract"]
    print(f"wrote {target}: {len(matched)} seeds, {len(closest)} by the closest abstract ({', '.join(closest)})")


if __name__ == "__main__":
    main()
