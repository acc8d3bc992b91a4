"""How often the field names a topic with each word: the words of the corpus's author keywords, counted.

    python -m train.keyword_uses --corpus ../shared/corpus --out rag/models/terms

Writes `keyword_uses.json.gz` and `KEYWORD_USES.md`. Over every author keyword on 2 papers or more, each counting
its papers: `uses`, each word's (as `rag.terms.keyword_form` reads it: lowercased, the plural folded); `pairs`,
each two words that follow each other in a keyword ("kolmogorov arnold", "skill discovery"). rag.terms reads
them to cut a question's topic out of the words around it (`topic_words`): "unlearning" is used 200 times,
"thesis", "asap", "pls", "preferably" or "advisor" never. Word statistics, like the store's BM25 index: every
corpus paper with keywords counts (the 2026 ones; 2025's have none).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import re
from collections import Counter
from pathlib import Path

from train.pairs import corpus_files, read_corpus


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--min-papers", type=int, default=2, help="keywords on fewer papers are left out")
    args = parser.parse_args(argv)

    from rag.terms import keyword_forms

    files = corpus_files(args.corpus)
    records, _ = read_corpus(files)
    papers: Counter[str] = Counter()
    for record in records:
        papers.update({re.sub(r"\s+", " ", k.strip().lower()) for k in record.keywords if k.strip()})
    uses: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for keyword, n in papers.items():
        if n < args.min_papers:
            continue
        words = keyword_forms(keyword)
        for word in set(words):
            uses[word] += n
        for pair in {f"{a} {b}" for a, b in itertools.pairwise(words)}:
            pairs[pair] += n
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "keyword_uses.json.gz"
    data = {"uses": dict(sorted(uses.items())), "pairs": dict(sorted(pairs.items()))}
    payload = json.dumps(data, separators=(",", ":")).encode()
    with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime 0: the same corpus gives the same bytes
        f.write(payload)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    sources = ", ".join(f"{f.name} {hashlib.sha256(f.read_bytes()).hexdigest()[:12]}…" for f in files)
    kept = sum(1 for n in papers.values() if n >= args.min_papers)
    (args.out / "KEYWORD_USES.md").write_text(
        "# rag-papers keyword word uses\n\n"
        f"- **What**: for {len(uses)} words (lowercased, the plural folded, the lexical index's stopwords left\n"
        "  out), how many papers carry an author keyword holding the word; for\n"
        f"  {len(pairs)} pairs of words that follow each other in a keyword, how many papers carry one; over the\n"
        f"  {kept} keywords on {args.min_papers} papers or more.\n"
        f"- **Data**: the author keywords of {len(records)} ICLR 2025+2026 papers ({sources}).\n"
        f"- **Command**: `python -m train.keyword_uses --corpus {args.corpus} --out {args.out}`.\n"
        f"- **sha256**: `keyword_uses.json.gz` {digest}.\n"
        "- **Read by**: rag.terms.topic_words (the topic a facet is cut from).\n",
        encoding="utf-8",
    )
    print(f"{len(uses)} words and {len(pairs)} pairs from {kept} keywords -> {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
